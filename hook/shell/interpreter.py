"""The shell-state interpreter: walks parsed shell commands in order, keeping what a shell would
know: variables, exports, the working directory, files written earlier in the same command, what a
command prints or reads on stdin when the text shows it. Each command's words are expanded here
(unknown pieces become `DYN`) and handed to `Shell.simple_command`, which the detection context
(hook/detect/context.py) implements; this package knows nothing about merges.
"""

from __future__ import annotations

from hook.shell import paths
from hook.shell.expansion import Arg, one_word
from hook.shell.parser import parse
from hook.shell.readings import Readings
from hook.shell.syntax import (
    ALLEXPORT,
    ASSIGNING,
    DYN,
    LOOP_END,
    LOOP_START,
    MAX_DEPTH,
    MAYBE_END,
    MAYBE_START,
    OUTPUTS,
    Case,
    Command,
    Event,
    ForLoop,
    FunctionDef,
    Later,
    Unsupported,
    Word,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class Shell(Readings):
    """Shell state while the commands of one tool call run. Subclasses say what a simple command
    does (`simple_command`) and what text that cannot be read means (`unparsed`)."""

    def __init__(self, cwd: str | None, env: Mapping[str, str], powershell: bool) -> None:
        self.env = env
        self.cwd = paths.abspath(cwd) if cwd else None
        self.ps = powershell
        self.vars: dict[str, str | None] = {}
        self.exported: set[str] = set()
        self.files: dict[str, str] = {}  # path -> text written earlier in this command
        self.notes: list[str] = []
        self.depth = 0
        self.decoder_seen = False  # base64 -d & co. ran: text handed to a shell may be hidden
        self.decoded: set[str] = set()  # texts a decoder produced here (seen through, still suspect)
        self._scopes: list[tuple[dict[str, str | None], set[str], str | None, list[str] | None,
                                 tuple[dict[str, list[str] | None], set[str], object]]] = []
        self.unset: set[str] = set()  # names `unset` here: surely unset, whatever the environment held
        self.positional: list[str] | None = None
        self.arrays: dict[str, list[str] | None] = {}  # NAME=(…): the elements (None: unknown)
        self.functions: dict[str, list[Event]] = {}
        self.frames: list[dict[str, str | None]] = []  # a called function's `local` names: outer values
        self.env_unknown = False  # a sourced file or a nameref may have changed any variable
        self.computed: set[str] = set()  # declare -i/-l/-u/-n names: what is assigned is not what is stored

    # --- what subclasses decide ----------------------------------------------------------------
    def simple_command(self, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
        """Run one expanded command line (``overlay``: its prefix assignments)."""

    def unparsed(self, text: str, why: str) -> None:
        """Text this reader cannot model."""
        self.notes.append(why)

    def substitution(self, inner: list[Event]) -> str | None:
        """What ``$(…)`` prints, when the text shows it; None when unknown."""
        return self.substitution_output(inner)

    def save_scope(self) -> object:
        """Extra state a subshell restores on exit."""
        return None

    def restore_scope(self, saved: object) -> None:
        """Undo what a subshell changed in the extra state `save_scope` returned."""

    def join_scope(self, saved: object) -> None:
        """After a region that may not have run: extra state that differs from `save_scope`'s is unknown."""

    def mark(self) -> int:
        """A point in what subclasses record, for `uncertain`."""
        return 0

    def uncertain(self, mark: int, why: str) -> None:
        """What ran since ``mark`` may not run at all (a ``case`` arm whose pattern is not decided)."""

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
                from hook.shell.treesitter import parse_bash

                try:
                    events, complete = parse_bash(text)
                except ImportError:  # a launcher that cannot see tree-sitter: doubt, not a crash
                    events, complete = [], False
                if not complete:
                    self.unparsed(text, f"unparsed: {exc}")
            self.run(events)
        finally:
            self.depth -= 1

    def run(self, events: list[Event]) -> None:
        k = 0
        loops: list[int] = []  # where the bodies of the loops being run start
        maybes: list[object] = []  # the state before each region that may not run
        while k < len(events):
            event = events[k]
            k += 1
            if isinstance(event, ForLoop):
                from hook.shell.loops import enter_loop, loop_end, unroll  # loaded only for loops

                end = loop_end(events, k)
                if unroll(self, event, events[k:end]):
                    k = end + 1
                else:
                    loops.append(k)
                    enter_loop(self, events, k)
            elif event == LOOP_START:
                from hook.shell.loops import enter_loop

                loops.append(k)
                enter_loop(self, events, k)
            elif event == LOOP_END and loops:  # it may have run any number of times, none included
                from hook.shell.loops import enter_loop

                enter_loop(self, events, loops.pop())
            elif event == MAYBE_START:
                from hook.shell.cases import snapshot

                maybes.append(snapshot(self))
            elif event == MAYBE_END and maybes:  # ran or not: what it changed is unknown after it
                from hook.shell.cases import join

                join(self, maybes.pop())
            elif event == "(":
                self._scopes.append((dict(self.vars), set(self.exported), self.cwd, self.positional,
                                     (dict(self.arrays), set(self.unset), self.save_scope())))
            elif event == ")":
                if self._scopes:
                    self.vars, self.exported, self.cwd, self.positional, (arrays, unset, extra) = self._scopes.pop()
                    self.arrays, self.unset = arrays, unset
                    self.restore_scope(extra)
            elif isinstance(event, FunctionDef):
                self.functions[event.name] = event.body
            elif isinstance(event, Command):
                self.command(event)
            elif isinstance(event, Case):
                from hook.shell.cases import run_case

                run_case(self, event)
            elif isinstance(event, Later):  # a here-document's substitutions, where its redirection is
                self.run(event.events)

    def call(self, name: str, args: list[Arg], overlay: Mapping[str, str | None] | None = None) -> None:
        """A shell function: its body runs now, with the arguments as positional parameters and the
        prefix assignments (``GH_REPO=x f``) exported; what it declares ``local`` is restored when it
        returns, and so are the prefix assignments."""
        if self.depth >= MAX_DEPTH:
            self.unparsed(name, "function calls nested too deep")
            return
        env = self.push_env(overlay or {})
        try:
            self._call(name, args)
        finally:
            self.pop_env(env)

    def _call(self, name: str, args: list[Arg]) -> None:
        saved = self.positional
        self.set_positional([a[0] for a in args] if all(one_word(a) for a in args) else None)
        self.frames.append({})
        self.depth += 1
        try:
            self.run(self.functions[name])
        finally:
            self.depth -= 1
            for local, value in self.frames.pop().items():
                if value is None:
                    self.vars.pop(local, None)
                else:
                    self.vars[local] = value
            self.positional = saved

    def poison(self) -> None:
        """Any variable may have changed (a sourced file, a nameref, an assignment not followed)."""
        self.unset.clear()
        self.exported.discard(ALLEXPORT)  # maybe on: a plain assignment is then read as unknown (env_unknown)
        self.vars = dict.fromkeys(self.vars, DYN)
        self.arrays = dict.fromkeys(self.arrays)
        self.env_unknown = True

    def command(self, cmd: Command) -> None:
        if cmd.subshell or cmd.piped:  # a pipeline's parts and background jobs change nothing here
            self.run(["("])
            try:
                self._command(cmd)
            finally:
                self.run([")"])
        else:
            self._command(cmd)

    def _command(self, cmd: Command) -> None:
        overlay: dict[str, str | None] = {}
        for name, value in cmd.assigns:
            if "[" in name:  # a[N]=value
                from hook.shell.elements import assign_element

                assign_element(self.arrays, self.vars, self.env, name, self.expand_one(value),
                               prefix=bool(cmd.words))
                continue
            if name.endswith("+"):  # NAME+=value appends
                name = name[:-1]
                before = self.vars.get(name) if name in self.vars else self.env.get(name, "")
                overlay[name] = DYN if before is None or self.env_unknown else before + self.expand_one(value)
            else:
                overlay[name] = self.expand_one(value)
        for name, words in cmd.arrays:
            self._assign_array(name, words)
        if not cmd.words:
            for target, text in overlay.items():
                self.setvar(target, text)
            self._writes(cmd)  # `>f` empties f; a compound's redirections (hook/shell/streams.py) write it
            return
        first = cmd.words[0].parts
        ps_assign = self.ps and len(first) == 1 and first[0].kind == "v" and len(cmd.words) > 2
        if ps_assign and cmd.words[1].literal() == "=":  # PowerShell: $env:GH_REPO = 'o/r'
            self.setvar(first[0].text, " ".join(self.expand_one(w) for w in cmd.words[2:]))
            return
        args = self.expand(cmd.words)
        self._writes(cmd)
        if args and args[0][0] in self.functions:
            self.call(args[0][0], args[1:], overlay)
        elif args:
            self.builtin_assigns(args)
            self.simple_command(args, cmd, overlay)

    def _writes(self, cmd: Command) -> None:
        """What a command writes to a file is unknown (echo & co. say better, hook/detect/script.py)."""
        for red in cmd.redirects:
            if red.op in OUTPUTS and red.target is not None:
                key = self.path(self.expand_one(red.target))
                if not key.startswith("/dev/"):
                    self.files[key] = DYN
                    self.wrote(key, red.op in (">>", "&>>"))

    def wrote(self, key: str, append: bool) -> None:
        """A redirection writes ``key`` (``append``: ``>>``) with text the command's program prints."""

    def _assign_array(self, name: str, words: list[Word] | None) -> None:
        """``NAME=(…)``: the elements are expanded like a command's words (braces, splitting, globs)."""
        base = name.removesuffix("+")
        args = self.expand(words) if words is not None else []
        values = [a[0] for a in args] if words is not None and all(one_word(a) for a in args) else None
        if name.endswith("+"):
            before = self.arrays.get(base, [] if base not in self.vars else None)
            values = None if values is None or before is None else before + values
        self.vars.pop(base, None)
        self.arrays[base] = values

    def builtin_assigns(self, args: list[Arg]) -> None:
        """Variables that builtins assign from what only the run knows (hook/shell/builtins.py)."""
        if args[0][0] in ASSIGNING:
            from hook.shell.builtins import assigns

            assigns(self, args)

    # --- state ---------------------------------------------------------------------------------
    def setvar(self, name: str, value: str | None) -> None:
        if name.lower().startswith("env:"):
            name = name[4:]
            self.exported.add(name)
        if name in self.arrays:  # NAME=value on an array sets its first element
            elements = self.arrays[name]
            self.arrays[name] = None if elements is None or value is None else [value, *elements[1:]]
            return
        self.unset.discard(name)
        self.vars[name] = DYN if name in self.computed else value
        if ALLEXPORT in self.exported:
            self.exported.add(name)

    def push_env(self, overlay: Mapping[str, str | None]) -> list[tuple[str, bool, str | None, bool, bool]]:
        """``NAME=value CMD`` where CMD runs here (a function, ``eval``): NAME is set and exported while
        it runs, then restored (`pop_env`)."""
        saved = [(n, n in self.vars, self.vars.get(n), n in self.exported, n in self.unset) for n in overlay]
        for name, value in overlay.items():
            if value is None:  # `env -u NAME`
                self.vars.pop(name, None)
                self.unset.add(name)
            else:
                self.setvar(name, value)
            self.exported.add(name)
        return saved

    def pop_env(self, saved: list[tuple[str, bool, str | None, bool, bool]]) -> None:
        for name, had, value, exported, unset in saved:
            if had:
                self.vars[name] = value
            else:
                self.vars.pop(name, None)
            (self.exported.add if exported else self.exported.discard)(name)
            (self.unset.add if unset else self.unset.discard)(name)

    def getenv(self, name: str, overlay: Mapping[str, str | None]) -> str | None:
        """An environment variable as the command would see it (prefix assignment, export, inherited)."""
        if name in overlay:
            return overlay[name]
        if name in self.unset:
            return None
        if name in self.vars and (name in self.exported or name in self.env):
            return self.vars[name]
        return DYN if self.env_unknown else self.env.get(name)

    def chdir(self, target: str | None) -> None:
        if target is None or DYN in target or target == "-":
            self.cwd = None
        elif target.startswith("~"):
            home = self.env.get("HOME")
            self.cwd = paths.normpath(home + target[1:]) if home and target[1:2] in ("", "/") else None
        elif paths.isabs(target):
            self.cwd = paths.normpath(target)
        else:
            self.cwd = paths.normpath(paths.join(self.cwd, target)) if self.cwd else None
