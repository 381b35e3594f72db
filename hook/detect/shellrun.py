"""What a shell runs besides the words of a command line: script files (``source FILE``, ``bash FILE``,
``bash <(…)``, ``bash /dev/stdin``), ``trap`` actions (run at exit, on an error, a signal, a return, or
never) and ``hash -p FILE NAME`` (NAME then runs FILE). Imported on first use (start-up budget, design §7).
"""

from __future__ import annotations

from hook.detect.runstring import run_string
from hook.shell.syntax import DYN

# bash's builtins (`builtin NAME` runs nothing else)
BUILTINS = frozenset({
    ".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete",
    "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export",
    "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout",
    "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift",
    "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit", "umask",
    "unalias", "unset", "wait"})

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command


def trap(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """ACTION runs in the state of a later moment, or not at all: read now, and again when the command
    ends (hook/detect/toolcall.py; a function it calls may be defined later). Its merges are undetermined."""
    words = [a[0] for a in args[1:]]
    if words[:1] == ["--"]:
        words = words[1:]
    if len(words) < 2 or words[0].startswith("-"):
        return  # `trap -p`, `trap -l`, `trap - EXIT`, `trap SIGNAL`: print or reset
    ctx.traps.append(words[0])
    run_trap(ctx, words[0])


def run_trap(ctx: Ctx, action: str) -> None:
    mark = ctx.mark()
    run_string(ctx, [(action, None)])
    ctx.uncertain(mark, "a trap action: when it runs, and whether, is not modelled")


def hash_p(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``hash -p FILE NAME``: read like an alias NAME=FILE (both readings, undetermined)."""
    words = [a[0] for a in args[1:]]
    k = words.index("-p") if "-p" in words else len(words)
    for name in words[k + 2 :]:
        ctx.aliases[name] = words[k + 1]


STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def source(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``source FILE [ARGS]`` / ``. <(…)``: run in this shell."""
    if len(args) >= 2:
        script(ctx, args[1], cmd, same_shell=True, env=overlay, rest=args[2:])


def script(ctx: Ctx, arg: Arg, cmd: Command, *, same_shell: bool = False,
           positional: list[Arg] | None = None, env: dict[str, str | None] | None = None,
           rest: list[Arg] | None = None) -> None:
    """A script file a shell reads (``source FILE``, ``bash FILE``): a substitution's known output
    (``<(…)``), stdin (``/dev/stdin``), a file written earlier here, or a file on disk that names a merge
    (`hook.detect.shaped.merge_shaped`). Any other file (not on disk, or naming no merge) is not read: it
    cannot be steered to merge by this command unless its arguments (``rest``, default ``positional[1:]``:
    ``bash run.sh gh pr merge 5``, where run.sh runs ``"$@"``) or its own name (``bash tools/land.sh``) are
    merge-shaped, which makes the answer undetermined (hook/detect/opaque.py)."""
    text, word = arg
    inner = next((p.inner for p in (word.parts if word else []) if p.inner is not None), None)
    if inner is not None:  # `source <(…)`, `bash <(…)`: that program's output
        shown = ctx.substitution_output(inner)
        if shown is None and not ctx.decoder_seen:
            from hook.detect.shellenv import produced

            produced(ctx, [arg], same_shell)
            return
    elif text in STDIN_FILES:  # `… | . /dev/stdin`, `bash /dev/stdin <<< …`
        shown = ctx.stdin_text(cmd)
        if shown is None and not ctx.decoder_seen:
            ctx.runtime("a script read on stdin, produced at run time")
            return
    else:
        shown = ctx.files.get(ctx.path(text))
        if shown is None and DYN not in text:  # a script on disk: read when it names a merge (opaque.py)
            from hook.detect.shaped import merge_shaped

            disk = ctx.read_file(text)
            shown = disk if disk is not None and merge_shaped(disk) else None
    if shown is None and (DYN in text or inner is not None or text in STDIN_FILES) and ctx.decoder_seen:
        shown = DYN
    if shown is not None:
        run_string(ctx, [(shown, None)], same_shell=same_shell, positional=positional, env=env)
    elif inner is None and text not in STDIN_FILES and DYN not in text:
        from hook.detect.opaque import script_file

        script_file(ctx, text, rest if rest is not None else (positional or [])[1:], what="run by a shell")


def startup_texts(ctx: Ctx, name: str, args: list[Arg], overlay: dict[str, str | None]) -> list[str]:
    """The start-up files a shell runs before its script, as far as this command wrote them:
    ``BASH_ENV`` (bash, not interactive), ``--rcfile``/``--init-file`` (bash -i), ``ENV`` (sh -i).
    A name only the run knows is undetermined; any other file on disk is opaque, like ``bash FILE``."""
    words = [a[0] for a in args[1:]]
    interactive = any(w[:1] == "-" and w[1:2] != "-" and "i" in w[1:] for w in words) or "--interactive" in words
    names: list[str] = []
    if name == "bash" and not interactive:
        names.append(ctx.getenv("BASH_ENV", overlay) or "")
    if interactive:
        names += [words[k + 1] for k, w in enumerate(words[:-1]) if w in ("--rcfile", "--init-file")]
        if name != "bash":
            names.append(ctx.getenv("ENV", overlay) or "")
    texts = []
    for file in names:
        if DYN in file:
            ctx.runtime("a shell start-up file named at run time")
        elif file:
            text = ctx.files.get(ctx.path(file))
            if text is not None:
                texts.append(text)
    return texts


def on_path(ctx: Ctx, name: str, overlay: dict[str, str | None]) -> str | None:
    """A script this command wrote, found on ``PATH`` (``PATH=.:$PATH x.sh``); builtins come first."""
    if name in BUILTINS:
        return None
    for directory in (ctx.getenv("PATH", overlay) or "").split(":"):
        key = ctx.path(f"{directory or '.'}/{name}")
        if DYN not in key and key in ctx.files:
            return ctx.files[key]
    return None
