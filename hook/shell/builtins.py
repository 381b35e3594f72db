"""Builtins whose effect the interpreter follows only when they run: the variables ``read``,
``mapfile``, ``getopts``, ``let``, ``printf -v``, ``declare`` and ``source`` may assign, ``set``/``shift``
on the positional parameters, ``printf``'s output and the decoders (``base64 -d``, ``rev``, ``xxd -r``).
Imported on first use, so a plain command pays nothing for them (start-up budget, design §7).
"""

from __future__ import annotations

from hook.shell.expansion import one_word
from hook.shell.syntax import ALLEXPORT, DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    from hook.shell.expansion import Arg

    class Shell(Protocol):
        """What these builtins change of hook/shell/interpreter.py's Shell (which imports this lazily)."""

        vars: dict[str, str | None]
        computed: set[str]
        positional: list[str] | None
        exported: set[str]
        frames: list[dict[str, str | None]]

        def setvar(self, name: str, value: str | None) -> None: ...
        def poison(self) -> None: ...
        def set_positional(self, params: list[str] | None) -> None: ...


def assigns(sh: Shell, args: list[Arg]) -> None:
    """Variables that builtins assign from what only the run knows (``read x``, ``printf -v x``)."""
    name = args[0][0]
    words = [a[0] for a in args[1:]]
    if name in ("read", "mapfile", "readarray"):
        valued = "adinNptu" if name == "read" else "dnOsuCc"
        targets, k = [], 0
        while k < len(words):
            word = words[k]
            if word.startswith("-") and len(word) > 1:
                letter = word[-1]
                if letter in valued and len(word) == 2:
                    if letter == "a" and k + 1 < len(words):
                        targets.append(words[k + 1])
                    k += 1
            else:
                targets.append(word)
            k += 1
        default = "REPLY" if name == "read" else "MAPFILE"
        for target in targets or [default]:
            sh.setvar(target, DYN)
    elif name == "getopts":
        for target in [*words[1:2], "OPTARG", "OPTIND"]:
            sh.setvar(target, DYN)
    elif name == "let":
        from hook.shell.lexer import names_in

        for target in names_in(" ".join(words)):
            sh.setvar(target, DYN)
    elif name == "printf":
        for k, word in enumerate(words):
            if word == "-v" and k + 1 < len(words):
                sh.setvar(words[k + 1].split("[")[0], DYN)
            elif word.startswith("-v") and len(word) > 2:
                sh.setvar(word[2:].split("[")[0], DYN)
    elif name in ("set", "shift"):
        _set_or_shift(sh, name, args)
    elif name in ("declare", "typeset", "local", "export", "readonly"):
        # in a function, declare/typeset/local make a local; export and readonly do not
        if sh.frames and name not in ("export", "readonly") and not any(
                "g" in w[1:] for w in words if w.startswith("-")):
            frame = sh.frames[-1]
            for word in words:
                target = word.split("=", 1)[0]
                if not word.startswith(("-", "+")) and target not in frame:
                    frame[target] = sh.vars.get(target) if target in sh.vars else None
        letters = {c for w in words if w.startswith(("-", "+")) for c in w[1:]}
        if "n" in letters or any(DYN in w for w in words):
            sh.poison()
        elif letters - {"x", "r", "g", "p", "f", "F"}:  # -i, -l, -u, -a, -A: stored != assigned
            for word in words:
                if not word.startswith(("-", "+")):
                    target = word.split("=", 1)[0]
                    sh.computed.add(target)
                    sh.setvar(target, DYN)
    elif name in ("source", "."):
        sh.poison()  # hook/detect/dispatch.py runs what it can see of the file after this

def _set_or_shift(sh: Shell, name: str, args: list[Arg]) -> None:
    words = [a[0] for a in args[1:]]
    if not all(one_word(a) for a in args[1:]):
        sh.set_positional(None)
    elif name == "shift":
        params = sh.positional
        count = int(words[0]) if words and words[0].isdigit() else (1 if not words else -1)
        if params is None or count < 0:
            sh.set_positional(None)
        elif count <= len(params):  # shifting more than $# fails and changes nothing
            sh.set_positional(params[count:])
    else:
        k = 0
        while k < len(words):
            word = words[k]
            allexport = ("a" in word[1:] and word[1:2] != "-") or (
                word[1:] == "o" and words[k + 1 : k + 2] == ["allexport"])
            if word[:1] in ("-", "+") and allexport:  # set -a, set -o allexport; +a / +o allexport: off
                (sh.exported.add if word[0] == "-" else sh.exported.discard)(ALLEXPORT)
            if word in ("--", "-"):
                sh.set_positional(words[k + 1 :])
                return
            if not word.startswith(("-", "+")):
                sh.set_positional(words[k:])
                return
            k += 2 if word in ("-o", "+o") else 1


def printf(fmt: str, args: list[str]) -> str | None:
    """What ``printf FORMAT ARGS`` prints, for ``%s``, ``%d``, ``%%`` and the common escapes; the
    format is reused while arguments remain. None for anything else (widths, ``%q``, ``%b``...)."""
    out: list[str] = []
    rest = list(args)
    while True:
        i, used = 0, False
        while i < len(fmt):
            c = fmt[i]
            if c == "\\" and i + 1 < len(fmt):
                escaped = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", '"': '"', "'": "'"}.get(fmt[i + 1])
                if escaped is None:
                    return None
                out.append(escaped)
                i += 2
            elif c == "%" and i + 1 < len(fmt):
                spec = fmt[i + 1]
                if spec == "%":
                    out.append("%")
                elif spec in "sdi":
                    value = rest.pop(0) if rest else ("" if spec == "s" else "0")
                    used = True
                    if spec != "s":
                        if not value.lstrip("-").isdigit():
                            return None
                        value = str(int(value))
                    out.append(value)
                else:
                    return None
                i += 2
            else:
                out.append(c)
                i += 1
        if not rest or not used:
            return "".join(out)


def decode(name: str, flags: list[str], text: str) -> str | None:
    """Undo base64 -d, rev and xxd -r -p on known text: obfuscation seen through."""
    import binascii

    try:
        if name == "base64" and any(f in ("-d", "--decode", "-D", "-di", "-id") for f in flags):
            import base64

            raw = base64.b64decode("".join(text.split()))
        elif name == "xxd" and "-r" in flags and "-p" in flags:
            raw = binascii.unhexlify("".join(text.split()))
        elif name == "rev":
            return "\n".join(line[::-1] for line in text.split("\n"))
        else:
            return None
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
