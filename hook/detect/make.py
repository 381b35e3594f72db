"""Task runners: ``make TARGET`` runs the target's recipe (and its prerequisites') through sh, and
``npm run NAME`` a package.json script. When the Makefile or script can be read, its lines are
judged like any command; when not, a target named like a merge (``make ship``) may be one.
"""

from __future__ import annotations

import os

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_MAKE_VALUE = frozenset({"-C", "-f", "-I", "-o", "-W", "-j", "-l", "--directory", "--file", "--makefile",
                         "--include-dir", "--old-file", "--what-if", "--assume-new", "--new-file"})
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_MAX_RULES_WALKED = 50


def make(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    directory, makefile = ctx.cwd, None
    goals: list[str] = []
    overrides: dict[str, str] = {}
    i = 1
    while i < len(args):
        a = args[i][0]
        name, eq, value = a.partition("=") if a.startswith("--") else (a[:2], "", a[2:])
        if a.startswith("-"):
            if name in _MAKE_VALUE and not value and not eq and name not in ("-j", "-l"):
                value, i = (args[i + 1][0] if i + 1 < len(args) else ""), i + 1
            if name in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question") or (
                    a.startswith("-") and not a.startswith("--") and "n" in a[1:] and name not in _MAKE_VALUE):
                return  # prints the recipes without running them
            if name in ("-C", "--directory"):
                directory = None if DYN in value else ctx.path(value, directory)
            elif name in ("-f", "--file", "--makefile"):
                makefile = value
        elif "=" in a:
            key, _, val = a.partition("=")
            overrides[key.strip()] = val
        else:
            goals.append(a)
        i += 1
    if makefile is not None and (makefile == "-" or makefile.startswith(("/dev/", "/proc/")) or DYN in makefile):
        text = ctx.stdin_text(cmd) if makefile in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0") else None
        if text is None:  # `make -f <(…)`, `… | make -f -`: a Makefile only the run shows
            ctx.runtime("a Makefile produced at run time")
            return
    else:
        text = _read_makefile(ctx, directory, makefile)
    if text is None:
        _named(ctx, "make", goals)
        return
    rules, variables, default = parse_makefile(text)
    variables.update(overrides)
    todo = list(goals or ([default] if default else []))
    seen: set[str] = set()
    while todo and len(seen) < _MAX_RULES_WALKED:
        goal = todo.pop(0)
        if goal in seen:
            continue
        seen.add(goal)
        if goal not in rules:
            _named(ctx, "make", [goal])
            continue
        prereqs, recipe = rules[goal]
        todo.extend(expand(p, variables, goal) for p in prereqs)
        for line in recipe:
            ctx.run(["("])
            ctx.cwd = directory
            ctx.run_text(expand(line.lstrip("@-+ \t"), variables, goal), powershell=False)
            ctx.run([")"])


def runner(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``npm run X`` (package.json scripts are read), ``just X``, ``yarn X``: by name otherwise."""
    name = args[0][0].rsplit("/", 1)[-1].lower()
    words = [a[0] for a in args[1:] if not a[0].startswith("-")]
    if name in ("npm", "pnpm", "yarn", "bun") and (words[:2] == ["pkg", "set"] or words[:1] == ["set-script"]):
        _set_scripts(ctx, words)  # writes package.json's scripts: run by a later `npm run` (planted.py)
        return
    if name in ("npm", "pnpm", "bun") or (name == "yarn" and words[:1] == ["run"]):
        if words[:1] not in (["run"], ["run-script"]):
            return
        words = words[1:]
    scripts = _package_scripts(ctx) if name in ("npm", "yarn", "pnpm", "bun") else None
    for script in words[:1]:
        if scripts is not None and script in scripts:
            for hook in ("pre" + script, script, "post" + script):
                if hook in scripts:
                    ctx.run_text(scripts[hook], powershell=False)
        else:
            _named(ctx, name, [script])


def _set_scripts(ctx: Ctx, words: list[str]) -> None:
    """``npm pkg set scripts.NAME=CMD …``, ``npm set-script NAME CMD``: the commands a later ``npm run`` runs,
    judged now (hook/detect/planted.py)."""
    if words[:1] == ["set-script"]:
        commands = words[2:3]
    else:
        commands = [w.partition("=")[2] for w in words[2:] if w.startswith("scripts.") and "=" in w]
    key = ctx.path("package.json") if ctx.cwd else "package.json"
    ctx.set_up += [(key, command) for command in commands]


def _named(ctx: Ctx, tool: str, goals: list[str]) -> None:
    for goal in goals:
        if _mergeish(goal):
            branch = ctx.branch()
            ctx.add(Merge(via="make", branch=branch if branch and DYN not in branch else None, undetermined=True,
                          detail=f"{tool} {goal}: a target whose recipe is not in sight"))


def _mergeish(goal: str) -> bool:
    """A target named for merging: its words say merge, land or ship (``make ship``, ``make merge-pr``; not
    ``make merged-report`` or ``make landing-page``)."""
    from hook.detect.shaped import acts, tokens, words

    return any(acts(words(t)) or {"land", "ship"} & set(words(t)) for t in tokens(goal))


def _read_makefile(ctx: Ctx, directory: str | None, makefile: str | None) -> str | None:
    names = [makefile] if makefile else list(_MAKEFILES)
    for name in names:
        text = ctx.read_file(ctx.path(name, directory))
        if text is not None:
            return text
    return None


def parse_makefile(text: str) -> tuple[dict[str, tuple[list[str], list[str]]], dict[str, str], str | None]:
    """``(rules: target -> (prerequisites, recipe lines), variables, default goal)``."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    variables: dict[str, str] = {}
    default: str | None = None
    current: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            for target in current:
                rules[target][1].append(line[1:])
            continue
        stripped = line.split("#", 1)[0].strip()
        if not stripped:
            continue
        for prefix in ("export ", "override "):
            stripped = stripped.removeprefix(prefix)
        eq, colon = stripped.find("="), stripped.find(":")
        if eq > 0 and (colon < 0 or colon >= eq - 2):
            name = stripped[:eq].rstrip("?:+!").strip()
            value = stripped[eq + 1 :].strip()
            if stripped[:eq].endswith("+"):
                value = (variables.get(name, "") + " " + value).strip()
            if not (stripped[:eq].endswith("?") and name in variables):
                variables[name] = value
            current = []
            continue
        if colon > 0 and not stripped.startswith(("ifeq", "ifneq", "ifdef", "ifndef", "include", "-include")):
            targets = stripped[:colon].split()
            deps, _, inline = stripped[colon + 1 :].lstrip(":").partition(";")
            current = targets
            for target in targets:
                rules.setdefault(target, ([], []))[0].extend(deps.split())
                if inline.strip():
                    rules[target][1].append(inline.strip())
                if default is None and not target.startswith(".") and "%" not in target:
                    default = target
    return rules, variables, default


def expand(text: str, variables: dict[str, str], target: str, depth: int = 0) -> str:
    """``$(NAME)``/``${NAME}``/``$X`` from the Makefile, ``$@`` the target, ``$$`` a dollar. Functions
    and unknown names stay as written: the shell then sees a computed piece."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 >= len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "@":
            out.append(target)
            i += 2
        elif nxt in "({":
            close = text.find(")" if nxt == "(" else "}", i + 2)
            name = text[i + 2 : close] if close > 0 else ""
            if close > 0 and name in variables and depth < 10:
                out.append(expand(variables[name], variables, target, depth + 1))
                i = close + 1
            else:
                out.append(c)
                i += 1
        elif nxt in variables and depth < 10:
            out.append(expand(variables[nxt], variables, target, depth + 1))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _package_scripts(ctx: Ctx) -> dict[str, str] | None:
    text = ctx.read_file(os.path.join(ctx.cwd, "package.json")) if ctx.cwd else None
    if text is None:
        return None
    import json

    try:
        scripts = json.loads(text).get("scripts")
    except (ValueError, AttributeError):
        return None
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else None
