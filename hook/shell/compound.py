"""Compound commands for hook/shell/parser.py, imported only when one is met: ``for``/``select``
headers, and ``case WORD in PATTERN) LIST ;; … esac``, whose arm bodies are read by the parser's own
list reader (it stops at ``;;``, ``;&``, ``;;&`` or ``esac``); which arm runs is decided later
(hook/shell/cases.py). Extglob patterns (``@(a|b)``) are left to tree-sitter.
"""

from __future__ import annotations

from hook.shell.syntax import LOOP_START, Case, Command, ForLoop, Part, Unsupported, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from hook.shell.syntax import Event

    class Reader(Protocol):
        """What this reads of hook/shell/parser.py's reader (which imports this lazily)."""

        s: str
        i: int
        n: int
        meta: frozenset[str]
        case_term: str

        def skip_blank(self) -> None: ...
        def skip_comment(self) -> None: ...
        def read_heredocs(self) -> None: ...
        def peek_keyword(self) -> str | None: ...
        def lex_word(self, out: list[Event], meta: frozenset[str]) -> Word: ...
        def parse_list(self, out: list[Event], closer: str | None) -> None: ...
        def skip_balanced(self, opened: int) -> None: ...
        def arithmetic(self, text: str, out: list[Event], *, assigns: bool = False) -> None: ...
        def lex_words_until(self, out: list[Event], end: str) -> None: ...


def parse_case(self: Reader, out: list[Event]) -> None:
    """``case WORD in …  esac`` after ``case``: the subject, then each arm's patterns and body."""
    self.skip_blank()
    subject = self.lex_word(out, self.meta)
    _skip_lines(self)
    if not (self.s.startswith("in", self.i) and self.s[self.i + 2 : self.i + 3] in (" ", "\t", "\n", "")):
        raise Unsupported("case without in")
    self.i += 2
    arms: list[tuple[list[Word], list[Event], str]] = []
    while True:
        _skip_lines(self)
        if self.i >= self.n:
            raise Unsupported("unterminated case")
        if self.peek_keyword() == "esac":
            self.i += 4
            break
        if self.s[self.i] == "(":
            self.i += 1
        patterns: list[Word] = []
        while True:
            self.skip_blank()
            start = self.i
            patterns.append(self.lex_word(out, self.meta))
            self.skip_blank()
            c = self.s[self.i : self.i + 1]
            if self.i == start or c not in ("|", ")"):
                raise Unsupported("case pattern")  # extglob `@(a|b)` and the like: tree-sitter
            self.i += 1
            if c == ")":
                break
        body: list[Event] = []
        self.parse_list(body, "esac")
        arms.append((patterns, body, ";;" if self.case_term == "esac" else self.case_term))
        if self.case_term == "esac":
            break
    out.append(Case(subject, arms))

def _skip_lines(self: Reader) -> None:
    """Blanks, newlines and comments (between the parts of a ``case``)."""
    while True:
        self.skip_blank()
        if self.s.startswith("#", self.i):
            self.skip_comment()
        elif self.s.startswith("\n", self.i):
            self.i += 1
            self.read_heredocs()
        else:
            return


def parse_for(self: Reader, out: list[Event], *, select: bool = False) -> None:
    """``for NAME in WORDS``: NAME is unknown in the body; the words' substitutions still run.
    ``select NAME in WORDS``: a loop whose NAME is whatever the user picks (None: no word list)."""
    self.skip_blank()
    if self.s.startswith("((", self.i):
        start = self.i
        self.skip_balanced(2)
        self.arithmetic(self.s[start + 2 : self.i - 2], out, assigns=True)
        out.append(LOOP_START)
        return
    name = self.lex_word(out, self.meta).literal() or ""
    out.append(Command([], [(name, Word([Part("d", "", False)], "$" + name))], []))
    self.skip_blank()
    words: list[Word] | None = None
    if self.s.startswith("in", self.i) and self.s[self.i + 2 : self.i + 3] in (" ", "\t", ";", "\n"):
        self.i += 2
        words = []
        while True:
            self.skip_blank()
            if self.i >= self.n or self.s[self.i] in ";\n&|":
                break
            start = self.i
            word = self.lex_word(out, self.meta)
            if self.i == start:
                raise Unsupported("for loop words")
            words.append(word)
    self.lex_words_until(out, "do")
    out.append(ForLoop(name, None if select else words))
