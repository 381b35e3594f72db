"""How each program that runs a planted file (hook/detect/planted.py) reads it: the shell commands in it, as
shell text, or None when the format is not split here (then its shape decides). Program code (``conftest.py``,
a ``Rakefile``, a ``.pth`` file's ``import`` lines) is read by hook/detect/code.py and yields no shell text.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx

_YAML_KEYS = frozenset({"cmd", "cmds", "run", "entry", "command", "script", "sh", "exec"})
_EXEC_KEYS = ("execstart", "execstartpre", "execstartpost", "execstop", "execstoppost", "execreload",
              "execcondition", "exec")
# git settings whose value git runs as a command (hook/detect/git.py reads the same for `-c`)
_GIT_COMMANDS = ("pager", "editor", "sshcommand", "askpass", "fsmonitor", "helper", "external", "driver", "clean",
                 "smudge", "process", "program", "textconv", "cmd", "receivepack", "uploadpack", "difffilter",
                 "proxy")


def commands(ctx: Ctx, kind: str, text: str) -> list[str] | None:
    if kind in ("shell", "fish", "powershell"):
        return [text]
    if kind in ("cron", "crontab"):
        from hook.detect.deferred import crontab_commands

        return crontab_commands(text, user_field=kind == "cron")
    if kind == "systemd":
        return _exec_lines(text)
    if kind == "plist":
        return _plist(text)
    if kind == "make":
        return _make(text)
    if kind == "just":
        return _just(text)
    if kind == "package":
        return _package(text)
    if kind == "yaml":
        return _yaml(text)
    if kind in ("code", "pth"):
        from hook.detect.code import code

        lines = text if kind == "code" else "\n".join(line for line in text.splitlines() if line.startswith("import"))
        code(ctx, lines)
        return []
    if kind == "gitconfig":
        return _gitconfig(ctx, text)
    return None


def _exec_lines(text: str) -> list[str]:
    """A unit's (or a ``.desktop`` entry's) ``Exec*=`` lines, their prefixes (``-@:+!``) dropped."""
    out = []
    for line in text.splitlines():
        key, eq, value = line.strip().partition("=")
        if eq and key.strip().lower() in _EXEC_KEYS:
            out.append(value.strip().lstrip("-@:+!"))
    return out


def _plist(text: str) -> list[str] | None:
    """A launchd agent's ``ProgramArguments`` (its ``<string>`` items as one command line) and ``Program``."""
    from hook.detect.code import quote_word

    out = []
    for key in ("<key>ProgramArguments</key>", "<key>Program</key>"):
        at = text.find(key)
        if at < 0:
            continue
        end = text.find("</array>", at) if "Arguments" in key else text.find("</string>", at) + 9
        items, k = [], text.find("<string>", at)
        while 0 <= k < end:
            close = text.find("</string>", k)
            items.append(text[k + 8 : close])
            k = text.find("<string>", close)
        out.append(" ".join(quote_word(i) for i in items))
    return out or None


def _make(text: str) -> list[str]:
    """Every recipe line of every rule, with the Makefile's variables expanded (any target may be run later)."""
    from hook.detect.make import expand, parse_makefile

    rules, variables, _ = parse_makefile(text)
    return [expand(line.lstrip("@-+ \t"), variables, target) for target, (_, recipe) in rules.items()
            for line in recipe]


def _just(text: str) -> list[str]:
    """A justfile's recipe bodies: the indented lines (``@`` and ``-`` prefixes dropped)."""
    return [line.strip().lstrip("@-") for line in text.splitlines()
            if line[:1] in (" ", "\t") and line.strip() and not line.strip().startswith("#")]


def _package(text: str) -> list[str] | None:
    """``package.json``/``composer.json`` ``scripts`` and ``deno.json`` ``tasks``."""
    import json

    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    out: list[str] = []
    for key in ("scripts", "tasks"):
        table = data.get(key)
        if isinstance(table, dict):
            for value in table.values():
                values = value if isinstance(value, list) else [value]
                out += [v if isinstance(v, str) else str(v.get("command", "")) if isinstance(v, dict) else ""
                        for v in values]
    return out


def _yaml(text: str) -> list[str]:
    """A task runner's commands in YAML (Taskfile, lefthook, pre-commit's ``entry``) or JSON (VS Code tasks): the
    values of command keys, the items of a ``cmds`` list, block scalars after them."""
    out: list[str] = []
    lines = text.splitlines()
    k = 0
    listing = -1  # the indentation of a `cmds:` key whose items are commands
    while k < len(lines):
        line = lines[k]
        stripped = line.strip().strip(",")
        indent = len(line) - len(line.lstrip())
        k += 1
        if not stripped or stripped.startswith("#"):
            continue
        item = stripped[2:].strip() if stripped.startswith("- ") else None
        body = item if item is not None else stripped
        key, colon, value = body.partition(":")
        key = key.strip().strip("'\"").lower()
        value = value.strip().strip(",").strip()
        if colon and key in _YAML_KEYS and " " not in key:
            listing = indent if not value else -1
            if value in ("|", ">", "|-", ">-", "|+", ">+"):
                block = []
                while k < len(lines) and (not lines[k].strip() or len(lines[k]) - len(lines[k].lstrip()) > indent):
                    block.append(lines[k].strip())
                    k += 1
                out.append("\n".join(block))
            elif value:
                out.append(_unquote(value))
        elif item is not None and listing >= 0 and indent >= listing and not colon:
            out.append(_unquote(item))
        elif indent <= listing:
            listing = -1
    return out


def _unquote(value: str) -> str:
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].replace('\\"', '"') if value[0] == '"' else value[1:-1].replace("''", "'")
    return value


def _gitconfig(ctx: Ctx, text: str) -> list[str]:
    """git's configuration: a ``!`` alias runs through ``sh``; another alias is git's own arguments; the settings
    git runs as commands; ``core.hooksPath`` names a hooks directory (judged by hook/detect/planted.py)."""
    from hook.detect.gitrepo import parse_config

    out = []
    for (section, _, key), value in parse_config(text).items():
        line = git_setting(ctx, section, key, value)
        if line is not None:
            out.append(line)
    return out


def git_setting(ctx: Ctx, section: str, key: str, value: str) -> str | None:
    """The shell text a git setting runs (an alias, a command-valued setting), or None; ``core.hooksPath`` is
    recorded as a hooks directory."""
    section, key = section.lower(), key.lower()
    if section == "alias":
        return value[1:] if value.startswith("!") else "git " + value
    if section == "core" and key == "hookspath":
        ctx.hooks_paths.add(value if DYN in value else ctx.path(value))
        return None
    if key.endswith(_GIT_COMMANDS) or section == "pager":
        return value.removeprefix("!")
    return None
