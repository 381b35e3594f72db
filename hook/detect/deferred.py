"""Programs that run a command later, or after options the guard does not model exactly (kind ``runner`` in
hook/detect/programs.py): schedulers (``at``, ``batch``, ``crontab``), terminal multiplexers (``tmux``,
``screen``), service managers and queues (``systemd-run``, ``launchctl submit``, ``pueue``, ``nq``),
watchers (``entr``, ``watchexec``, ``nodemon``), and wrappers such as ``strace`` or ``chroot``.

The command each runs is found and read like any command, and what it merges is undetermined: it runs
at another time (or never), in another directory or environment (a tmux server's, a systemd unit's), so
the text does not settle the target. A command that cannot be found in the text is judged by the rule
for unknown programs (hook/detect/opaque.py): merge-shaped text makes the answer undetermined.
"""

from __future__ import annotations

from hook.detect.opaque import opaque
from hook.detect.runstring import run_string
from hook.detect.wrappers import skip_options
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

    Payload = tuple[str, list[Arg] | str]  # ("argv", the words) or ("text", shell text)
    Found = list[Payload] | None  # None: the command is not in the text

# tmux commands that run a shell command (its last arguments), with their flags that take a value
_TMUX_RUN = {
    "new-session": "cefFnstxy", "new": "cefFnstxy", "new-window": "ceFnt", "neww": "ceFnt",
    "split-window": "ceFlpt", "splitw": "ceFlpt", "respawn-pane": "cet", "respawnp": "cet",
    "respawn-window": "cet", "respawnw": "cet", "run-shell": "cdt", "run": "cdt", "if-shell": "t", "if": "t",
    "display-popup": "bcdehsStTwxy", "popup": "bcdehsStTwxy", "pipe-pane": "t", "pipep": "t",
}
_TMUX_KEYS = {"send-keys": "Nt", "send": "Nt"}
_TMUX_QUIET = frozenset({
    "ls", "list-sessions", "list-windows", "lsw", "list-panes", "lsp", "list-clients", "lsc", "list-keys", "lsk",
    "list-buffers", "lsb", "attach", "attach-session", "a", "at", "detach", "detach-client", "kill-session",
    "kill-server", "kill-window", "kill-pane", "has-session", "has", "capture-pane", "capturep", "display-message",
    "display", "select-window", "selectw", "select-pane", "selectp", "switch-client", "switchc", "rename-session",
    "rename", "rename-window", "renamew", "resize-pane", "resizep", "show-options", "show", "show-environment",
    "showenv", "info", "server-info", "start-server", "start", "wait-for", "wait", "show-buffer", "showb",
    "save-buffer", "saveb", "clear-history", "clearhist", "list-commands", "lscm", "next-window", "next",
    "previous-window", "prev", "last-window", "last", "lock-server", "refresh-client",
})
_ENTER_KEYS = frozenset({"enter", "c-m", "kpenter", "c-j"})
_SYSTEMD_RUN_VALUES = ("--unit", "--property", "--description", "--slice", "--setenv", "--uid", "--gid",
                       "--working-directory", "--machine", "--host", "--on-active", "--on-boot", "--on-startup",
                       "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property",
                       "--path-property", "--socket-property", "--nice", "--service-type", "--expand-environment")
_AROUND_VALUES: dict[str, tuple[str, tuple[str, ...], int]] = {
    "strace": ("oepsuEaPIbXO", ("--output", "--trace", "--attach", "--user", "--env"), 0),
    "ltrace": ("oepsuaEnAlSx", ("--output",), 0),
    "valgrind": ("", (), 0), "xvfb-run": ("nsfewpl", ("--server-num", "--server-args", "--auth-file",
                                                      "--error-file", "--wait"), 0),
    "systemd-inhibit": ("", ("--what", "--who", "--why", "--mode"), 0), "pkexec": ("", ("--user",), 0),
    "runuser": ("ugGs", ("--user", "--group", "--supp-group", "--shell", "-w", "--whitelist-environment"), 0),
    "sg": ("", (), 1), "setpriv": ("", ("--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps",
                                        "--bounding-set", "--securebits", "--pdeathsig"), 0),
    "nsenter": ("tSGT", ("--target", "--setuid", "--setgid"), 0), "unshare": ("", ("--map-user", "--map-group"), 0),
    "chroot": ("", ("--userspec", "--groups"), 1), "numactl": ("imNCpP", ("--interleave", "--membind",
                                                                          "--cpunodebind", "--physcpubind",
                                                                          "--preferred"), 0),
    "cpulimit": ("lpemc", ("--limit", "--pid", "--exe", "--cpu"), 0), "prlimit": ("p", ("--pid", "--output"), 0),
    "cgexec": ("g", (), 0), "firejail": ("", (), 0), "retry": ("tdm", ("--times", "--delay", "--until"), 0),
    "perf": ("eoFcCpt", ("--event", "--output", "--freq", "--count"), 0), "bwrap": ("", (), 0),
}
_SHELL_FLAGS = frozenset({"-c", "--command", "--session-command"})


def later(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    name = _name(args)
    parse = _LATER.get(name, _none)
    found = parse(ctx, args, cmd)
    _read(ctx, name, args, cmd, found, f"{name} runs it later, or in another environment")


def around(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    name = _name(args)
    found = _around(args, name)
    _read(ctx, name, args, cmd, found, f"{name}: options the guard does not model exactly")


def _read(ctx: Ctx, name: str, args: list[Arg], cmd: Command, found: Found, why: str) -> None:
    if found is None:
        opaque(ctx, name, args, cmd, via="runner", what="a program that runs commands it is given")
        return
    mark = ctx.mark()
    for kind, payload in found:
        if kind == "argv" and isinstance(payload, list) and payload:
            ctx.simple_command(payload, cmd, {})
        elif kind == "text" and isinstance(payload, str):
            if DYN in payload and payload.strip(DYN + " \n") == "":
                ctx.runtime(f"{name} runs a command produced at run time", via="runner")
            else:
                run_string(ctx, [(payload, None)])
    ctx.uncertain(mark, why)


def _name(args: list[Arg]) -> str:
    from hook.detect.programs import command_name

    return command_name(args[0][0])


def _none(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    return None


def _words(args: list[Arg]) -> list[str]:
    return [a[0] for a in args]


def _tmux(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    words = _words(args)
    found: list[Payload] = []
    i = 1
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        if words[i] == "-c" and i + 1 < len(words):  # `tmux -c CMD`: runs CMD with the default shell
            return [("text", words[i + 1])]
        i += 2 if words[i] in ("-f", "-L", "-S", "-T") else 1
    if i >= len(words):
        return []  # `tmux`: a new session with the default shell
    commands: list[list[str]] = [[]]
    for word in words[i:]:
        if word in (";", "\\;"):
            commands.append([])
        elif word.endswith(";") and not word.endswith("\\;") and len(word) > 1:
            commands[-1].append(word[:-1])
            commands.append([])
        else:
            commands[-1].append(word)
    for command in (c for c in commands if c):
        sub, rest = command[0], command[1:]
        if sub in _TMUX_QUIET:
            continue
        if sub in _TMUX_RUN or sub in _TMUX_KEYS:
            valued = _TMUX_RUN.get(sub, _TMUX_KEYS.get(sub, ""))
            k = 0
            while k < len(rest) and rest[k].startswith("-") and rest[k] != "-":
                if rest[k] == "--":
                    k += 1
                    break
                k += 2 if rest[k][-1] in valued and len(rest[k]) == 2 else 1
            tail = rest[k:]
            if sub in _TMUX_KEYS:
                typed = " ".join("\n" if w.lower() in _ENTER_KEYS else w for w in tail)
                found.append(("text", typed))
            elif tail:
                found.append(("text", tail[0] if sub in ("if-shell", "if") else " ".join(tail)))
            continue
        return None  # a command this reader does not know (bind-key, source-file, set-hook …)
    return found


def _screen(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    words = _words(args)
    i = 1
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        if w in ("-ls", "-list", "-wipe", "-v", "-h", "--help", "-version"):
            return []
        if w == "-X" and i + 1 < len(words):
            sub, rest = words[i + 1], args[i + 2 :]
            if sub == "stuff":
                return [("text", " ".join(a[0] for a in rest).replace("^M", "\n").replace("\\n", "\n"))]
            if sub in ("exec", "screen"):
                return [("argv", list(rest))]
            return None if any(opaque_words(rest)) else []
        i += 2 if w in ("-S", "-c", "-e", "-h", "-p", "-s", "-t", "-T", "-Logfile") else 1
    return [("argv", list(args[i:]))] if i < len(args) else []


def opaque_words(args: list[Arg]) -> list[str]:
    return [a[0] for a in args if a[0]]


def _at(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    words = _words(args)
    source: str | None = None
    i = 1
    while i < len(words):
        w = words[i]
        if w in ("-l", "-r", "-d", "-c", "-V"):
            return []  # lists, removes or prints jobs
        if w == "-f" and i + 1 < len(words):
            source, i = words[i + 1], i + 2
            continue
        i += 2 if w in ("-q", "-t") else 1
    text = ctx.read_file(source) if source is not None and DYN not in source else ctx.stdin_text(cmd)
    return [("text", text if text is not None else DYN)]


def _crontab(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    words = _words(args)
    files = []
    i = 1
    while i < len(words):
        w = words[i]
        if w in ("-l", "-r", "-i", "-V", "-T"):
            return []  # lists, removes or checks the table
        if w == "-e":
            return None  # an editor: what a person (or the agent) types is not in the text
        if w in ("-u", "-s"):
            i += 2
            continue
        files.append(w)
        i += 1
    text = ctx.stdin_text(cmd) if not files or files[0] == "-" else (
        ctx.read_file(files[0]) if DYN not in files[0] else None)
    if text is None:
        return [("text", DYN)]
    commands = crontab_commands(text)
    return None if commands is None else [("text", c) for c in commands]


def crontab_commands(text: str, *, user_field: bool = False) -> list[str] | None:
    """The commands of a crontab's lines (``MIN HOUR DOM MON DOW [USER] CMD``, ``@reboot [USER] CMD``; ``%`` a
    newline); ``user_field`` for the system's tables (``/etc/crontab``, ``/etc/cron.d/*``). None: a line that is
    none of those."""
    found: list[str] = []
    extra = 1 if user_field else 0
    for line in text.splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#") or (entry.split("=", 1)[0].strip().isidentifier() and "=" in entry
                                                  and " " not in entry.split("=", 1)[0].strip()):
            continue
        count = (1 if entry.startswith("@") else 5) + extra
        fields = entry.split(None, count)
        if len(fields) != count + 1:
            return None
        found.append(fields[-1].replace("%", "\n"))
    return found


def _systemd_run(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    i = skip_options(args, 1, "upEMH", _SYSTEMD_RUN_VALUES)
    return [("argv", list(args[i:]))] if i < len(args) else []


def _after_dashes(args: list[Arg]) -> list[Arg] | None:
    words = _words(args)
    return list(args[words.index("--") + 1 :]) if "--" in words else None


def _joined(words: list[Arg]) -> str:
    return " ".join(a[0] for a in words)


def _launchctl(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    words = _words(args)
    after = _after_dashes(args) if len(words) > 1 and words[1] == "submit" else None
    return None if after is None else [("argv", after)]


def _entr(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    words = _words(args)
    i = 1
    shell = False
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        shell = shell or "s" in words[i][1:]
        i += 1
    i += 1 if i < len(words) and words[i] == "--" else 0
    if i >= len(args):
        return []
    return [("text", words[i])] if shell else [("argv", list(args[i:]))]


def _queue(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    """``pueue add [opts] [--] CMD…`` (joined, run by a shell), ``nq CMD…``, ``tsp CMD…``, ``daemonize PATH…``."""
    name, words = _name(args), _words(args)
    if name == "pueue":
        if len(words) < 2 or words[1] != "add":
            return [] if len(words) > 1 and words[1] in ("status", "log", "follow", "clean", "kill", "pause",
                                                           "start", "remove", "reset", "wait", "group") else None
        after = _after_dashes(args)
        if after is None:
            i = skip_options(args, 2, "wdglpa", ("--working-directory", "--delay", "--group", "--label",
                                                 "--priority", "--after"))
            after = list(args[i:])
        return [("text", _joined(after))]
    if name in ("nq", "tsp"):
        i = skip_options(args, 1, "LNDEg", ())
        return [("argv", list(args[i:]))] if i < len(args) else []
    if name == "daemonize":
        i = skip_options(args, 1, "ceoplEu", ())
        return [("argv", list(args[i:]))] if i < len(args) else []
    if name == "start-stop-daemon":
        program = next((words[k + 1] for k, w in enumerate(words[:-1]) if w in ("--exec", "-x", "--startas", "-a")),
                       None)
        if program is None:
            return [] if "--start" not in words and "-S" not in words else None
        tail = words[words.index("--") + 1 :] if "--" in words else []
        return [("argv", [(program, None), *((w, None) for w in tail)])]
    return None


def _watcher(ctx: Ctx, args: list[Arg], cmd: Command) -> Found:
    """``watchexec [opts] -- CMD``, ``reflex [opts] -- CMD``, ``nodemon --exec 'CMD'``."""
    words = _words(args)
    for k, w in enumerate(words[:-1]):
        if w in ("-x", "--exec"):
            return [("text", words[k + 1])]
        if w.startswith("--exec="):
            return [("text", w.partition("=")[2])]
    after = _after_dashes(args)
    if after is None:
        return None
    return [("text", _joined(after))] if _name(args) == "watchexec" else [("argv", after)]


def _around(args: list[Arg], name: str) -> Found:
    words = _words(args)
    for k, w in enumerate(words[:-1]):
        if w in _SHELL_FLAGS:  # `runuser -l bob -c CMD`, `sg grp -c CMD`
            return [("text", words[k + 1])]
    if name == "hyperfine":
        return [("text", w) for w in words[1:] if not w.startswith("-")] or None
    if name == "sops":
        return [("text", words[-1])] if len(words) > 3 and words[1] in ("exec-env", "exec-file") else None
    if name == "perf" and len(words) > 1:
        args = [args[0], *args[2:]]  # `perf stat …`, `perf record …`
    shorts, longs, operands = _AROUND_VALUES.get(name, ("", (), 0))
    i = skip_options(args, 1, shorts, longs) + operands
    return [("argv", list(args[i:]))] if i < len(args) else []


_LATER = {"tmux": _tmux, "screen": _screen, "at": _at, "batch": _at, "crontab": _crontab,
          "systemd-run": _systemd_run, "launchctl": _launchctl, "entr": _entr, "pueue": _queue, "nq": _queue,
          "tsp": _queue, "daemonize": _queue, "start-stop-daemon": _queue, "watchexec": _watcher,
          "reflex": _watcher, "nodemon": _watcher}
