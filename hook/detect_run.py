"""Walks parsed shell commands in order, keeping what a shell would know: variables, exports, the
working directory, checked-out branches, files written earlier in the same command. Each command's
words are expanded here (unknown pieces become `DYN`) before hook/detect_dispatch.py reads them.
"""

from __future__ import annotations

import os

from hook import detect_dispatch, gitrepo
from hook.model import Merge
from hook.shell import DYN, Command, Event, Unsupported, Word, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

Arg = tuple[str, Word | None]  # expanded text (DYN marks unknown pieces), the word it came from
MAX_DEPTH = 6  # bash -c "eval '...'" nesting; deeper text is judged unparsed
_MAX_FILE_BYTES = 1 << 20
_CURRENT_BRANCH_COMMANDS = (
    ("git", "branch", "--show-current"),
    ("git", "rev-parse", "--abbrev-ref", "HEAD"),
    ("git", "symbolic-ref", "--short", "HEAD"),
    ("git", "symbolic-ref", "--short", "-q", "HEAD"),
)


class Ctx:
    """Shell state while the commands of one tool call run, plus the merges found so far."""

    def __init__(self, cwd: str | None, env: Mapping[str, str], powershell: bool) -> None:
        self.env = env
        self.cwd = os.path.abspath(cwd) if cwd else None
        self.ps = powershell
        self.vars: dict[str, str | None] = {}
        self.exported: set[str] = set()
        self.branches: dict[str | None, str | None] = {}  # cwd -> branch checked out by this command
        self.merged: dict[str, list[str]] = {}  # local branch -> branches merged into it here
        self.files: dict[str, str] = {}  # path -> text written earlier in this command
        self.gh_aliases: dict[str, str] = {}
        self.merges: list[Merge] = []
        self.notes: list[str] = []
        self.depth = 0
        self.decoder_seen = False  # base64 -d & co. ran: text handed to a shell may be hidden
        self.decoded: set[str] = set()  # texts a decoder produced here (seen through, still suspect)
        self.created_pr = False  # `gh pr create` ran: a later selector-less merge targets a new PR
        self._scopes: list[tuple[dict[str, str | None], set[str], str | None, dict[str | None, str | None]]] = []
        self._repo_cache: dict[str | None, tuple[str | None, str] | None] = {}
        self._branch_cache: dict[str | None, str | None] = {}

    # --- running -------------------------------------------------------------------------------
    def run_text(self, text: str, *, powershell: bool | None = None) -> None:
        """Parse and run shell text (a tool call, a ``bash -c`` string, an eval'd literal)."""
        ps = self.ps if powershell is None else powershell
        if self.depth >= MAX_DEPTH:
            self.unparsed(text, "nesting too deep")
            return
        self.depth += 1
        try:
            try:
                events = parse(text, powershell=ps)
            except Unsupported as exc:
                self.notes.append(f"tree-sitter: {exc}")
                from hook.detect_treesitter import parse_bash

                events, complete = parse_bash(text)
                if not complete:
                    self.unparsed(text, f"unparsed: {exc}")
            self.run(events)
        finally:
            self.depth -= 1

    def run(self, events: list[Event]) -> None:
        for event in events:
            if event == "(":
                self._scopes.append((dict(self.vars), set(self.exported), self.cwd, dict(self.branches)))
            elif event == ")":
                if self._scopes:
                    self.vars, self.exported, self.cwd, self.branches = self._scopes.pop()
            elif isinstance(event, Command):
                self.command(event)

    def command(self, cmd: Command) -> None:
        overlay: dict[str, str | None] = {name: self.expand_one(value) for name, value in cmd.assigns}
        if not cmd.words:
            for name, value in overlay.items():
                self.setvar(name, value)
            return
        first = cmd.words[0].parts
        ps_assign = self.ps and len(first) == 1 and first[0].kind == "v" and len(cmd.words) > 2
        if ps_assign and cmd.words[1].literal() == "=":  # PowerShell: $env:GH_REPO = 'o/r'
            self.setvar(first[0].text, " ".join(self.expand_one(w) for w in cmd.words[2:]))
            return
        args = self.expand(cmd.words)
        if args:
            detect_dispatch.dispatch(self, args, cmd, overlay)

    def unparsed(self, text: str, why: str) -> None:
        from hook.detect import might_merge

        if might_merge(text):
            self.add(Merge(via="unparsed", undetermined=True, detail=why))

    # --- state ---------------------------------------------------------------------------------
    def setvar(self, name: str, value: str | None) -> None:
        if name.lower().startswith("env:"):
            name = name[4:]
            self.exported.add(name)
        self.vars[name] = value

    def getenv(self, name: str, overlay: Mapping[str, str | None]) -> str | None:
        """An environment variable as the command would see it (prefix assignment, export, inherited)."""
        if name in overlay:
            return overlay[name]
        if name in self.vars and (name in self.exported or name in self.env):
            return self.vars[name]
        return self.env.get(name)

    def chdir(self, target: str | None) -> None:
        if target is None or DYN in target or target == "-":
            self.cwd = None
        elif target.startswith("~"):
            home = self.env.get("HOME")
            self.cwd = os.path.normpath(home + target[1:]) if home and target[1:2] in ("", "/") else None
        elif os.path.isabs(target):
            self.cwd = os.path.normpath(target)
        else:
            self.cwd = os.path.normpath(os.path.join(self.cwd, target)) if self.cwd else None

    def path(self, name: str, cwd: str | None = None) -> str:
        base = cwd or self.cwd
        if DYN in name or os.path.isabs(name) or not base:
            return name
        return os.path.normpath(os.path.join(base, name))

    def read_file(self, name: str) -> str | None:
        """A file's text: one written earlier in this command, else the disk (relative to cwd)."""
        key = self.path(name)
        if key in self.files:
            return self.files[key]
        if DYN in key or not os.path.isabs(key):
            return None
        try:
            with open(key, encoding="utf-8", errors="replace") as handle:
                return handle.read(_MAX_FILE_BYTES)
        except OSError:
            return None

    def repo(self, cwd: str | None = None) -> tuple[str | None, str] | None:
        """``(host, owner/name)`` of the git remote of ``cwd`` (default: the current directory)."""
        where = cwd if cwd is not None else self.cwd
        if where not in self._repo_cache:
            self._repo_cache[where] = gitrepo.resolve_remote(where, {})
        return self._repo_cache[where]

    def branch(self, cwd: str | None = None) -> str | None:
        """The branch checked out in ``cwd`` (DYN inside when a ``git checkout $X`` ran)."""
        where = cwd if cwd is not None else self.cwd
        if where in self.branches:
            return self.branches[where]
        if where not in self._branch_cache:
            self._branch_cache[where] = gitrepo.current_branch(where)
        return self._branch_cache[where]

    def add(self, merge: Merge) -> None:
        if merge not in self.merges:
            self.merges.append(merge)

    # --- expansion -----------------------------------------------------------------------------
    def expand(self, words: list[Word]) -> list[Arg]:
        out: list[Arg] = []
        for word in words:
            fields = self._fields(word)
            out.extend((field, word) for field in fields)
        return out

    def expand_one(self, word: Word) -> str:
        return " ".join(self._fields(word)) if word.parts else ""

    def _fields(self, word: Word) -> list[str]:
        fields = [""]
        dropped = True  # an unquoted expansion to nothing leaves no word behind
        for part in word.parts:
            if part.kind == "l":
                fields[-1] += part.text
                dropped = False
                continue
            if part.kind == "v":
                value = self._var(part.text)
            elif part.kind == "s" and part.inner is not None and self._is_current_branch(part.inner):
                value = self.branch() or DYN
            elif part.kind == "s" and part.inner is not None:
                from hook.detect_script import substitution_output

                output = substitution_output(self, part.inner)
                value = DYN if output is None else output
            else:
                value = DYN
            if part.quoted or value == DYN:
                fields[-1] += value
                dropped = False
                continue
            pieces = value.split()
            if not pieces:
                continue
            if value[0].isspace() and fields[-1]:
                fields.append("")
            fields[-1] += pieces[0]
            fields.extend(pieces[1:])
            if value[-1].isspace():
                fields.append("")
            dropped = False
        if fields[-1] == "" and len(fields) > 1:
            fields.pop()
        return [] if dropped and fields == [""] else fields

    def _var(self, name: str) -> str:
        if name.lower().startswith("env:"):
            name = name[4:]
        value = self.vars.get(name)
        if value is not None:
            return value
        if name == "HOME" and self.env.get("HOME"):
            return self.env["HOME"]
        if name == "PWD" and self.cwd:
            return self.cwd
        return DYN

    @staticmethod
    def _is_current_branch(inner: list[Event]) -> bool:
        commands = [e for e in inner if isinstance(e, Command)]
        if len(commands) != 1:
            return False
        words = tuple(w.literal() for w in commands[0].words)
        return words in _CURRENT_BRANCH_COMMANDS
