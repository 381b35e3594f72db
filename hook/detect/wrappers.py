"""Programs that run their arguments as a command, here and now (kind ``wrapper`` in
hook/detect/programs.py): which command each runs, read exactly. ``timeout 30 gh …``, ``sudo -u x
GH_REPO=o/r gh …``, ``env -S '…'``, ``xargs``, ``find -exec``, ``busybox sh``, runner tools (``uv run``,
``op run --``), and the shell-string wrappers (``watch 'cmd'``, ``su -c``, ``script -c``, ``flock -c``).
"""

from __future__ import annotations

from hook.detect.grammars import RUNS_NOTHING, WRAPPERS
from hook.detect.runstring import run_string
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

    Dispatch = Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None]

# runner tools: name -> (subcommand that runs a command, "" for any; value options; operands after it)
RUNNERS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "op": ("run", ("--env-file", "--account"), 0), "doppler": ("run", ("-p", "-c", "--project", "--config"), 0),
    "infisical": ("run", ("--env", "--path", "--projectId"), 0), "aws-vault": ("exec", (), 1),
    "uv": ("run", ("--with", "--python", "-p", "--project", "--directory", "--package", "--extra", "--group",
                   "--env-file", "--index", "--with-requirements", "--from"), 0),
    "poetry": ("run", ("-C", "--directory", "-P", "--project"), 0), "pipenv": ("run", (), 0),
    "direnv": ("exec", (), 1), "mise": ("exec", ("-C", "--cd"), 0), "rtx": ("exec", (), 0),
    "pnpm": ("exec", ("-C", "--dir", "--filter", "-F"), 0), "dotenv": ("", ("-e", "-f", "-c", "-v"), 0),
    "npx": ("", ("-p", "--package", "-c", "--call"), 0), "bunx": ("", ("-p", "--package"), 0),
    "devbox": ("run", ("-c", "--config"), 0), "pipx": ("run", ("--spec", "--python"), 0),
    "uvx": ("", ("--from", "--with", "--python", "-p"), 0),
    "conda": ("run", ("-n", "--name", "-p", "--prefix", "--cwd"), 0),
    "mamba": ("run", ("-n", "--name", "-p", "--prefix"), 0),
    "micromamba": ("run", ("-n", "--name", "-p", "--prefix"), 0),
    "hatch": ("run", ("-e", "--env"), 0), "pdm": ("run", ("-p", "--project"), 0), "rye": ("run", (), 0),
    "bundle": ("exec", ("--gemfile",), 0), "asdf": ("exec", (), 0), "rbenv": ("exec", (), 0),
    "pyenv": ("exec", (), 0), "nodenv": ("exec", (), 0), "goenv": ("exec", (), 0), "opam": ("exec", ("--switch",), 0),
    "nix-shell": ("", (), 0), "flox": ("activate", ("-d", "--dir", "-r", "--remote"), 0),
    "chamber": ("exec", (), 0), "envchain": ("", (), 1), "teller": ("run", ("-c", "--config"), 0),
    "summon": ("", ("-p", "--provider", "-f", "--up", "--default", "-D"), 0),
    "berglas": ("exec", ("--local",), 0), "dotenvx": ("run", ("-f", "--env-file"), 0),
}
# runners whose command after `--` only counts (before it, operands of their own)
_DASHES_ONLY = frozenset({"chamber", "nix-shell"})
SHELL_STRINGS = frozenset({"watch", "su", "script"})
NAMES = frozenset({*WRAPPERS, *RUNNERS, *SHELL_STRINGS, "env", "xargs", "find", "eval", "iex",
                   "invoke-expression"})
"""Every program this module unwraps (tests/test_hook_programs.py ties it to the table's wrappers)."""


def unwrap(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None],
           dispatch: Dispatch) -> list[Arg] | None:
    """The command a wrapper runs (``args`` itself when ``name`` is no wrapper; None: runs nothing more)."""
    if name in WRAPPERS:
        return _wrapper(ctx, name, args, cmd, overlay, dispatch)
    if name == "env":
        from hook.detect.launchers import env

        return env(ctx, args, cmd, overlay, dispatch)
    if name in ("xargs", "find"):  # loaded only when one runs (start-up budget, design §7)
        from hook.detect import xargs

        if name == "find":
            for inner in xargs.find_exec(args):
                dispatch(ctx, inner, cmd, overlay)
            return None
        if xargs.known_input(ctx, args, cmd, overlay):
            return None
        return xargs.unknown_input(args)
    if name in SHELL_STRINGS:
        from hook.detect.launchers import shell_string

        shell_string(ctx, name, args, cmd, overlay, dispatch)
        return None
    if name in ("eval", "iex", "invoke-expression"):
        run_string(ctx, args[1:], same_shell=True, env=overlay)
        return None
    if name in RUNNERS:
        return _runner(ctx, name, args)
    return args


def _runner(ctx: Ctx, name: str, args: list[Arg]) -> list[Arg] | None:
    sub, values, operands = RUNNERS[name]
    if sub and not (len(args) > 1 and args[1][0] == sub):
        return args  # another subcommand (`uv pip install`, `op signin`): runs nothing given to it
    rest = args[2:] if sub else args[1:]
    dashes = [i for i, a in enumerate(rest) if a[0] == "--"]
    if dashes:
        return rest[dashes[0] + 1 :] or None
    if name in _DASHES_ONLY:
        if name == "nix-shell":  # `nix-shell --run 'cmd'` / `--command 'cmd'`: a shell string
            for i, a in enumerate(rest[:-1]):
                if a[0] in ("--run", "--command"):
                    run_string(ctx, rest[i + 1 : i + 2])
        return None
    i = skip_options(rest, 0, "".join(v[1] for v in values if len(v) == 2), tuple(v for v in values if len(v) > 2))
    return rest[i + operands :] or None


def skip_options(args: list[Arg], i: int, shorts: str, longs: tuple[str, ...]) -> int:
    while i < len(args):
        a = args[i][0]
        if a == "--":
            return i + 1
        if not a.startswith("-") or a == "-" or DYN in a:
            return i
        if a.startswith("--"):
            i += 2 if a in longs else 1
        elif a[1:].isdigit():  # nice -10
            i += 1
        else:
            flags = a[1:]
            taken = next((k for k, f in enumerate(flags) if f in shorts), -1)
            i += 2 if taken == len(flags) - 1 else 1
    return i


def _wrapper(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None],
             dispatch: Dispatch) -> list[Arg] | None:
    """A wrapper read by its grammar (hook/detect/grammars.py): the command after its options and operands."""
    from hook.detect.getopt import parse

    grammar, operands = WRAPPERS[name]
    words = [a[0] for a in args]
    if name == "nice" and len(words) > 1 and words[1][:1] == "-" and words[1][1:].lstrip("-").isdigit():
        words = [words[0], "-n", words[1][1:], *words[2:]]  # `nice -10 CMD`: the historic spelling of -n 10
        args = [args[0], ("-n", None), (words[2], None), *args[2:]]
    parsed = parse(grammar, words, 1)
    if parsed.has(*RUNS_NOTHING.get(name, ())):
        return None  # `command -v gh`, `sudo -l gh …`: looks, lists, edits; runs nothing
    i = parsed.end
    if name == "builtin" and i < len(args) and DYN not in args[i][0]:
        from hook.detect.shellrun import BUILTINS

        if args[i][0] not in BUILTINS:
            return None  # `builtin gh …` fails: gh is no shell builtin
    if name == "sudo":
        from hook.detect.launchers import assignments

        i = assignments(args, i, overlay)
    i += operands
    inner: list[Arg] = list(args[i:])
    if name == "flock" and inner and inner[0][0] in ("-c", "--command"):
        text = inner[1:2]
        inner = []
        if parsed.exact:
            run_string(ctx, text, env=overlay)
            return None
        inner = [("sh", None), ("-c", None), *text]
    where = parsed.value("-D", "--chdir") if name == "sudo" else None
    if parsed.exact and where is None:
        return inner or None
    from hook.detect.launchers import inexact

    inexact(ctx, name, args, inner, cmd, overlay, dispatch, exact=parsed.exact, chdir=where)
    return None
