"""The token level of the shell reader (hook/shell/parser.py): blanks, comments, operators, keywords,
redirections and heredoc bodies, read at ``self.i`` of ``self.s``. Split from the parser to keep each
module small; imported with it, never alone."""

from __future__ import annotations

from hook.shell.lexer import NAME_CHARS, WordLexer
from hook.shell.syntax import Event, Later, Part, Redirect, Unsupported, Word

_BLANK = frozenset(" \t\r")
_TRANSPARENT = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}"})
UNSUPPORTED = frozenset({"function", "coproc"})
"""Keywords the fast reader leaves to tree-sitter."""
_REDIRECTS = ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&", ">|", ">", "&>>", "&>")


class TokenReader(WordLexer):
    meta: frozenset[str]
    pending: list[tuple[Redirect, str, bool, Later]]  # heredocs awaiting a body

    # --- tokens --------------------------------------------------------------------------------
    def skip_blank(self) -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in _BLANK:
                self.i += 1
            elif c == self.esc and s.startswith("\n", self.i + 1):
                self.i += 2
            elif c == self.esc and s.startswith("\r\n", self.i + 1):
                self.i += 3
            else:
                return

    def skip_comment(self) -> None:
        if self.ps and self.s.startswith("<#", self.i):
            end = self.s.find("#>", self.i)
            self.i = self.n if end < 0 else end + 2
            return
        end = self.s.find("\n", self.i)
        self.i = self.n if end < 0 else end

    def operator(self) -> str:
        for op in (";;&", "&&", "||", ";;", ";&", "|&", "|", "&", ";"):
            if self.s.startswith(op, self.i):
                self.i += len(op)
                return op
        return ""  # pragma: no cover - callers check the first character

    def peek_keyword(self) -> str | None:
        s, j = self.s, self.i
        while j < self.n and s[j] not in self.meta and s[j] not in "'\"\\$`":
            j += 1
        word = s[self.i : j]
        if j < self.n and s[j] not in " \t\n;&|)":  # `$(case … esac)`: a keyword ends at `)` too
            return None
        if word in _TRANSPARENT or word in UNSUPPORTED or word in ("for", "[[", "time", "case", "esac", "select"):
            if self.ps and word not in ("if", "else", "elif", "while", "do", "for"):
                return None
            return word
        return None

    def placeholder(self) -> Word | None:
        """``<PR>``, ``<branch-name>``: a template slot an agent did not fill; an unknown word."""
        s, j = self.s, self.i + 1
        while j < self.n and (s[j] in NAME_CHARS or s[j] == "-"):
            j += 1
        if j == self.i + 1 or j >= self.n or s[j] != ">" or (j + 1 < self.n and s[j + 1] not in " \t\n;|&)"):
            return None
        raw = s[self.i : j + 1]
        self.i = j + 1
        return Word([Part("d", raw, False)], raw)

    def redirect(self, out: list[Event]) -> Redirect | None:
        s, j = self.s, self.i
        if s[j] == "{":
            close = s.find("}", j)
            if close < 0 or not s[j + 1 : close].isidentifier():
                return None
            j = close + 1
        while j < self.n and s[j].isdigit():
            j += 1
        for op in _REDIRECTS:
            if s.startswith(op, j):
                break
        else:
            return None
        if self.ps and op.startswith("<"):
            return None
        self.i = j + len(op)
        self.skip_blank()
        target = self.lex_word(out, self.meta)
        if op not in ("<<", "<<-"):
            return Redirect(op, target)
        red = Redirect(op, None, quoted=any(p.quoted for p in target.parts) or "\\" in target.raw)
        delim = "".join(p.text for p in target.parts)
        later = Later()  # the body's substitutions run here, before the command
        out.append(later)
        self.pending.append((red, delim, op == "<<-", later))
        return red

    def read_heredocs(self) -> None:
        s = self.s
        for red, delim, strip_tabs, later in self.pending:
            lines: list[str] = []
            while self.i < self.n:
                end = s.find("\n", self.i)
                line = s[self.i : end if end >= 0 else self.n]
                self.i = self.n if end < 0 else end + 1
                if strip_tabs:
                    line = line.lstrip("\t")
                if line.rstrip("\r") == delim:
                    break
                lines.append(line)
            body = "\n".join(lines) + "\n" if lines else ""
            if red.quoted:
                red.body = Word([Part("l", body, True)], body)
            else:  # an unquoted heredoc expands: its substitutions run
                red.body = self.sub_parser(body).lex_text(later.events)
        self.pending = []

    def skip_balanced(self, opened: int) -> None:
        """Skip ``((…))``, ``$((…))`` or ``=( … )`` from just after the opening parentheses."""
        depth, s = opened, self.s
        self.i += opened
        while self.i < self.n and depth:
            depth += {"(": 1, ")": -1}.get(s[self.i], 0)
            self.i += 1
        if depth:
            raise Unsupported("unbalanced (")

