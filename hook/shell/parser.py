"""Shell text to simple commands, for merge detection: a small recursive-descent reader of bash.

Why hand-written, not tree-sitter or shlex: the guard runs on every agent Bash call and its start-up
budget (design §7) is 1.3x a bare interpreter, while ``import tree_sitter, tree_sitter_bash`` alone
costs about 2x; shlex sees no operators, substitutions or heredocs. This module imports nothing.
What it does not model (function definitions, ``coproc``, extglob patterns, unbalanced text, fish
syntax) raises `Unsupported`, and the caller asks tree-sitter instead (hook/shell/treesitter.py).
``case`` becomes a `Case` event whose arms the interpreter decides (hook/shell/cases.py); ``select``
is a loop over words nobody knows (the user picks them at run time).

`parse` returns a flat list of events in execution order: `Command`s, and the strings ``"("`` and
``")"`` around whatever runs in a subshell (``( ... )``, command substitutions), so that a ``cd`` or
an assignment inside does not leak out. Every branch of ``if``/``||`` counts as run: a guard errs
towards seeing a merge. With ``powershell=True`` the quoting and escapes of PowerShell are read.
"""

from __future__ import annotations

from hook.shell.lexer import NAME_CHARS, NAME_START
from hook.shell.syntax import (
    LOOP_END,
    LOOP_START,
    MAYBE_END,
    MAYBE_START,
    Command,
    Event,
    Later,
    Part,
    Redirect,
    Unsupported,
    Word,
    subshell,
)
from hook.shell.tokens import UNSUPPORTED, TokenReader

__all__ = ["parse", "read_word"]

_META = frozenset(" \t\n;&|()<>")
_PS_META = frozenset(" \t\n;&|(){}<>")
_CASE_TERMS = (";;", ";&", ";;&")
_OPENERS = frozenset({"if", "while", "until", "for", "select", "{", "case"})
_CLOSERS = frozenset({"fi", "done", "}"})


def parse(text: str, *, powershell: bool = False) -> list[Event]:
    return _Parser(text, powershell).parse()


def read_word(text: str, out: list[Event], *, whole_text: bool = False) -> Word:
    """One word's text (or, with ``whole_text``, a heredoc body) read by the lexer; substitutions'
    commands are appended to ``out``. The tree-sitter path uses it so quoting reads the same."""
    reader = _Parser(text, False)
    return reader.lex_text(out) if whole_text else reader.lex_word(out, frozenset())


class _Parser(TokenReader):
    def __init__(self, text: str, powershell: bool) -> None:
        self.s, self.i, self.n, self.ps = text, 0, len(text), powershell
        self.esc = "`" if powershell else "\\"
        self.meta = _PS_META if powershell else _META
        self.pending: list[tuple[Redirect, str, bool, Later]] = []  # heredocs awaiting a body
        self.case_term = ""  # how the case arm just read ended: `;;`, `;&`, `;;&` or `esac`

    def parse(self) -> list[Event]:
        out: list[Event] = []
        self.parse_list(out, None)
        if self.pending:  # a heredoc opened on the last line, without a body
            self.read_heredocs()
        return out

    # --- lists, pipelines and commands -------------------------------------------------------
    def parse_list(self, out: list[Event], closer: str | None) -> None:
        prev: Command | None = None  # the command writing the pipe, when one does
        piped = False
        s = self.s
        # compound commands (`if…fi`, loops, `{…}`, `case`) open in this list: where their events start,
        # whether a pipe feeds them and from which command; `closed`: the one that just ended, until its
        # redirections are read (hook/shell/streams.py says where its input and output go). In a
        # pipeline or in the background a compound runs in a subshell: what it assigns does not come back.
        opened: list[tuple[int, bool, Command | None]] = []
        closed: tuple[int, bool, Command | None, bool] | None = None  # and whether what it prints is to read
        # regions that may not run, as (depth in `opened`, is an `if` branch): after `&&`/`||` up to the
        # end of the and-or list, an `if` branch up to the next `elif`/`else`/`fi` (hook/shell/cases.join)
        maybes: list[tuple[int, bool]] = []
        # where the and-or list being read starts (`a || b &` puts all of it in the background), and the
        # starts of the lists around the compounds open in this one
        starts = [len(out)]

        def close(depth: int, branches: bool) -> None:
            while maybes and maybes[-1][0] >= depth and (branches or not maybes[-1][1]):
                maybes.pop()
                out.append(MAYBE_END)

        def finish(op: str = "") -> None:
            """The compound that just ended, once its redirections are read: fed by a pipe, feeding one
            or in the background, it runs in a subshell."""
            nonlocal closed
            if closed is not None:
                at, fed, source, _ = closed
                if fed:
                    from hook.shell import streams  # loaded only for a compound in a pipeline

                    streams.feed(out, at, source)
                if fed or op in ("|", "|&", "&"):
                    subshell(out, at)
            closed = None

        while True:
            self.skip_blank()
            if self.i >= self.n:
                if closer:
                    raise Unsupported(f"unterminated {closer!r}")
                finish()
                close(0, True)
                return
            c = s[self.i]
            if c == "#" or (self.ps and s.startswith("<#", self.i)):
                self.skip_comment()
                continue
            if c == "\n":
                self.i += 1
                finish()
                close(len(opened), False)
                self.read_heredocs()
                prev, piped, starts[-1] = None, False, len(out)
                continue
            if c == closer:
                self.i += 1
                finish()
                close(0, True)
                return
            if c in ";|&" and not s.startswith("&>", self.i):
                op = self.operator()
                if closed is not None and closed[3] and op in ("|", "|&"):  # what the compound prints
                    from hook.shell import streams

                    prev = streams.output(out[closed[0] :])
                finish(op)
                if op in ("&&", "||"):
                    out.append(MAYBE_START)
                    maybes.append((len(opened), False))
                elif op not in ("|", "|&"):
                    close(0 if op in _CASE_TERMS else len(opened), op in _CASE_TERMS)
                if op in _CASE_TERMS:
                    if closer != "esac":
                        raise Unsupported("case clause")
                    self.case_term = op
                    return
                if op in ("|", "|&"):
                    piped = True
                    if prev is not None:
                        prev.subshell = True  # each part of a pipeline runs in a subshell
                else:
                    if op == "&":  # so does a background job: the whole and-or list
                        subshell(out, starts[-1])
                    if op in (";", "&"):
                        starts[-1] = len(out)
                    prev, piped = None, False
                continue
            if c == ")" or (self.ps and c == "}"):
                if self.ps:
                    self.i += 1
                    continue
                raise Unsupported("unbalanced )")
            if c == "(" or (self.ps and c == "{"):
                finish()
                if s.startswith("((", self.i) and not self.ps:
                    start, at = self.i, len(out)
                    self.skip_balanced(2)
                    self.arithmetic(s[start + 2 : self.i - 2], out)
                    closed, prev, piped = (at, piped, prev, False), None, False  # in a pipeline: a subshell's
                    continue
                self.i += 1
                at = len(out)
                out.append("(")
                self.parse_list(out, "}" if c == "{" else ")")
                out.append(")")
                closed, piped = (at, piped, prev, True), False
                continue
            kw = self.peek_keyword()
            if kw is not None:
                finish()
                self.i += len(kw)
                if kw in UNSUPPORTED:
                    raise Unsupported(kw)
                if kw in ("else", "elif", "fi"):
                    close(len(opened), True)
                if kw in ("then", "else", "elif"):
                    out.append(MAYBE_START)
                    maybes.append((len(opened), True))
                if kw in _OPENERS:
                    opened.append((len(out), piped, prev))
                    piped = False  # the pipe feeds the compound (hook/shell/streams.py), not its first command
                    starts.append(len(out))
                elif kw in _CLOSERS and opened:
                    closed = (*opened.pop(), True)
                    starts.pop()
                if kw in ("for", "select"):
                    from hook.shell.compound import parse_for  # loaded only for a loop over words

                    parse_for(self, out, select=kw == "select")
                elif kw == "case":
                    from hook.shell.compound import parse_case  # loaded only for a case

                    parse_case(self, out)
                    closed = (*opened.pop(), True)
                    starts.pop()
                elif kw == "esac":
                    if closer != "esac":
                        raise Unsupported("esac")
                    self.case_term = "esac"
                    close(0, True)
                    return
                elif kw in ("while", "until"):
                    out.append(LOOP_START)
                elif kw == "done":
                    out.append(LOOP_END)
                elif kw == "[[":
                    at = len(out)
                    self.lex_words_until(out, "]]")
                    closed, piped = (at, piped, prev, False), False  # `[[ $((x=7)) ]] | cat`: in a subshell
                elif kw == "time":
                    self.skip_blank()
                    if s.startswith("-p ", self.i):
                        self.i += 2
                if closed is not None:
                    prev = None
                elif kw in ("then", "else", "elif", "do", "{", "if", "while", "until"):
                    starts[-1] = len(out)  # a new list starts inside the compound
                continue
            mark = len(out)
            cmd = self.parse_command(out)
            if cmd is None:
                continue
            if closed is not None and not (cmd.words or cmd.assigns or cmd.arrays):  # `done <<EOF >log`
                at = closed[0]
                moved = out[mark:]  # the redirections' substitutions run before the compound does
                del out[mark:]
                out[at:at] = moved
                from hook.shell import streams  # loaded only for a compound's redirections

                # a test or arithmetic command prints nothing of its substitutions' (`[[ $(echo 5) ]] 2>&1 |`)
                prints = closed[3]
                closed = (at + len(moved), closed[1], closed[2], False)
                streams.redirect(out, closed[0], cmd.redirects)
                prev = streams.output(out[closed[0] :], cmd.redirects) if prints else None
                continue
            finish()
            if piped:
                cmd.piped, cmd.pipe_src = True, prev
            prev, piped = cmd, False
            out.append(cmd)

    def parse_command(self, out: list[Event]) -> Command | None:
        words: list[Word] = []
        assigns: list[tuple[str, Word]] = []
        arrays: list[tuple[str, list[Word] | None]] = []
        redirects: list[Redirect] = []
        s = self.s
        while True:
            self.skip_blank()
            if self.i >= self.n:
                break
            c = s[self.i]
            if c in "\n;|" or (c == "&" and not s.startswith("&>", self.i)) or c == ")":
                break
            if c == "#":
                break
            if self.ps and c in "{}":
                break
            if c == "(":
                if self.ps:
                    break
                raise Unsupported("function definition" if len(words) == 1 else "( inside a command")
            if c == "<" and (placeholder := self.placeholder()) is not None:
                words.append(placeholder)
                continue
            if c in "<>&0123456789{" and not s.startswith(("<(", ">("), self.i):
                red = self.redirect(out)
                if red is not None:
                    redirects.append(red)
                    continue
            start = self.i
            word = self.lex_word(out, self.meta)
            if self.i == start:  # a character no rule consumes (PowerShell's reserved `<`): keep it as text
                self.i += 1
                word = Word([Part("l", s[start], False)], s[start])
            if not words and (assign := _assignment(word)) is not None:
                if assign[1].raw == "" and s.startswith("(", self.i):  # NAME=( array )
                    arrays.append((assign[0], self.array_words(out)))
                    continue
                assigns.append(assign)
                continue
            words.append(word)
        if not words and not assigns and not redirects and not arrays:
            return None
        return Command(words, assigns, redirects, arrays)

    def array_words(self, out: list[Event]) -> list[Word] | None:
        """The words of ``( … )`` after ``NAME=`` (None for ``[key]=value`` elements, not modelled)."""
        self.i += 1
        words: list[Word] = []
        while True:
            while self.i < self.n and self.s[self.i] in " \t\n":
                self.i += 1
            if self.i >= self.n:
                raise Unsupported("unterminated array")
            if self.s[self.i] == ")":
                self.i += 1
                return None if any(w.raw.startswith("[") for w in words) else words
            if self.s[self.i] in "#(;&|<>":
                raise Unsupported("array element")
            start = self.i
            words.append(self.lex_word(out, self.meta))
            if self.i == start:
                raise Unsupported("array element")

    def lex_words_until(self, out: list[Event], end: str) -> None:
        """Read words (running their substitutions) up to ``end`` or a separator; keep none."""
        test = end == "]]"
        meta = frozenset(" \t\n") if test else self.meta
        while True:
            self.skip_blank()
            if self.i >= self.n or (not test and self.s[self.i] in "\n;&|"):
                return
            if test and self.s[self.i] == "\n":
                self.i += 1
                continue
            if test and self.s.startswith("]]", self.i) and self.s[self.i + 2 : self.i + 3] in ("", *" \t\n;&|)"):
                self.i += 2  # `[[ … ]];` ends at `]]` even with a separator right after it
                return
            if self.s[self.i] in meta:
                self.i += 1
                continue
            if self.lex_word(out, meta).literal() == end:
                return

    def sub_parser(self, text: str) -> _Parser:
        return _Parser(text, self.ps)


def _assignment(word: Word) -> tuple[str, Word] | None:
    first = word.parts[0] if word.parts else None
    if first is None or first.kind != "l" or first.quoted or not first.text or first.text[0] not in NAME_START:
        return None
    text = first.text
    j = 1
    while j < len(text) and text[j] in NAME_CHARS:
        j += 1
    if text.startswith("[", j):  # NAME[SUBSCRIPT]=value: one element (hook/shell/elements.py)
        close = text.find("]", j)
        if close < 0:  # the subscript runs into an expansion: an element no reader can place
            return (text[:j] + "[?]", Word([], "")) if any(p.kind != "l" for p in word.parts) else None
        j = close + 1
    if text.startswith("+=", j):
        value_at, name = j + 2, text[:j] + "+"  # NAME+=value appends (hook/shell/interpreter.py)
    elif text.startswith("=", j):
        value_at, name = j + 1, text[:j]
    else:
        return None
    rest = [Part("l", text[value_at:], False)] if text[value_at:] else []
    return name, Word(rest + word.parts[1:], word.raw[value_at:])
