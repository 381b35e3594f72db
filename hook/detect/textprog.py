"""Text tools that can run what they compute: GNU ``sed``'s ``e`` command and ``s///e`` flag, awk's
``system()`` and pipes, GNU ``parallel``. The command line each runs is built at run time from the
text flowing through them, so such a use is undetermined (design §6); any other use runs nothing.
Editors (vim, ex, emacs) run the commands they are given, not the files they open.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command


def sed(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    scripts: list[str] = []
    k = 1
    while k < len(args):
        a = args[k][0]
        if a in ("-e", "--expression") and k + 1 < len(args):
            scripts.append(args[k + 1][0])
            k += 2
            continue
        if a.startswith("--expression="):
            scripts.append(a.partition("=")[2])
        elif a.startswith("-e") and len(a) > 2:
            scripts.append(a[2:])
        elif not a.startswith("-") and not scripts:
            scripts.append(a)
            break
        k += 1
    if any(_sed_runs(script) for script in scripts):
        ctx.runtime("sed runs what it computes (the e command or the s///e flag)")
    words = [a[0] for a in args[1:]]
    if any(w == "--in-place" or w.startswith("--in-place=") or _in_place(w) for w in words):
        # `sed -i SCRIPT FILE…` rewrites the files: what it may put there is in its script (hook/detect/planted.py)
        after = words[words.index(scripts[0]) + 1 :] if scripts and scripts[0] in words else words
        for name in (w for w in after if not w.startswith("-") and DYN not in w):
            ctx.planted(ctx.path(name), "\n".join(scripts), append=False, exact=False)


def _in_place(word: str) -> bool:
    """``-i``, ``-i.bak``, ``-Ei``, ``-ni``: a cluster whose flags before ``i`` take no value."""
    if not word.startswith("-") or word.startswith("--") or "i" not in word:
        return False
    return set(word[1 : word.index("i")]) <= set("nErszu")


def _sed_runs(script: str) -> bool:
    """Whether a sed script may use ``e``: read command by command; what is not read counts as yes."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!0123456789$,":
            i += 1
            continue
        if c in "/\\":  # an address /re/ or \cREc
            if c == "\\":
                i += 1
            i = _skip_delimited(script, i, 1)
            if i < 0:
                return True
            continue
        if c == "e":
            return True
        if c in "sy":
            i = _skip_delimited(script, i + 1, 2)
            if i < 0:
                return True
            flags = i
            while i < n and script[i] not in ";\n}":
                i += 1
            if c == "s" and "e" in script[flags:i].split("w", 1)[0]:
                return True
            continue
        if c in "aictbTrRwW:#":  # text, a label or a file name to the end of the line
            end = script.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c.isalpha() or c == "=":
            i += 1
            continue
        return True
    return False


def _skip_delimited(text: str, at: int, parts: int) -> int:
    """After the delimiter at ``at``: skip ``parts`` delimited parts; -1 when they do not close."""
    if at >= len(text):
        return -1
    delimiter, i = text[at], at + 1
    while parts:
        if i >= len(text):
            return -1
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delimiter:
            parts -= 1
        i += 1
    return i


def awk(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``system(…)``, ``print | "cmd"``, ``"cmd" | getline``: a command line built at run time."""
    program = next((a[0] for a in args[1:] if not a[0].startswith("-")), "")
    code = _awk_code(program)
    if "system" in code or "|" in code.replace("||", "") or any(a[0] in ("-f", "--file") for a in args[1:]):
        ctx.runtime("awk runs commands it builds")


def _awk_code(program: str) -> str:
    """The program without its string and regex literals (``/a|b/`` is no pipe)."""
    out: list[str] = []
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        before = "".join(out).rstrip()[-1:]
        if c == '"' or (c == "/" and (not before or before in "~(,{;!&|=\n")):
            j = i + 1
            while j < n and program[j] != c:
                j += 2 if program[j] == "\\" else 1
            out.append(" ")
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def parallel(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """GNU parallel builds its command lines from arguments and input."""
    ctx.runtime("parallel runs command lines it builds")


_EDITOR_CODE = frozenset({"-c", "--cmd", "--eval", "-eval", "-x", "--execute", "-f", "--funcall"})
_EDITOR_FILES = frozenset({"-S", "-l", "--load", "--script", "-u"})


def editor(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """vim, ex, emacs: the files they open are the user's; the commands they are given (``-c CMD``, ``+CMD``,
    ``--eval FORM``, a script with ``-S``/``-l``, ex commands on stdin) may run a shell (``:!cmd``,
    ``system()``): judged by the rule for programs the guard does not read (hook/detect/opaque.py)."""
    from hook.detect.opaque import opaque

    code: list[Arg] = []
    emacsclient = args[0][0].rsplit("/", 1)[-1] == "emacsclient"
    k = 1
    while k < len(args):
        a = args[k][0]
        if (a in _EDITOR_CODE or (emacsclient and a == "-e")) and k + 1 < len(args):
            code.append(args[k + 1])
            k += 2
            continue
        if a in _EDITOR_FILES and k + 1 < len(args):
            text = ctx.read_file(args[k + 1][0]) if DYN not in args[k + 1][0] else None
            code.append((text if text is not None else DYN, None))
            k += 2
            continue
        if a.startswith("+") and len(a) > 1:
            code.append((a[1:], None))
        elif a.startswith("--eval=") or a.startswith("--cmd="):
            code.append((a.partition("=")[2], None))
        k += 1
    reads_stdin = args[0][0].rsplit("/", 1)[-1] == "ex" or any(
        a[0].startswith("-") and not a[0].startswith("--") and ("e" in a[0] or "s" in a[0]) for a in args[1:])
    opaque(ctx, args[0][0], [args[0], *code], cmd if reads_stdin else None, what="an editor given commands",
           files=False)
    from hook.detect.code import code as program_code

    for text, _ in code:
        if DYN not in text and ("!" in text or "system" in text or "shell" in text or "call-process" in text):
            program_code(ctx, text)
