"""Programs that run their arguments as a command, here and now (kind ``wrapper`` in
hook/detect/programs.py): which command each runs, read exactly. ``timeout 30 gh …``, ``sudo -u x
GH_REPO=o/r gh …``, ``env -S '…'``, ``xargs``, ``find -exec``, ``busybox sh``, runner tools (``uv run``,
``op run --``), and the shell-string wrappers (``watch 'cmd'``, ``su -c``, ``script -c``, ``flock -c``).
"""

from __future__ import annotations

from hook.detect.runstring import run_string
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

    Dispatch = Callable[[Ctx, list[Arg], Command, dict[str, str | None]], None]

# name -> (short options taking a value, long options taking a value, operands before the command)
OPTIONS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "timeout": ("sk", ("--signal", "--kill-after"), 1),
    "gtimeout": ("sk", ("--signal", "--kill-after"), 1),
    "nohup": ("", (), 0),
    "exec": ("a", (), 0),
    "builtin": ("", (), 0),
    "command": ("", (), 0),
    "sudo": ("ugpCDrtTU", ("--user", "--group", "--prompt", "--chdir", "--role", "--type", "--other-user"), 0),
    "doas": ("uC", (), 0),
    "time": ("of", ("--output", "--format"), 0),
    "nice": ("n", ("--adjustment",), 0),
    "ionice": ("cnp", ("--class", "--classdata"), 0),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0),
    "chronic": ("", (), 0),
    "unbuffer": ("", (), 0),
    "setsid": ("", (), 0),
    "caffeinate": ("tw", (), 0),
    "taskset": ("", (), 1),
    "flock": ("wE", ("--timeout", "--conflict-exit-code"), 1),
    "torsocks": ("", (), 0),
    "coproc": ("", (), 0),
    "proxychains": ("f", (), 0),
    "proxychains4": ("f", (), 0),
    "busybox": ("", (), 0),  # `busybox sh -c …`: the applet is the command
    "toybox": ("", (), 0),
    "chrt": ("TPD", ("--sched-runtime", "--sched-period", "--sched-deadline"), 1),
    "ifne": ("", (), 0),
    "catchsegv": ("", (), 0),
    "dbus-run-session": ("", (), 0),
    "eatmydata": ("", (), 0),
    "fakeroot": ("lfsib", ("--lib", "--faked"), 0),
    "faketime": ("", ("--date-prog",), 1),
    "tini": ("pe", (), 0),
    "dumb-init": ("r", ("--rewrite",), 0),
    "with-contenv": ("", (), 0),
    "s6-setuidgid": ("", (), 1),
    "lckdo": ("", (), 1),
}
# options after which the program runs no command (`command -v gh`, `chrt -p PID`)
_LOOKS_ONLY = {"command": ("-v", "-V"), "chrt": ("-p", "--pid")}
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
NAMES = frozenset({*OPTIONS, *RUNNERS, *SHELL_STRINGS, "env", "xargs", "find", "eval", "iex", "invoke-expression",
                   "ssh-agent"})
"""Every program this module unwraps (tests/test_hook_programs.py ties it to the table's wrappers)."""


def unwrap(ctx: Ctx, name: str, args: list[Arg], cmd: Command, overlay: dict[str, str | None],
           dispatch: Dispatch) -> list[Arg] | None:
    """The command a wrapper runs (``args`` itself when ``name`` is no wrapper; None: runs nothing more)."""
    if name in OPTIONS:
        shorts, longs, operands = OPTIONS[name]
        i = skip_options(args, 1, shorts, longs)
        if any(a[0] in _LOOKS_ONLY.get(name, ()) for a in args[1:i]):
            return None  # `command -v gh` only looks the name up
        if name == "builtin" and i < len(args) and DYN not in args[i][0]:
            from hook.detect.shellrun import BUILTINS

            if args[i][0] not in BUILTINS:
                return None  # `builtin gh …` fails: gh is no shell builtin
        if name == "sudo":
            i = assignments(args, i, overlay)
        i += operands
        if name == "flock" and i < len(args) and args[i][0] in ("-c", "--command"):
            run_string(ctx, args[i + 1 :], env=overlay)
            return None
        return args[i:] or None
    if name == "ssh-agent":  # `ssh-agent bash`: runs the command with the agent's variables set
        i = skip_options(args, 1, "aEPt", ())
        return args[i:] or None
    if name == "env":
        return _env(ctx, args, overlay)
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
        _shell_string(ctx, name, args)
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


def assignments(args: list[Arg], i: int, overlay: dict[str, str | None]) -> int:
    while i < len(args) and "=" in args[i][0] and args[i][0].split("=", 1)[0].isidentifier():
        name, value = args[i][0].split("=", 1)
        overlay[name] = value
        i += 1
    return i


def _env(ctx: Ctx, args: list[Arg], overlay: dict[str, str | None]) -> list[Arg] | None:
    i = 1
    while i < len(args):
        a = args[i][0]
        if a in ("-i", "--ignore-environment", "-"):
            overlay["GH_REPO"] = None
        elif a in ("-u", "--unset"):
            overlay[args[i + 1][0] if i + 1 < len(args) else ""] = None
            i += 1
        elif a.startswith("--unset="):
            overlay[a.split("=", 1)[1]] = None
        elif a in ("-C", "--chdir") or a.startswith("--chdir="):
            target = a.split("=", 1)[1] if "=" in a else (args[i + 1][0] if i + 1 < len(args) else None)
            i += 0 if "=" in a else 1
            ctx.chdir(target)
        elif a in ("-S", "--split-string") or a.startswith("--split-string="):
            text = a.split("=", 1)[1] if "=" in a else " ".join(x[0] for x in args[i + 1 : i + 2])
            rest = args[i + (1 if "=" in a else 2) :]
            return [(t, None) for t in text.split()] + rest
        elif a == "--":
            i += 1
            break
        elif not a.startswith("-"):
            break
        i += 1
    i = assignments(args, i, overlay)
    return args[i:] or None


def _shell_string(ctx: Ctx, name: str, args: list[Arg]) -> None:
    if name == "watch":
        i = skip_options(args, 1, "nqd", ("--interval", "--differences"))
        run_string(ctx, args[i:])
    else:  # su -c CMD, script -c CMD
        for i, a in enumerate(args):
            if a[0] in ("-c", "--command", "-qc") and i + 1 < len(args):
                run_string(ctx, args[i + 1 : i + 2])
                break
