"""What the shell readers produce: words made of parts, simple commands with their redirects, and the
event list a reader returns. Shared by the lexer, both parsers and the interpreter; imports nothing.
"""

from __future__ import annotations

DYN = "\x00"  # stands for text only the running shell knows; a shell string cannot contain NUL
# `set -a` is on: kept among the exported names (no variable is called "-a"), so it ends with the
# subshell that turned it on
ALLEXPORT = "-a"
MAX_DEPTH = 6  # bash -c "eval '...'" nesting; deeper text is judged unparsed
# builtins that assign variables from what the run produces, or change where the shell is
ASSIGNING = frozenset({"read", "mapfile", "readarray", "getopts", "let", "printf", "declare", "typeset",
                        "local", "export", "readonly", "source", ".", "cd", "pushd", "popd", "eval", "set",
                        "shift", "unset", "alias"})


INPUTS = frozenset({"<", "<<", "<<-", "<<<", "<>"})
OUTPUTS = frozenset({">", ">>", ">|", "&>", "&>>"})  # what writes a file (`>&2` duplicates a descriptor)


class Unsupported(Exception):
    """The text uses syntax this reader does not model; ask tree-sitter."""


class Part:
    """A piece of a word: ``l`` literal, ``v`` variable (text = name), ``s`` command substitution
    (``inner`` = its events), ``d`` dynamic (unknown at parse time)."""

    __slots__ = ("inner", "kind", "quoted", "text")

    def __init__(self, kind: str, text: str, quoted: bool, inner: list[Event] | None = None) -> None:
        self.kind, self.text, self.quoted, self.inner = kind, text, quoted, inner


class Word:
    __slots__ = ("parts", "raw")

    def __init__(self, parts: list[Part], raw: str) -> None:
        self.parts, self.raw = parts, raw

    def literal(self) -> str | None:
        """The word's text when it has no expansion at all."""
        if all(p.kind == "l" for p in self.parts):
            return "".join(p.text for p in self.parts)
        return None


class Redirect:
    __slots__ = ("body", "op", "quoted", "target")

    def __init__(self, op: str, target: Word | None, quoted: bool = False) -> None:
        self.op, self.target, self.quoted = op, target, quoted
        self.body: Word | None = None  # a heredoc's body, once read


class Command:
    __slots__ = ("arrays", "assigns", "pipe_src", "piped", "redirects", "subshell", "words")

    def __init__(self, words: list[Word], assigns: list[tuple[str, Word]], redirects: list[Redirect],
                 arrays: list[tuple[str, list[Word] | None]] | None = None) -> None:
        self.words, self.assigns, self.redirects = words, assigns, redirects
        self.arrays = arrays or []  # NAME=(w1 w2 …), NAME+=(…): the element words (None: unreadable)
        self.piped = False  # stdin comes from a pipe
        self.pipe_src: Command | None = None  # the simple command writing that pipe, when known
        self.subshell = False  # runs in a subshell of its own (it feeds a pipe, or runs in the background)


class FunctionDef:
    """``name() { body; }``: the body runs when the function is called, not where it is defined."""

    __slots__ = ("body", "name")

    def __init__(self, name: str, body: list[Event]) -> None:
        self.name, self.body = name, body


class ForLoop:
    """``for NAME in WORDS; do``: opens a loop like `LOOP_START` (closed by `LOOP_END`); ``words`` is
    None when the header is not a plain word list (``for NAME; do``, a parse that balked)."""

    __slots__ = ("name", "words")

    def __init__(self, name: str, words: list[Word] | None) -> None:
        self.name, self.words = name, words


class Case:
    """``case WORD in PATTERN|PATTERN) LIST ;; … esac``: ``arms`` holds each arm's pattern words, body
    events and terminator (``;;`` stop, ``;&`` run the next body, ``;;&`` test the next patterns).
    Which arm runs is decided in hook/shell/cases.py, exactly or not at all."""

    __slots__ = ("arms", "subject")

    def __init__(self, subject: Word, arms: list[tuple[list[Word], list[Event], str]]) -> None:
        self.subject, self.arms = subject, arms


class Later:
    """A here-document's substitutions: bash expands the body when it performs the redirection, before
    the command runs, while the fast reader reads the body only after the line ends. Placed where the
    redirection is, filled in when the body is read (``x=5; cat <<EOF; x=7`` expands the body with 5)."""

    __slots__ = ("events",)

    def __init__(self) -> None:
        self.events: list[Event] = []


Event = Command | str | FunctionDef | ForLoop | Case | Later
LOOP_START = "L("  # events from here to the matching LOOP_END may run any number of times
LOOP_END = "L)"
MAYBE_START = "M("  # events from here to the matching MAYBE_END may not run (`&& …`, an `if` branch)
MAYBE_END = "M)"


def subshell(out: list[Event], start: int) -> None:
    """The events from ``start`` on run in a subshell (a compound in a pipeline, a background job)."""
    out.insert(start, "(")
    out.append(")")


def may_glob(text: str) -> bool:
    """Unquoted text bash would expand as a pathname pattern when files match it."""
    if "*" in text or "?" in text:
        return True
    at = text.find("[")
    return at >= 0 and "]" in text[at + 1 :]
