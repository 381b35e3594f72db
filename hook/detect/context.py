"""The detection context: the shell interpreter (hook/shell/interpreter.py) plus what merge detection
keeps while one tool call runs: the merges found, checked-out branches, gh aliases, the repository
of each directory. Each expanded command goes to the dispatcher it is given (hook/detect/dispatch.py),
so the detectors below it can take a `Ctx` without importing the dispatcher back.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.detect.prefilter import might_merge
from hook.shell.expansion import Arg
from hook.shell.interpreter import Shell
from hook.shell.syntax import DYN, Command, Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    Dispatch = Callable[["Ctx", list[Arg], Command, dict[str, str | None]], None]

_KEEPS_REFS = frozenset({"cd", "pushd", "popd", "pwd", "echo", "printf", "true", "false", ":", "ls", "cat", "test",
                         "[", "sleep", "export", "unset", "set", "git status", "git log", "git diff", "git show",
                         "git fetch", "git push", "git rev-parse", "git ls-remote", "git describe"})
"""Commands that move no branch of the local clone: after only these, what a ``git push`` sends is what the clone
has now (the guard's "writes nothing new", `hook.freezes`). Anything else — ``git commit``, ``npm version``, a
script — may have made the commit it pushes."""

_CURRENT_BRANCH_COMMANDS = (
    ("git", "branch", "--show-current"),
    ("git", "rev-parse", "--abbrev-ref", "HEAD"),
    ("git", "symbolic-ref", "--short", "HEAD"),
    ("git", "symbolic-ref", "--short", "-q", "HEAD"),
)


class Ctx(Shell):
    """Shell state while the commands of one tool call run, plus the merges found so far."""

    def __init__(self, cwd: str | None, env: Mapping[str, str], powershell: bool, dispatch: Dispatch) -> None:
        super().__init__(cwd, env, powershell)
        self.dispatch = dispatch
        self.branches: dict[str | None, str | None] = {}  # cwd -> branch checked out by this command
        self.merged: dict[str, list[str]] = {}  # local branch -> branches merged into it here
        self.gh_aliases: dict[str, str] = {}
        self.git_aliases: dict[str, str] = {}  # alias.NAME set by an earlier `git config` of this command
        self.merges: list[Merge] = []
        self.created_pr = False  # `gh pr create` ran: a later selector-less merge targets a new PR
        self.aliases: dict[str, str] = {}  # `alias NAME=VALUE` run earlier in this command
        self._expanding: set[str] = set()  # aliases being expanded (bash does not expand one in itself)
        self.push_config_changed = False  # a `git config` / `branch -u` / `push -u` ran: a bare push is unknown
        self.upstream_changed = False  # a branch was created here: its upstream is unknown
        self.refs_may_move = False  # a command that may move a local branch ran: a push's commits are not known
        self.traps: list[str] = []  # `trap ACTION …` actions, read again when the command ends
        self.tool_functions: set[str] = set()  # functions a trusted set-up program defined (shellenv.py)
        self.hinting = 0  # depth of hints read from what an opaque program is handed (opaque.py)
        self.config_edits: list[tuple[str, str, str, str, str, str]] = []  # git remote/config writes (remotes.py)
        self.plants: dict[str, tuple[str, bool]] = {}  # path -> (text this command wrote there, exact?): planted.py
        self._plant_prior: dict[str, str] = {}  # what a path held before the command writing it now
        self.hooks_paths: set[str] = set()  # core.hooksPath set by this command (git config, -c)
        self.set_up: list[tuple[str, str]] = []  # (where, shell text) a later program runs: planted.py
        self.preloads: set[str] = set()  # LD_PRELOAD / LD_AUDIT libraries a command ran with
        self.github_hosts: frozenset[str] | None = None  # GitHub's hosts for this machine (hosts.py), read once
        self.powershell_hosts = 0  # PowerShell hosts (`pwsh -Command …`) whose text is being read (sapling.py)
        self._marks: list[tuple[dict[str | None, str | None], dict[str, str], dict[str, str], dict[str, str],
                                int]] = []
        self._repo_cache: dict[str | None, tuple[str | None, str] | None] = {}
        self._branch_cache: dict[str | None, str | None] = {}

    # --- the interpreter's hooks ---------------------------------------------------------------
    def simple_command(self, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
        if not self.refs_may_move and not _keeps_refs(args):
            self.refs_may_move = True
        name = cmd.words[0].raw if cmd.words and self.aliases else None
        if name is None or name not in self.aliases or name in self._expanding:
            self.dispatch(self, args, cmd, overlay)
            return
        # An alias applies only with expand_aliases on (unknown in the agent's shell) and from the line
        # after the one defining it: both readings run, and what they find is undetermined.
        mark = self.mark()
        self.dispatch(self, args, cmd, overlay)
        if self.aliases[name][-1:] in (" ", "\t"):  # the next word is alias-expanded too: not followed
            self.runtime(f"alias {name} ends in a blank: the word after it may be an alias too")
        self._expanding.add(name)
        try:
            self.run_text(" ".join([self.aliases[name], *(w.raw for w in cmd.words[1:])]), powershell=False)
        finally:
            self._expanding.discard(name)
        self.uncertain(mark, f"alias {name}: expanded or not, as the shell's options decide")

    def wrote(self, key: str, append: bool) -> None:
        prior = self.plants.get(key, ("", True))[0] if append else ""
        self._plant_prior[key] = prior
        self.plants[key] = (prior + DYN, True)  # the program's output, unless it is one the reader knows

    def planted(self, key: str, text: str | None, *, append: bool, exact: bool = True) -> None:
        """``key`` now holds ``text`` (None: unknown) from this command: ``append`` after what it held before the
        command writing it; ``exact``: the text itself (else text it may insert, judged by its shape alone)."""
        prior = self._plant_prior.get(key, self.plants.get(key, ("", True))[0]) if append else ""
        self.plants[key] = (prior + (DYN if text is None else text), exact)

    def call(self, name: str, args: list[Arg], overlay: Mapping[str, str | None] | None = None) -> None:
        if name in self.tool_functions:  # `pyenv shell 3.12`: the tool's own function sets variables
            self.poison()
            return
        super().call(name, args, overlay)

    def unparsed(self, text: str, why: str) -> None:
        if might_merge(text):
            self.add(Merge(via="unparsed", undetermined=True, detail=why))

    def substitution(self, inner: list[Event]) -> str | None:
        if _is_current_branch(inner):
            return self.branch() or DYN
        where = _git_path(self, inner)
        if where is not None:
            return where
        return self.substitution_output(inner)

    def mark(self) -> int:
        self._marks.append((dict(self.branches), dict(self.files), dict(self.gh_aliases), dict(self.git_aliases),
                            len(self.config_edits)))
        return len(self.merges)

    def uncertain(self, mark: int, why: str) -> None:
        """What ran since `mark` may not have run: its merges are undetermined, and what it changed of
        the detection state is unknown (a branch checked out, a file written) or forgotten (an alias)."""
        self.merges[mark:] = [m.replace(undetermined=True, detail=m.detail or why) for m in self.merges[mark:]]
        branches, files, gh_aliases, git_aliases, edits = self._marks.pop()
        if len(self.config_edits) > edits:  # a remote or URL rewrite set there may not be set: unknown
            self.config_edits.append(("?", "unknown", "remote", "", "", ""))
        for key in set(branches) | set(self.branches):
            if branches.get(key, DYN + "?") != self.branches.get(key, DYN + "?"):
                self.branches[key] = DYN
        for path in set(files) | set(self.files):
            if files.get(path) != self.files.get(path):
                self.files[path] = DYN  # run, it is text only the run knows
        for table, saved in ((self.gh_aliases, gh_aliases), (self.git_aliases, git_aliases)):
            for name in set(table) | set(saved):
                if table.get(name) != saved.get(name):
                    table.pop(name, None)  # an unknown alias: read as one whose expansion is not known

    def save_scope(self) -> object:
        return dict(self.branches), len(self.config_edits)

    def restore_scope(self, saved: object) -> None:
        if isinstance(saved, tuple):  # a subshell's checkout is its own; a remote it configured stays configured
            self.branches = saved[0]

    def join_scope(self, saved: object) -> None:
        if isinstance(saved, tuple):
            branches, edits = saved
            for key in set(branches) | set(self.branches):
                if branches.get(key, DYN + "?") != self.branches.get(key, DYN + "?"):
                    self.branches[key] = DYN
            if len(self.config_edits) > edits:  # a remote set there may not be set
                self.config_edits.append(("?", "unknown", "remote", "", "", ""))

    # --- what detectors ask --------------------------------------------------------------------
    def repo(self, cwd: str | None = None) -> tuple[str | None, str] | None:
        """``(host, owner/name)`` of the git remote of ``cwd`` (default: the current directory)."""
        where = cwd if cwd is not None else self.cwd
        if self.config_edits:  # a remote added, renamed or rewritten earlier in this command (remotes.py)
            from hook.detect.remotes import repo_of

            return repo_of(self, where)
        if where not in self._repo_cache:
            from hook.detect import gitrepo  # loaded when a detector asks (a non-merge read does not)

            self._repo_cache[where] = gitrepo.resolve_remote(where, {})
        return self._repo_cache[where]

    def branch(self, cwd: str | None = None) -> str | None:
        """The branch checked out in ``cwd`` (DYN inside when a ``git checkout $X`` ran)."""
        where = cwd if cwd is not None else self.cwd
        if where in self.branches:
            return self.branches[where]
        if where not in self._branch_cache:
            from hook.detect import gitrepo

            self._branch_cache[where] = gitrepo.current_branch(where)
        return self._branch_cache[where]

    def gh_repo(self, overlay: Mapping[str, str | None], repo_flag: str | None,
                ) -> tuple[str | None, str | None, bool]:
        """``(host, owner/name, unknown)`` as gh picks it: ``-R``, then ``GH_REPO``, then the git remote."""
        given = repo_flag if repo_flag is not None else self.getenv("GH_REPO", overlay)
        if given:
            from hook.detect import gitrepo

            parsed = None if DYN in given else gitrepo.parse_repo_arg(given)
            return (parsed[0], parsed[1], False) if parsed else (None, None, True)
        found = self.repo()
        return (found[0], found[1], False) if found else (None, None, True)

    def runtime(self, why: str, *, via: str = "runtime") -> None:
        """A program whose text only the run produces (``curl … | bash``, ``$CMD``, ``eval "$(…)"``):
        it may merge anything, so the answer is undetermined — in the repository of the current
        directory, where gh would look first (spec ``on_undetermined``; unknown repository: ``on_unknown``)."""
        found = self.repo() if self.cwd is not None else None
        self.add(Merge(via=via, repo=found[1] if found else None, host=found[0] if found else None,
                       undetermined=True, detail=why))

    def add(self, merge: Merge) -> None:
        if merge not in self.merges:
            self.merges.append(merge)


def _keeps_refs(args: list[Arg]) -> bool:
    """Whether a command is one of `_KEEPS_REFS` (git's global options skipped, so ``git -C d push`` is one)."""
    words = [a[0] for a in args]
    if words[:1] != ["git"]:
        return bool(words) and words[0] in _KEEPS_REFS
    at = 1
    while at < len(words) and words[at].startswith("-"):
        at += 2 if words[at] in ("-C", "-c") else 1
    return at < len(words) and f"git {words[at]}" in _KEEPS_REFS


def _is_current_branch(inner: list[Event]) -> bool:
    commands = [e for e in inner if isinstance(e, Command)]
    if len(commands) != 1:
        return False
    words = tuple(w.literal() for w in commands[0].words)
    return words in _CURRENT_BRANCH_COMMANDS


def _git_path(ctx: Ctx, inner: list[Event]) -> str | None:
    """``$(git rev-parse --git-path hooks)``, ``--git-dir``, ``--git-common-dir``, ``--show-toplevel``: where git
    keeps what it runs (a hook written there is judged: hook/detect/planted.py). None: another substitution."""
    commands = [e for e in inner if isinstance(e, Command)]
    words = tuple(w.literal() for w in commands[0].words) if len(commands) == 1 else ()
    if words[:2] != ("git", "rev-parse") or len(words) not in (3, 4) or ctx.cwd is None:
        return None
    from hook.detect import gitrepo
    from hook.shell.paths import join

    dirs = gitrepo.git_dirs(ctx.cwd)
    if dirs is None:
        return DYN
    if words[2:] == ("--git-path", "hooks"):
        return join(dirs[1], "hooks")
    if words[2:] in (("--git-dir",), ("--absolute-git-dir",)):
        return dirs[0]
    if words[2:] == ("--git-common-dir",):
        return dirs[1]
    return None
