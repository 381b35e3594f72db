"""Loops as bash runs them, for hook/shell/interpreter.py: ``for`` over words the text shows is unrolled
(the body runs once per word); any other loop body may run any number of times, none included, so
what it assigns is unknown from its start on. Imported only when a loop is met (start-up, design §7).
"""

from __future__ import annotations

from hook.shell.expansion import one_word
from hook.shell.syntax import ASSIGNING, DYN, LOOP_END, LOOP_START, MAX_DEPTH, Case, Command, ForLoop, FunctionDef

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from hook.shell.expansion import Arg
    from hook.shell.syntax import Event, Word

    class Shell(Protocol):
        """What loops read and change of hook/shell/interpreter.py's Shell (which imports this lazily)."""

        depth: int
        cwd: str | None
        arrays: dict[str, list[str] | None]

        def expand(self, words: list[Word]) -> list[Arg]: ...
        def setvar(self, name: str, value: str | None) -> None: ...
        def run(self, events: list[Event]) -> None: ...
        def poison(self) -> None: ...
        def builtin_assigns(self, args: list[Arg]) -> None: ...


def unroll(sh: Shell, loop: ForLoop, body: list[Event]) -> bool:
    """``for x in 5 7; do …; done`` with words the text shows: the body runs once per word, as
    bash runs it. False (the caller then treats it as any loop) for what is not followed exactly:
    unknown words, ``break``/``continue``/``return``/``exit`` in the body, a nested loop."""
    if loop.words is None or sh.depth >= MAX_DEPTH:
        return False
    for event in body:
        if isinstance(event, (ForLoop, FunctionDef, Case)) or event in (LOOP_START, LOOP_END):
            return False
        if isinstance(event, Command) and event.words and (
                event.words[0].literal() in (None, "break", "continue", "return", "exit")):
            return False
    args = sh.expand(loop.words)
    if not all(one_word(a) for a in args) or len(args) > 64:
        return False
    sh.depth += 1
    try:
        for text, _ in args:
            sh.setvar(loop.name, text)
            sh.run(body)
    finally:
        sh.depth -= 1
    return True

def enter_loop(sh: Shell, events: list[Event], start: int) -> None:
    """A loop body may run any number of times: what it assigns is unknown from its first run on."""
    depth = 1
    for event in events[start:]:
        if event == LOOP_START or isinstance(event, ForLoop):
            depth += 1
        elif event == LOOP_END:
            depth -= 1
            if not depth:
                break
        else:
            _loop_effects(sh, event)

def _loop_effects(sh: Shell, event: Event) -> None:
    """What one event of a loop body may change, made unknown (a case arm's events included)."""
    if isinstance(event, Case):
        for _, body, _ in event.arms:
            for inner in body:
                _loop_effects(sh, inner)
    elif isinstance(event, Command):
        for name, _ in event.assigns:
            sh.setvar(name.removesuffix("+"), DYN)
        for name, _ in event.arrays:
            sh.arrays[name.removesuffix("+")] = None
        first = event.words[0].literal() if event.words else ""
        if first in ("cd", "pushd", "popd", "chdir"):
            sh.cwd = None
        elif first is None or first in ("source", ".", "eval", "set", "shift", "unset", "alias"):
            sh.poison()  # a computed command, a sourced file: too much to follow exactly
        elif first in ASSIGNING:
            sh.builtin_assigns([(w.literal() or DYN, w) for w in event.words])


def loop_end(events: list[Event], start: int) -> int:
    """The index of the `LOOP_END` closing the loop whose body starts at ``start``."""
    depth = 1
    for k in range(start, len(events)):
        if events[k] == LOOP_START or isinstance(events[k], ForLoop):
            depth += 1
        elif events[k] == LOOP_END:
            depth -= 1
            if not depth:
                return k
    return len(events)
