"""Command lines read the way gh's flag library (spf13/pflag under cobra) reads them, exactly or not
at all: the soundness rule (design §6) says a flag this reader does not know, a value it cannot see
or a malformed form makes the answer undetermined, never a guess.

pflag's rules modelled here: ``--name=value`` and ``--name value``; ``-x value``, ``-xvalue`` and
``-x=value`` (the ``=`` right after the letter is dropped); bool clusters (``-sd``) whose last letter
may take a value (``-dR o/r``); bools given a value (``--auto=false``, strconv.ParseBool spellings);
arguments interspersed with flags; ``--`` ends flags; a value flag takes the next argument whatever
it looks like; the last occurrence of a flag wins.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.shell.expansion import Arg

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FlagSet:
    """A command's flags: long name -> takes a value; short letter -> long name."""

    __slots__ = ("bools", "shorts", "values")

    def __init__(self, bools: frozenset[str], values: frozenset[str], shorts: dict[str, str]) -> None:
        self.bools, self.values, self.shorts = bools, values, shorts


class Parsed:
    """``flags``: long name -> its last value (``"true"``/``"false"`` for bools); ``positional``:
    the arguments; ``problem``: why the reading is not exact (None when it is)."""

    __slots__ = ("certain", "flags", "positional", "problem")

    def __init__(self) -> None:
        self.flags: dict[str, str] = {}
        self.positional: list[str] = []
        self.problem: str | None = None
        self.certain = True  # False once an argument that might be a flag went by

    def sure(self, name: str) -> bool:
        """Whether flag ``name`` (set or not) is known: set after the last argument that might be a
        flag, or no such argument at all."""
        return self.certain or name in self.flags

    def fail(self, why: str) -> Parsed:
        if self.problem is None:
            self.problem = why
        return self


def exact(arg: Arg) -> bool:
    """One argument whose text is known, or whose unknown pieces are all quoted (so it is exactly
    one argument): an unquoted unknown expansion may be zero words, or several."""
    text, word = arg
    if DYN not in text:
        return True
    return word is not None and all(p.quoted or p.kind == "l" for p in word.parts)


def may_be_flag(arg: Arg) -> bool:
    """An argument computed at run time that may be an option, or several words, or none. An option
    whose name is in the text (``--header="Bearer $T"``, ``-H$X``) is that option."""
    text = arg[0]
    if not exact(arg) or text.startswith(DYN):
        return True
    if text.startswith("--"):
        return DYN in text.partition("=")[0]
    return text.startswith("-") and text[1:2] == DYN


def parse(args: list[Arg], flagset: FlagSet) -> Parsed:
    out = Parsed()
    i = 0
    while i < len(args):
        text = args[i][0]
        if may_be_flag(args[i]):
            # may be a flag, several words or none: what came before may be overridden
            out.fail("an argument computed at run time")
            out.certain = False
            out.flags.clear()
            out.positional.append(DYN)  # or a selector: either way what it selects is unknown
            i += 1
            continue
        if text == "--":
            out.positional.extend(a[0] for a in args[i + 1 :])
            if not all(exact(a) for a in args[i + 1 :]):
                out.fail("an argument computed at run time")
            break
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if name in flagset.bools:
                if eq and value not in _TRUE and value not in _FALSE:
                    return out.fail(f"--{name}={value}: not a bool")
                out.flags[name] = "false" if eq and value in _FALSE else "true"
            elif name in flagset.values:
                if not eq:
                    if i + 1 >= len(args) or not exact(args[i + 1]):
                        return out.fail(f"--{name} without a value this reader can see")
                    i += 1
                    value = args[i][0]
                out.flags[name] = value
            else:
                return out.fail(f"--{name}: a flag this reader does not know")
        elif text.startswith("-") and text != "-":
            k = 1
            while k < len(text):
                if text[k] not in flagset.shorts:
                    return out.fail(f"-{text[k]}: a flag this reader does not know")
                name = flagset.shorts[text[k]]
                rest = text[k + 1 :]
                if name in flagset.values:
                    if rest.startswith("="):
                        rest = rest[1:]
                    if not rest:
                        if i + 1 >= len(args) or not exact(args[i + 1]):
                            return out.fail(f"-{text[k]} without a value this reader can see")
                        i += 1
                        rest = args[i][0]
                    out.flags[name] = rest
                    break
                if rest.startswith("="):
                    value = rest[1:]
                    if value not in _TRUE and value not in _FALSE:
                        return out.fail(f"-{text[k]}={value}: not a bool")
                    out.flags[name] = "false" if value in _FALSE else "true"
                    break
                out.flags[name] = "true"
                k += 1
        else:
            out.positional.append(text)
        i += 1
    return out
