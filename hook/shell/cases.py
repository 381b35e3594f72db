"""``case WORD in … esac`` as bash runs it, decided exactly or not at all (soundness, docs/hook.md).

An arm's patterns are decided when the subject and the pattern are known text and the pattern uses
only ``*``, ``?`` and literal characters: then exactly the arms bash runs are run (``;;`` stops,
``;&`` runs the next body, ``;;&`` tests the next patterns). A pattern that is not decided (a value
only the run knows, a bracket expression, an extglob, a letter whose case matters while the agent's
shell may have ``nocasematch`` on) makes its arm — and every arm after it that may be reached — *maybe*
run: its body runs in the model, whatever it finds is marked uncertain (`Shell.uncertain`: merges
become undetermined), and what it may have assigned is unknown afterwards.
Imported on first use (start-up budget, design §7).
"""

from __future__ import annotations

from hook.shell.syntax import ALLEXPORT, DYN, Part, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from hook.shell.syntax import Case, Event

    Saved = tuple[dict[str, str | None], dict[str, list[str] | None], set[str], str | None, list[str] | None,
                  set[str], object]

    class Shell(Protocol):
        """What a case reads and changes of hook/shell/interpreter.py's Shell (which imports this lazily)."""

        vars: dict[str, str | None]
        arrays: dict[str, list[str] | None]
        exported: set[str]
        cwd: str | None
        positional: list[str] | None
        unset: set[str]
        env_unknown: bool

        def run(self, events: list[Event]) -> None: ...
        def save_scope(self) -> object: ...
        def join_scope(self, saved: object) -> None: ...
        def expand_one(self, word: Word) -> str: ...
        def ifs(self) -> str | None: ...
        def mark(self) -> int: ...
        def uncertain(self, mark: int, why: str) -> None: ...

_MISSING = object()
_PATTERN_SPECIAL = frozenset("*?[\\(")


def run_case(sh: Shell, case: Case) -> None:
    subject = _subject(sh, case.subject)
    certain, falling = True, False
    for patterns, body, term in case.arms:
        decision: bool | None = True
        if not falling:
            decision = _any_match(sh, subject, patterns)
            if decision is False:
                continue
        if decision is None:
            certain = False
        if certain:
            sh.run(body)
        else:
            run_maybe(sh, body, "inside a case arm that may not run")
        falling = term == ";&"
        if term == ";;" and decision is True:
            return  # this arm ran if it was reached: nothing after it runs


def snapshot(sh: Shell) -> object:
    """The state before a region that may not run (`join` merges it with the state after)."""
    return (dict(sh.vars), dict(sh.arrays), set(sh.exported), sh.cwd, sh.positional, set(sh.unset), sh.save_scope())


def join(sh: Shell, saved: object) -> None:
    """After a region that ran or did not (``&& x=7``, an ``if`` branch): what differs is unknown. The
    merges inside stay as read — a command there runs only on the path where the region ran."""
    state: Saved = saved  # type: ignore[assignment]
    vars_, arrays, exported, cwd, positional, unset, extra = state
    for name in set(sh.vars) | set(vars_):
        if (name in sh.exported) != (name in exported) or sh.vars.get(name, _MISSING) != vars_.get(name, _MISSING):
            sh.vars[name] = DYN
    if (ALLEXPORT in sh.exported) != (ALLEXPORT in exported):
        exported.discard(ALLEXPORT)
        sh.exported.discard(ALLEXPORT)
        sh.env_unknown = True
    sh.exported |= exported
    for name in set(sh.arrays) | set(arrays):
        if sh.arrays.get(name, _MISSING) != arrays.get(name, _MISSING):
            sh.arrays[name] = None
    for name in sh.unset ^ unset:
        sh.vars[name] = DYN
        sh.unset.discard(name)
    if sh.cwd != cwd:
        sh.cwd = None
    if sh.positional != positional:
        sh.positional = None
    sh.join_scope(extra)


def run_maybe(sh: Shell, body: list[Event], why: str) -> None:
    """Run ``body`` as code that may or may not run: what it finds is uncertain, and whatever it
    changes is unknown afterwards (the join of "ran" and "did not run")."""
    saved_vars, saved_arrays, saved_exported = dict(sh.vars), dict(sh.arrays), set(sh.exported)
    saved_cwd, saved_positional, saved_unset = sh.cwd, sh.positional, set(sh.unset)
    mark = sh.mark()
    sh.run(body)
    sh.uncertain(mark, why)
    for name in set(sh.vars) | set(saved_vars):
        exported_differs = (name in sh.exported) != (name in saved_exported)
        if exported_differs or sh.vars.get(name, _MISSING) != saved_vars.get(name, _MISSING):
            sh.vars[name] = DYN
    if (ALLEXPORT in sh.exported) != (ALLEXPORT in saved_exported):  # `set -a` on one path only
        saved_exported.discard(ALLEXPORT)
        sh.exported.discard(ALLEXPORT)
        sh.env_unknown = True  # a plain assignment after it may be exported or not
    sh.exported |= saved_exported
    for name in set(sh.arrays) | set(saved_arrays):
        if sh.arrays.get(name, _MISSING) != saved_arrays.get(name, _MISSING):
            sh.arrays[name] = None
    for name in sh.unset ^ saved_unset:  # unset on one path only
        sh.vars[name] = DYN
        sh.unset.discard(name)
    if sh.cwd != saved_cwd:
        sh.cwd = None
    if sh.positional != saved_positional:
        sh.positional = None


def _subject(sh: Shell, word: Word) -> str | None:
    """The case word: expanded without splitting or globbing; None when only the run knows it."""
    value = sh.expand_one(word)
    if DYN in value:
        return None
    split = any(p.kind != "l" and not p.quoted for p in word.parts)
    ifs = sh.ifs()
    if split and (ifs is None or any(c in value for c in ifs)):
        return None  # expand_one split and re-joined it; bash does not split here
    return value


def _any_match(sh: Shell, subject: str | None, patterns: list[Word]) -> bool | None:
    undecided = False
    for word in patterns:
        pattern = _pattern(sh, word)
        if subject is None or pattern is None:
            undecided = True
            continue
        exact = _glob(subject, pattern)
        folded = _glob(subject.lower(), [(c.lower(), special) for c, special in pattern])
        if exact != folded:  # `shopt -s nocasematch` in the agent's shell would decide otherwise
            undecided = True
        elif exact:
            return None if undecided else True
    return None if undecided else False


def _pattern(sh: Shell, word: Word) -> list[tuple[str, bool]] | None:
    """The pattern as (character, special) pairs; None when not decided exactly."""
    out: list[tuple[str, bool]] = []
    for part in word.parts:
        if part.kind == "l":
            if part.quoted:
                out.extend((c, False) for c in part.text)
                continue
            if any(c in part.text for c in "[\\("):
                return None  # bracket expressions and extglobs: not modelled
            out.extend((c, c in "*?") for c in part.text)
            continue
        value = sh.expand_one(Word([Part(part.kind, part.text, True, part.inner)], ""))
        if DYN in value or (not part.quoted and any(c in value for c in _PATTERN_SPECIAL)):
            return None
        out.extend((c, False) for c in value)
    return out


def _glob(text: str, pattern: list[tuple[str, bool]]) -> bool:
    """``*`` and ``?`` matching of the whole text (the usual backtracking on the last ``*``)."""
    t = p = 0
    star, star_t = -1, 0
    while t < len(text):
        if p < len(pattern) and (pattern[p] == ("?", True) or pattern[p] == (text[t], False)):
            t, p = t + 1, p + 1
        elif p < len(pattern) and pattern[p] == ("*", True):
            star, star_t, p = p, t, p + 1
        elif star >= 0:
            star_t += 1
            t, p = star_t, star + 1
        else:
            return False
    while p < len(pattern) and pattern[p] == ("*", True):
        p += 1
    return p == len(pattern)
