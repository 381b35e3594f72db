"""Text produced at run time and run by a shell (``eval "$(…)"``, ``source <(…)``, ``bash -c "$(…)"``,
``… | bash``, a command word only the run knows): what runs is not in the text, so the answer is
undetermined (design §6) — except for the few programs whose output is *documented* to be shell
environment set-up only, which the guard trusts as it trusts any named program to do what it is
documented to do. Their effect is modelled: the variables they may set become unknown (all of them
when the set is not fixed), and the shell functions they define, when called, may set any variable.

The list is short on purpose; each entry is the exact argv whose output is set-up only:

- ``ssh-agent [-s|-c|-k] [-t life] [-a socket]``: ``SSH_AUTH_SOCK=…; export …; SSH_AGENT_PID=…``
  (``-c``: csh ``setenv`` lines, which bash does not run) and an ``echo``;
- ``brew shellenv [SHELL]``: exports ``HOMEBREW_*``, ``PATH``, ``MANPATH``, ``INFOPATH`` (zsh: ``fpath``);
- ``pyenv init - [SHELL]`` / ``pyenv init --path``, ``rbenv init - [SHELL]``: ``PATH``, ``*_SHELL``, the
  ``pyenv``/``rbenv`` function (its subcommands may set variables: calling it makes them unknown), its
  completion function, and a ``rehash`` of the tool itself;
- ``direnv export SHELL``: ``export``/``unset`` of whatever the ``.envrc`` sets (any variable);
  ``direnv hook SHELL``: the ``_direnv_hook`` function (it runs ``direnv export``);
- ``opam env [--OPTIONS]``: assignments of the variables opam packages declare (any variable).

Not listed, so undetermined: ``conda shell.bash hook`` (it activates ``base``, sourcing every
``etc/conda/activate.d`` script: arbitrary shell code), ``zoxide init``/``starship init``/``mise
activate`` (interactive-prompt hooks that define commands which ``cd`` or trap), anything else.
"""

from __future__ import annotations

from hook.shell.syntax import DYN, Command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Event

ANY = None  # the program may set any variable
_SHELLS = frozenset({"bash", "sh", "zsh", "fish", "ksh", "dash", "posix"})
# name -> (variables it may set (ANY: any), functions its output defines)
_EFFECTS: dict[str, tuple[frozenset[str] | None, tuple[str, ...]]] = {
    "ssh-agent": (frozenset({"SSH_AUTH_SOCK", "SSH_AGENT_PID"}), ()),
    "brew": (frozenset({"HOMEBREW_PREFIX", "HOMEBREW_CELLAR", "HOMEBREW_REPOSITORY", "PATH", "MANPATH",
                        "INFOPATH", "fpath"}), ()),
    "pyenv": (frozenset({"PATH", "PYENV_SHELL"}), ("pyenv", "_pyenv")),
    "rbenv": (frozenset({"PATH", "RBENV_SHELL"}), ("rbenv", "_rbenv")),
    "direnv": (ANY, ("_direnv_hook",)),
    "opam": (ANY, ()),
}


def printer(ctx: Ctx, inner: list[Event] | None) -> str | None:
    """The listed program a substitution's events run, called in one of its set-up-only forms."""
    if inner is None or any(e not in ("(", ")") and not isinstance(e, Command) for e in inner):
        return None
    commands = [e for e in inner if isinstance(e, Command)]
    if len(commands) != 1 or commands[0].piped or commands[0].assigns:
        return None
    args = [a[0] for a in ctx.expand(commands[0].words)]
    if not args or any(DYN in a for a in args):
        return None
    if args[0] == "command" and len(args) > 1:
        args = args[1:]
    name, rest = args[0].rsplit("/", 1)[-1], args[1:]
    return name if name in _EFFECTS and _documented(name, rest) else None


def _documented(name: str, rest: list[str]) -> bool:
    if name == "ssh-agent":
        k = 0
        while k < len(rest):
            if rest[k] in ("-t", "-a") and k + 1 < len(rest):
                k += 2
            elif rest[k] in ("-s", "-c", "-k"):
                k += 1
            else:
                return False
        return True
    if name == "brew":
        return rest[:1] == ["shellenv"] and (len(rest) == 1 or (len(rest) == 2 and rest[1] in _SHELLS))
    if name in ("pyenv", "rbenv"):
        forms = (["init", "-"], ["init", "--path"]) if name == "pyenv" else (["init", "-"],)
        return rest[:2] in forms and (len(rest) == 2 or (len(rest) == 3 and rest[2] in _SHELLS))
    if name == "direnv":
        return len(rest) == 2 and rest[0] in ("export", "hook") and rest[1] in _SHELLS
    return rest[:1] == ["env"] and all(a.startswith("--") for a in rest[1:])  # opam


def apply(ctx: Ctx, name: str) -> None:
    """The shell state after running ``name``'s output in this shell."""
    names, functions = _EFFECTS[name]
    if names is ANY:
        ctx.poison()
    else:
        for var in names:
            ctx.setvar(var, DYN)
            ctx.exported.add(var)
    for function in functions:
        ctx.functions[function] = []
        ctx.tool_functions.add(function)


def substituted(args: list[Arg]) -> list[Event] | None:
    """The events of the one substitution that is all of ``args`` (blanks aside); None when the
    text is not wholly one substitution's output."""
    subs = []
    for _, word in args:
        if word is None:
            return None
        for part in word.parts:
            if part.inner is not None:
                subs.append(part.inner)
            elif part.kind != "l" or part.text.strip():
                return None
    return subs[0] if len(subs) == 1 else None


def produced(ctx: Ctx, args: list[Arg], same_shell: bool) -> None:
    """Shell text that is wholly one program's output: undetermined, unless that program is one whose
    output is documented set-up only (hook/detect/shellenv.py), whose effect is then modelled."""
    inner = substituted(args)
    name = printer(ctx, inner) if inner is not None else None
    if name is None:
        ctx.runtime("shell text produced at run time")
    elif same_shell:
        apply(ctx, name)


def alias(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``alias NAME=VALUE``: later commands named NAME may run VALUE (hook/detect/context.py)."""
    for text, _ in args[1:]:
        name, eq, value = text.partition("=")
        if DYN in text:
            ctx.runtime("an alias made of text produced at run time")
        elif eq and not name.startswith("-"):
            ctx.aliases[name] = value


def unalias(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    for text, _ in args[1:]:
        if text == "-a":
            ctx.aliases.clear()
        ctx.aliases.pop(text, None)
