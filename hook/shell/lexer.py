"""The word half of hook/shell/parser.py: quoting, escapes and expansions inside one shell word.

A word becomes a list of `Part`s: literal text, a variable, a command substitution (whose commands
are emitted as events, since they run) or a dynamic piece nobody can know before run time. Quote
removal happens here, so ``g''h``, ``"gh"`` and ``\\gh`` all read ``gh``. Imports only the syntax
types (start-up budget, design §7).
"""

from __future__ import annotations

from hook.shell.syntax import DYN, Command, Part, Unsupported, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.shell.syntax import Event

NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
NAME_CHARS = NAME_START | frozenset("0123456789")
_ANSI_C = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f",
           "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_PS_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v", "0": ""}
_WORD_SPECIAL = frozenset("'\"$`\\~@" + DYN)
_HEX = frozenset("0123456789abcdefABCDEF")


class WordLexer:
    """Mixed into the parser: reads words at ``self.i`` of ``self.s``."""

    s: str
    i: int
    n: int
    ps: bool
    esc: str

    def parse(self) -> list[Event]:
        raise NotImplementedError

    def parse_list(self, out: list[Event], closer: str | None) -> None:
        raise NotImplementedError

    def sub_parser(self, text: str) -> WordLexer:
        raise NotImplementedError

    def skip_balanced(self, opened: int) -> None:
        raise NotImplementedError

    def lex_word(self, out: list[Event], meta: frozenset[str]) -> Word:
        s, start = self.s, self.i
        parts: list[Part] = []
        if s.startswith(("<(", ">("), start):  # process substitution: its commands run
            self.i += 2
            self.substitution(parts, out, start, False)
            parts[-1].kind = "d"
            return Word(parts, s[start : self.i])
        while self.i < self.n:
            c = s[self.i]
            if c in meta:
                break
            if c not in _WORD_SPECIAL:
                j = self.i + 1
                while j < self.n and s[j] not in meta and s[j] not in _WORD_SPECIAL:
                    j += 1
                parts.append(Part("l", s[self.i : j], False))
                self.i = j
            elif c == self.esc:
                nxt = s[self.i + 1 : self.i + 2]
                self.i += 2
                if nxt != "\n":
                    parts.append(Part("l", _PS_ESC.get(nxt, nxt) if self.ps else nxt, True))
            elif c == "'":
                self.single_quoted(parts)
            elif c == '"':
                self.i += 1
                self.double_quoted(parts, out, '"')
            elif c == "$":
                self.dollar(parts, out, False)
            elif c == "`":  # bash command substitution (in PowerShell the escape, handled above)
                self.backtick(parts, out, False)
            elif c == DYN:
                parts.append(Part("d", "", False))
                self.i += 1
            elif c == "~" and self.i == start and s[self.i + 1 : self.i + 2] in ("/", "") and not self.ps:
                parts.append(Part("v", "HOME", True))  # tilde expansion is not split into words
                self.i += 1
            elif c == "@" and self.ps and s.startswith(("@'", '@"', "@("), self.i):
                self.ps_at(parts, out)
            else:
                parts.append(Part("l", c, False))
                self.i += 1
        return Word(parts, s[start : self.i])

    def lex_text(self, out: list[Event]) -> Word:
        """A whole text read like the inside of double quotes (an unquoted heredoc's body)."""
        parts: list[Part] = []
        self.double_quoted(parts, out, None)
        return Word(parts, self.s)

    def single_quoted(self, parts: list[Part]) -> None:
        s = self.s
        text = ""
        while True:
            end = s.find("'", self.i + 1)
            if end < 0:
                raise Unsupported("unterminated '")
            text += s[self.i + 1 : end]
            self.i = end + 1
            if not (self.ps and s.startswith("'", self.i)):  # PowerShell doubles a quote to escape it
                break
            text += "'"
        parts.append(Part("l", text, True))

    def double_quoted(self, parts: list[Part], out: list[Event], closer: str | None) -> None:
        s, buf = self.s, []
        while True:
            if self.i >= self.n:
                if closer:
                    raise Unsupported("unterminated quote")
                break
            c = s[self.i]
            if c == closer:
                if self.ps and s.startswith('""', self.i):
                    buf.append('"')
                    self.i += 2
                    continue
                self.i += 1
                break
            if c == self.esc:
                nxt = s[self.i + 1 : self.i + 2]
                self.i += 2
                if self.ps:
                    buf.append(_PS_ESC.get(nxt, nxt))
                elif nxt in ("$", "`", '"', "\\") and (nxt != '"' or closer):
                    buf.append(nxt)
                elif nxt != "\n":
                    buf.append("\\" + nxt)
            elif c in "$`" and not (c == "`" and self.ps):
                if buf:
                    parts.append(Part("l", "".join(buf), True))
                    buf = []
                if c == "$":
                    self.dollar(parts, out, True)
                else:
                    self.backtick(parts, out, True)
            elif c == DYN:
                if buf:
                    parts.append(Part("l", "".join(buf), True))
                    buf = []
                parts.append(Part("d", "", True))
                self.i += 1
            else:
                buf.append(c)
                self.i += 1
        if buf or not parts:
            parts.append(Part("l", "".join(buf), True))

    def dollar(self, parts: list[Part], out: list[Event], quoted: bool) -> None:
        s, start = self.s, self.i
        nxt = s[self.i + 1 : self.i + 2]
        if nxt == "'" and not quoted and not self.ps:
            self.i += 1
            parts.append(Part("l", self.ansi_c(), True))
        elif nxt == '"' and not quoted and not self.ps:
            self.i += 2
            self.double_quoted(parts, out, '"')
        elif s.startswith("$((", self.i) and not self.ps:
            self.i += 1
            self.skip_balanced(2)
            parts.append(Part("d", s[start : self.i], quoted))
            self.arithmetic(s[start + 3 : self.i - 2], out)
        elif nxt == "(":
            self.i += 2
            self.substitution(parts, out, start, quoted)
        elif nxt == "{":
            end = self.closing_brace(self.i + 1)
            body = s[self.i + 2 : end]
            self.i = end + 1
            if self.ps and body.lower().startswith("env:"):
                body = "env:" + body[4:]
            if body.isidentifier() or body.isdigit() or body in ("@", "*", "#") or _subscript(body) or (
                    self.ps and body[4:].isidentifier()):
                parts.append(Part("v", body, quoted))
            else:  # ${X:-y}, ${X#z}, ${{ github.expr }}: beyond a detector's reach
                parts.append(Part("d", s[start : self.i], quoted))
                self.run_nested(body, out)
        elif nxt and nxt in NAME_START:
            j = self.i + 1
            while j < self.n and (s[j] in NAME_CHARS or (self.ps and s[j] == ":" and s[start + 1 : j] == "env")):
                j += 1
            name = s[self.i + 1 : j]
            self.i = j
            parts.append(Part("v", "env:" + name[4:] if self.ps and name.lower().startswith("env:") else name,
                              quoted))
        elif (nxt.isdigit() and not self.ps) or (nxt and nxt in "@*#" and not self.ps):
            self.i += 2
            parts.append(Part("v", nxt, quoted))
        elif nxt and nxt in "@*#?$!-_":
            self.i += 2
            parts.append(Part("d", s[start : self.i], quoted))
        else:
            self.i += 1
            parts.append(Part("l", "$", quoted))

    def substitution(self, parts: list[Part], out: list[Event], start: int, quoted: bool) -> None:
        """After ``$(``: the commands inside run first, in a subshell."""
        inner: list[Event] = []
        self.parse_list(inner, ")")
        out.append("(")
        out.extend(inner)
        out.append(")")
        parts.append(Part("s", self.s[start : self.i], quoted, inner))

    def backtick(self, parts: list[Part], out: list[Event], quoted: bool) -> None:
        s, j = self.s, self.i + 1
        while j < self.n and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= self.n:
            raise Unsupported("unterminated `")
        text = s[self.i + 1 : j].replace("\\\\", "\x01").replace("\\`", "`").replace("\\$", "$")
        inner = self.sub_parser(text.replace("\x01", "\\")).parse()
        out.append("(")
        out.extend(inner)
        out.append(")")
        parts.append(Part("s", s[self.i : j + 1], quoted, inner))
        self.i = j + 1

    def arithmetic(self, text: str, out: list[Event], *, assigns: bool = False) -> None:
        """``((…))``, ``$((…))``, ``for ((…))``: substitutions inside still run, and a variable the
        expression may assign (``=``, ``+=``, ``++``, ``--``) is unknown afterwards."""
        self.run_nested(text, out)
        for name in assigned_names(text, always=assigns):
            out.append(Command([], [(name, Word([Part("d", "", False)], "$" + name))], []))

    def run_nested(self, text: str, out: list[Event]) -> None:
        """``${X:-$(cmd)}``, ``$(( $(cmd) + 1 ))``: the value is unknown but ``cmd`` still runs."""
        if "$(" in text or "`" in text:
            self.sub_parser(text).lex_text(out)

    def closing_brace(self, at: int) -> int:
        depth, j, s = 0, at, self.s
        while j < self.n:
            c = s[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return j
            elif c == "\\":
                j += 1
            j += 1
        raise Unsupported("unterminated ${")

    def ansi_c(self) -> str:
        """``$'...'`` with its escapes decoded (``$'\\x67\\x68'`` is ``gh``); ``self.i`` at the quote."""
        s, out = self.s, []
        j = self.i + 1
        while j < self.n and s[j] != "'":
            c = s[j]
            if c != "\\" or j + 1 >= self.n:
                out.append(c)
                j += 1
                continue
            e = s[j + 1]
            j += 2
            if e in _ANSI_C:
                out.append(_ANSI_C[e])
            elif e in "xuU":
                width = {"x": 2, "u": 4, "U": 8}[e]
                k = j
                while k < self.n and k - j < width and s[k] in _HEX:
                    k += 1
                out.append(chr(int(s[j:k], 16)) if k > j else "\\" + e)
                j = k
            elif e in "01234567":
                k = j - 1
                while k < self.n and k - (j - 1) < 3 and s[k] in "01234567":
                    k += 1
                out.append(chr(int(s[j - 1 : k], 8)))
                j = k
            else:
                out.append("\\" + e)
        if j >= self.n:
            raise Unsupported("unterminated $'")
        self.i = j + 1
        return "".join(out)

    def ps_at(self, parts: list[Part], out: list[Event]) -> None:
        """PowerShell ``@(...)`` (an array subexpression) and ``@'...'@`` / ``@"..."@`` here-strings."""
        s, start = self.s, self.i
        if s[self.i + 1] == "(":
            self.i += 2
            self.substitution(parts, out, start, False)
            return
        quote = s[self.i + 1]
        end = s.find("\n" + quote + "@", self.i + 2)
        if end < 0:
            raise Unsupported("unterminated here-string")
        body = s[s.find("\n", self.i) + 1 : end]
        self.i = end + 3
        if quote == "'":
            parts.append(Part("l", body, True))
        else:
            parts.extend(self.sub_parser(body).lex_text(out).parts)


def assigned_names(text: str, *, always: bool = False) -> list[str]:
    """The variables an arithmetic expression may assign (``=``, ``+=``, ``++``, ``--``): all it names."""
    bare = text.replace("==", "").replace("!=", "").replace("<=", "").replace(">=", "")
    return names_in(text) if always or "=" in bare or "++" in bare or "--" in bare else []


def names_in(text: str) -> list[str]:
    """The shell variable names an arithmetic expression mentions."""
    names, j, n = [], 0, len(text)
    while j < n:
        if text[j] in NAME_START and (j == 0 or text[j - 1] not in NAME_CHARS):
            k = j + 1
            while k < n and text[k] in NAME_CHARS:
                k += 1
            names.append(text[j:k])
            j = k
        else:
            j += 1
    return names


def _subscript(body: str) -> bool:
    """``a[@]``, ``a[*]``, ``a[3]``, ``#a[@]``: array elements and counts (hook/shell/expansion.py)."""
    name, bracket, index = body.removeprefix("#").partition("[")
    return bool(bracket) and name.isidentifier() and index.endswith("]") and (
        index[:-1] in ("@", "*") or (index[:-1].isdigit() and not body.startswith("#")))
