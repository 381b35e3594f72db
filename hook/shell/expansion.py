"""Word expansion as bash does it, after the parse: brace expansion (hook/shell/braces.py), parameters
(variables, positional parameters, ``"$@"``), command substitutions, then field splitting on IFS. A
word that may match files (unquoted ``*``, ``?``, ``[…]``) is unknown: the files are the run's.
Mixed into `Shell` (hook/shell/interpreter.py), which holds the state read here.
"""

from __future__ import annotations

from hook.shell.syntax import DYN, Event, Word, may_glob

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

Arg = tuple[str, Word | None]  # expanded text (DYN marks unknown pieces), the word it came from


def one_word(arg: Arg) -> bool:
    """Exactly one argument: known text, or unknown pieces that were all quoted."""
    text, word = arg
    return DYN not in text or (word is not None and all(p.quoted or p.kind == "l" for p in word.parts))


class Expansion:
    vars: dict[str, str | None]
    env: Mapping[str, str]
    cwd: str | None
    env_unknown: bool
    positional: list[str] | None  # $1 ... (None: unknown, as at the top of an agent's command)
    arrays: dict[str, list[str] | None]
    unset: set[str]  # names surely unset (`unset NAME` ran)

    def substitution(self, inner: list[Event]) -> str | None:
        raise NotImplementedError

    def set_positional(self, params: list[str] | None) -> None:
        """``set -- a b``, a function call, ``bash -c TEXT $0 $1 ...``."""
        self.positional = params

    def _elements(self, name: str) -> list[str] | None:
        """An array's elements; a plain variable is an array of one; unset is empty."""
        if name in self.arrays:
            return self.arrays[name]
        if name in self.vars:
            value = self.vars[name]
            return None if value is None or DYN in value else [value]
        if name in self.unset:
            return []
        if self.env_unknown:
            return None
        return [self.env[name]] if name in self.env else []

    def _parameter_operation(self, body: str) -> str:
        """``${#v}`` and the operators on a variable the text set, modelled exactly where the words are
        plain text (no quotes, patterns or expansions): ``#``/``##``/``%``/``%%`` (a prefix or suffix),
        ``/``/``//``/``/#``/``/%`` (replacement; ``&`` in it means the match since bash 5.2: unknown),
        ``^^``/``,,``/``^``/``,`` (case of ASCII text), ``:OFFSET[:LENGTH]`` with integers, ``:-``/``-``
        and ``:+``/``+``. Anything else — and any variable only the run knows — is unknown."""
        if body.startswith("#") and body[1:].isidentifier():
            value = self._var(body[1:])
            return DYN if DYN in value else str(len(value))
        name_end = 0
        while name_end < len(body) and (body[name_end].isalnum() or body[name_end] == "_"):
            name_end += 1
        name, rest = body[:name_end], body[name_end:]
        if rest.startswith((":=", "=")) and name.isidentifier():
            self.vars[name] = DYN  # ${v:=x} may assign v: not followed
            return DYN
        op = next((o for o in _OPERATORS if rest.startswith(o)), None)
        if not name.isidentifier() or op is None:
            return DYN
        word = rest[len(op) :]
        if any(c in word for c in "$`'\"\\*?[{}~"):
            return DYN
        value = self._var(name)
        if DYN in value:
            return DYN
        if op in ("#", "##"):
            return value.removeprefix(word)
        if op in ("%", "%%"):
            return value.removesuffix(word)
        if op[0] == "/":
            return _replace(value, op, word)
        if op in ("^^", ",,", "^", ","):
            if word or not value.isascii():
                return DYN  # a pattern selecting the letters, or a locale's idea of case
            changed = value.upper() if op[0] == "^" else value.lower()
            return changed if len(op) == 2 else changed[:1] + value[1:]
        if op == ":":
            return _substring(value, word)
        if name in self.unset:  # ${v-x}, ${v+x}: unset is not empty
            return word if op in ("-", ":-") else ""
        if op in (":+", "+"):
            return word if value or op == "+" else ""
        return value if value else (word if op == ":-" else value)

    def _arith_var(self, name: str) -> str | None:
        value = self._var(name)
        return None if DYN in value else value

    def _parameter(self, name: str) -> str:
        params = self.positional
        if params is None:
            return DYN
        if name == "#":
            return str(len(params))
        if name in ("@", "*"):
            return " ".join(params)
        index = int(name)
        return params[index - 1] if index <= len(params) else ""

    def expand(self, words: list[Word]) -> list[Arg]:
        """A command's words as bash expands them: braces, then parameters and substitutions, then
        field splitting on IFS; a word that may match files (``*``, ``?``, ``[…]``) is unknown."""
        out: list[Arg] = []
        for word in words:
            braced = any(p.kind == "l" and not p.quoted and "{" in p.text for p in word.parts)
            if braced:  # loaded only for words that need it (start-up budget, design §7)
                from hook.shell.braces import expand_braces
            for variant in expand_braces(word) if braced else (word,):
                out.extend((field, word) for field in self._fields(variant, glob=True))
        return out

    def expand_one(self, word: Word) -> str:
        return " ".join(self._fields(word, glob=False)) if word.parts else ""

    def ifs(self) -> str | None:
        """The field separators (None: unknown). bash never takes IFS from the environment."""
        if "IFS" not in self.vars:
            return " \t\n"
        value = self.vars["IFS"]
        return None if value is None or DYN in value else value

    def _fields(self, word: Word, *, glob: bool) -> list[str]:
        fields: list[str] = []
        cur, exists = "", False  # the field being built; whether it exists (a quoted "" does)

        def unquoted(value: str) -> None:
            nonlocal cur, exists
            ifs = self.ifs()
            if DYN in value or (ifs is not None and not ifs):
                cur += value
                exists = exists or bool(value)
                return
            if ifs is None:  # IFS computed at run time: the fields are unknown
                cur += DYN
                exists = True
                return
            lead, pieces, trail = split_fields(value, ifs)
            if lead and exists:
                fields.append(cur)
                cur, exists = "", False
            if pieces:
                cur += pieces[0]
                exists = True
                for piece in pieces[1:]:
                    fields.append(cur)
                    cur = piece
            if trail and exists:
                fields.append(cur)
                cur, exists = "", False

        for part in word.parts:
            if part.kind == "l":
                cur += part.text + (DYN if glob and not part.quoted and may_glob(part.text) else "")
                exists = True
                continue
            params, which = self.positional, part.text
            if part.kind == "v" and "[" in part.text:  # ${a[@]}, ${a[*]}, ${a[3]}, ${#a[@]}
                name, _, index = part.text.partition("[")
                params, which = self._elements(name.removeprefix("#")), index[:-1]
                if name.startswith("#") or which.isdigit():
                    value = DYN if params is None else (
                        str(len(params)) if name.startswith("#") else
                        params[int(which)] if int(which) < len(params) else "")
                    if part.quoted:
                        cur += value
                        exists = True
                    else:
                        unquoted(value)
                    continue
                if params is None:
                    cur += DYN
                    exists = True
                    continue
            if part.kind == "v" and which in ("@", "*") and params is not None:
                if part.quoted and which == "@":  # "$@": one field per parameter, none without
                    for k, param in enumerate(params):
                        if k:
                            fields.append(cur)
                            cur = ""
                        cur += param
                        exists = True
                elif part.quoted:  # "$*": joined with IFS's first character
                    ifs = self.ifs()
                    cur += DYN if ifs is None else ifs[:1].join(params)
                    exists = True
                else:  # $@, $*: each parameter split on its own
                    for k, param in enumerate(params):
                        if k and exists:
                            fields.append(cur)
                            cur, exists = "", False
                        unquoted(param)
                continue
            if part.kind == "v":
                value = self._var(part.text)
            elif part.kind == "d" and part.text.startswith("${") and part.text.endswith("}"):
                value = self._parameter_operation(part.text[2:-1])
            elif part.kind == "d" and part.text.startswith("$((") and part.text.endswith("))"):
                from hook.shell.arith import evaluate

                number = evaluate(part.text[3:-2], self._arith_var)
                value = DYN if number is None else str(number)
            elif part.kind == "s" and part.inner is not None:
                output = self.substitution(part.inner)
                value = DYN if output is None else output
            else:
                value = DYN
            if part.quoted:
                cur += value
                exists = True
            else:
                unquoted(value)
        if exists:
            fields.append(cur)
        return fields

    def _var(self, name: str) -> str:
        if name.lower().startswith("env:"):
            name = name[4:]
        if (name.isdigit() and name != "0") or name in ("#", "@", "*"):
            return self._parameter(name)
        if name in self.arrays:  # $a is ${a[0]}
            elements = self.arrays[name]
            return DYN if elements is None else (elements[0] if elements else "")
        value = self.vars.get(name)
        if value is not None:
            return value
        if name in self.unset:
            return ""
        if name in self.vars or self.env_unknown:
            return DYN
        if name == "HOME" and self.env.get("HOME"):
            return self.env["HOME"]
        if name == "PWD" and self.cwd:
            return self.cwd
        return DYN



def split_fields(value: str, ifs: str) -> tuple[bool, list[str], bool]:
    """``(leading separator, fields, trailing separator)`` of an unquoted expansion, split as bash
    does: IFS white space is trimmed and runs of it separate once; each other IFS character ends a
    field (so ``,5`` is an empty field then ``5``); a separator at the end adds no empty field."""
    white = frozenset(c for c in ifs if c in " \t\n")
    n, i = len(value), 0
    while i < n and value[i] in white:
        i += 1
    lead = i > 0
    pieces: list[str] = []
    cur: list[str] = []
    trail = False
    while i < n:
        c = value[i]
        if c not in ifs:
            cur.append(c)
            i += 1
            continue
        while i < n and value[i] in white:
            i += 1
        if i < n and value[i] in ifs and value[i] not in white:
            i += 1
            while i < n and value[i] in white:
                i += 1
        pieces.append("".join(cur))
        cur = []
        trail = i >= n
    if cur:
        pieces.append("".join(cur))
    return lead, pieces, trail


_OPERATORS = ("##", "%%", ":-", ":+", "//", "/#", "/%", "^^", ",,", "#", "%", "-", "+", "/", "^", ",", ":")


def _replace(value: str, op: str, word: str) -> str:
    """``${v/pat/rep}`` and friends with a plain pattern and replacement."""
    pattern, _, replacement = word.partition("/")
    if "&" in replacement:
        return DYN
    if op == "/#":
        return replacement + value[len(pattern) :] if value.startswith(pattern) else value
    if op == "/%":
        if not pattern:
            return value + replacement
        return value[: -len(pattern)] + replacement if value.endswith(pattern) else value
    if not pattern:
        return value
    return value.replace(pattern, replacement, -1 if op == "//" else 1)


def _substring(value: str, word: str) -> str:
    """``${v:OFFSET}``, ``${v:OFFSET:LENGTH}`` with integer literals (negative: from the end)."""
    offset_text, colon, length_text = word.partition(":")
    numbers = [offset_text.strip(), length_text.strip()] if colon else [offset_text.strip()]
    if not all(n.removeprefix("-").isdigit() for n in numbers):
        return DYN  # an arithmetic expression: not modelled here
    start = int(numbers[0])
    if start < 0:
        start += len(value)
        if start < 0:
            return ""
    if not colon:
        return value[start:]
    length = int(numbers[1])
    end = start + length if length >= 0 else len(value) + length
    if end < start:
        return DYN  # bash stops the command: "substring expression < 0"
    return value[start:end]
