"""Launchers whose command line is more than "options, then the command" (issue 26 item 2), each read by its
grammar (hook/detect/grammars.py): ``env`` (assignments, ``-S`` splitting its string into more options and
words, ``-C``, ``-u``, ``-i``), ``su`` (GNU option order: ``su bob -lc CMD``), ``script`` (``-qec CMD``,
``--command=CMD``; BSD's ``script FILE CMD…``), ``watch`` (``-x`` runs the words, else ``sh -c`` their join) —
and `inexact`, for any launcher whose spelling the grammar does not settle: its command is read as a hint, and
what it merges is undetermined.
"""

from __future__ import annotations

from hook.detect.runstring import run_string
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hook.detect.context import Ctx
    from hook.detect.getopt import Grammar
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

    Dispatch = Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None]


def inexact(ctx: Ctx, name: str, args: list[Arg], inner: list[Arg], cmd: Command, overlay: dict[str, str | None],
            dispatch: Dispatch, *, exact: bool = False, chdir: str | None = None, text: bool = False) -> None:
    """Run ``inner`` (the command as the grammar reads it; ``text``: shell text) in a scope of its own (``chdir``:
    its directory); unless ``exact``, what it merges is undetermined and, when it merges nothing the text shows,
    merge-shaped words handed to ``name`` make the answer undetermined (hook/detect/opaque.py)."""
    mark = ctx.mark() if not exact else 0
    before = len(ctx.merges)
    ctx.run(["("])
    if chdir is not None:
        ctx.chdir(chdir)
    if text:
        run_string(ctx, inner, env=overlay)
    elif inner:
        dispatch(ctx, inner, cmd, overlay)
    ctx.run([")"])
    if exact:
        return
    why = f"{name}: a spelling of its options the guard does not read exactly"
    ctx.uncertain(mark, why)
    if len(ctx.merges) == before:
        from hook.detect.opaque import opaque

        opaque(ctx, name, args, cmd, what="a launcher whose options are not read exactly", files=False)


def env(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None], dispatch: Dispatch,
        ) -> list[Arg] | None:
    """``env [OPTION]... [-] [NAME=VALUE]... [COMMAND [ARG]...]`` (GNU coreutils)."""
    from hook.detect.getopt import parse
    from hook.detect.grammars import ENV

    words = [a[0] for a in args]
    parsed = parse(ENV, words, 1)
    exact = parsed.exact
    where: str | None = None
    for option, value in parsed.options:
        if option in ("-i", "--ignore-environment"):
            overlay["GH_REPO"] = overlay["GH_HOST"] = None
        elif option in ("-u", "--unset") and value is not None:
            overlay[value] = None
        elif option in ("-C", "--chdir"):
            where = value if value is not None else DYN
        elif option in ("-S", "--split-string"):
            split = _split_string(value or "")
            if split is None:
                exact = False
            else:  # its words take the option's place: more options, assignments, the command
                rest: list[Arg] = [args[0], *((w, None) for w in split), *args[parsed.end :]]
                if exact:
                    return env(ctx, rest, cmd, overlay, dispatch)
                inexact(ctx, "env", args, rest[1:], cmd, overlay, dispatch)
                return None
    i = parsed.end
    if i < len(words) and words[i] == "-":
        overlay["GH_REPO"] = overlay["GH_HOST"] = None
        i += 1
    i = assignments(args, i, overlay)
    inner = list(args[i:])
    if exact and where is None:
        return inner or None
    inexact(ctx, "env", args, inner, cmd, overlay, dispatch, exact=exact, chdir=where)
    return None


def _split_string(text: str) -> list[str] | None:
    """``env -S``'s splitting: blanks separate, quotes group; escapes, ``${VAR}`` and ``#`` are not followed."""
    if DYN in text or any(c in text for c in "\\$#"):
        return None
    words, cur, quote, has = [], "", "", False
    for c in text:
        if quote:
            if c == quote:
                quote = ""
            else:
                cur += c
        elif c in "'\"":
            quote, has = c, True
        elif c in " \t\n":
            if has:
                words.append(cur)
            cur, has = "", False
        else:
            cur, has = cur + c, True
    if quote:
        return None
    if has:
        words.append(cur)
    return words


def shell_string(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None],
                 dispatch: Dispatch) -> None:
    """``su``, ``script``, ``watch``: the command they run, by their grammars."""
    from hook.detect.getopt import parse
    from hook.detect.grammars import SCRIPT, SU, WATCH

    words = [a[0] for a in args]
    if name == "watch":
        parsed = parse(WATCH, words, 1)
        inner = list(args[parsed.end :])
        if parsed.has("-x", "--exec"):
            inexact(ctx, name, args, inner, cmd, overlay, dispatch, exact=parsed.exact)
        else:  # the words joined by blanks, run by `sh -c`
            joined: list[Arg] = [(" ".join(a[0] for a in inner), None)] if inner else []
            inexact(ctx, name, args, joined, cmd, overlay, dispatch, exact=parsed.exact, text=True)
        return
    # su and script (util-linux) take their options anywhere (GNU getopt permutes): every word is read
    grammar = SU if name == "su" else SCRIPT
    options, operands, exact = _permuted(grammar, words)
    command = [v for o, v in options if o in ("-c", "--command", "-C", "--session-command")]
    if command:
        string: list[Arg] = [(c if c is not None else DYN, None) for c in command[-1:]]
        inexact(ctx, name, args, string, cmd, overlay, dispatch, exact=exact, text=True)
    elif name == "script" and len(operands) > 1:  # BSD script: `script [opts] FILE COMMAND…` (not modelled)
        bsd: list[Arg] = [(w, None) for w in operands[1:]]
        inexact(ctx, name, args, bsd, cmd, overlay, dispatch)
    elif not exact:
        inexact(ctx, name, args, [], cmd, overlay, dispatch)


def _permuted(grammar: Grammar, words: list[str]) -> tuple[list[tuple[str, str | None]], list[str], bool]:
    """GNU getopt's default order: options anywhere before ``--``, operands gathered (``-`` is one: ``su -``)."""
    from hook.detect.getopt import parse
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    exact, i = True, 1
    while i < len(words):
        parsed = parse(grammar, words, i)
        options += parsed.options
        exact = exact and parsed.exact
        if parsed.end > i and words[parsed.end - 1] == "--":
            operands += words[parsed.end :]
            break
        i = parsed.end
        if i < len(words):
            operands.append(words[i])
            i += 1
    return options, operands, exact


def assignments(args: list[Arg], i: int, overlay: dict[str, str | None]) -> int:
    """``NAME=VALUE`` words from ``i`` on (``env``'s, ``sudo``'s): into ``overlay``; where the command starts."""
    while i < len(args) and "=" in args[i][0] and args[i][0].split("=", 1)[0].isidentifier():
        name, value = args[i][0].split("=", 1)
        overlay[name] = value
        i += 1
    return i
