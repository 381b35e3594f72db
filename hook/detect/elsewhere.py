"""Programs that run a command on another machine, in a container, a pod or a VM (kind ``runner``, reading
``deferred:elsewhere`` in hook/detect/programs.py): ``ssh``, ``docker``/``podman``/``nerdctl run|exec``,
``kubectl exec|run``, ``lxc exec``, cloud CLIs (``gcloud compute ssh --command``).

The programs there are not this machine's (an image's entrypoint may be gh, its gh may have other aliases,
its directory and ``GH_REPO`` are its own), so nothing run there is determined: the command found is read
for hints (its merges undetermined, with the remote directory unknown), and any merge-shaped text handed
to the tool — ``docker run --rm -e GH_TOKEN IMAGE pr merge 5 -R acme/widgets`` — makes the answer
undetermined (hook/detect/opaque.py). ``docker ps``, ``kubectl get pods``: nothing merge-shaped, nothing run.
"""

from __future__ import annotations

from hook.detect.opaque import handed, hint
from hook.detect.runstring import run_string
from hook.detect.wrappers import skip_options

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_SSH_VALUES = "BbcDEeFIiJLlmOopQRSWw"
_DOCKER_VALUES = ("--env", "--env-file", "--volume", "--publish", "--workdir", "--user", "--name", "--network",
                  "--net", "--label", "--mount", "--entrypoint", "--platform", "--hostname", "--add-host", "--cpus",
                  "--memory", "--restart", "--log-driver", "--log-opt", "--device", "--cap-add", "--cap-drop",
                  "--security-opt", "--ulimit", "--tmpfs", "--gpus", "--runtime", "--pull", "--ipc", "--pid",
                  "--dns", "--expose", "--link", "--volumes-from", "--cidfile", "--shm-size", "--stop-signal",
                  "--stop-timeout", "--health-cmd", "--label-file", "--group-add", "--sysctl", "--attach",
                  "--detach-keys", "--cpu-shares", "--cpuset-cpus", "--memory-swap", "--userns", "--annotation",
                  "--context", "--host", "--config", "--log-level", "--namespace", "--container", "--pod")
_DOCKER_SHORT = "evpwulhmacH"
_RUNS = frozenset({"run", "exec", "create", "debug", "attach", "enter", "shell", "ssh", "execute-command",
                   "send-command", "run-command", "start-session", "invoke", "console"})
# cloud CLIs: everything but the subcommands above manages resources (buckets, functions, apps), runs nothing
_CLOUDS = frozenset({"gcloud", "az", "aws", "fly", "flyctl", "heroku", "railway", "render", "vercel", "netlify"})
# subcommands that run no command they are handed (listing, logs, images, building from the project's own
# Dockerfile, the cluster's objects): nothing handed to them can merge
_QUIET = frozenset({
    "ps", "ls", "list", "images", "image", "logs", "pull", "push", "tag", "login", "logout", "inspect", "rm", "rmi",
    "stop", "kill", "restart", "start", "pause", "unpause", "network", "volume", "system", "version", "info",
    "stats", "top", "port", "cp", "commit", "save", "load", "history", "events", "context", "manifest", "search",
    "wait", "rename", "update", "diff", "export", "import", "build", "buildx", "builder", "compose", "down", "up",
    "config", "get", "describe", "explain", "api-resources", "api-versions", "cluster-info", "apply", "delete",
    "rollout", "scale", "label", "annotate", "port-forward", "proxy", "auth", "certificate", "cordon", "uncordon",
    "drain", "taint", "patch", "edit", "status", "machine", "volumes", "networks", "secret", "service", "stack",
    "node", "swarm", "plugin", "trust", "scout", "init", "help", "--help", "-h", "--version", "whoami",
})


def elsewhere(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    from hook.detect.programs import command_name

    name = command_name(args[0][0])
    why = f"{name} runs it elsewhere: another machine, container or environment"
    saved = ctx.cwd
    ctx.cwd = None  # the other side's directory and repository are unknown here
    try:
        remote = name in ("ssh", "mosh", "rsh", "autossh")
        quiet = _ssh(ctx, args, why) if remote else _container(ctx, args, cmd, why)
    finally:
        ctx.cwd = saved
    reason = None if quiet else handed(ctx, args[1:], cmd, files=True)
    if reason is not None:
        ctx.runtime(f"{name}: {why}, and {reason}", via="runner")


def _ssh(ctx: Ctx, args: list[Arg], why: str) -> bool:
    """True when the remote command line was found and read (its programs judged there, by the rule)."""
    words = [a[0] for a in args]
    i = skip_options(args, 1, _SSH_VALUES + ("M" if words[0].endswith("autossh") else ""), ())
    # after the host (mosh: after `--`), the remote command line, joined by a space
    dashes = words.index("--") + 1 if "--" in words else len(words)
    rest = words[dashes:] if words[0].endswith("mosh") else words[i + 1 :]
    if not rest:
        return False
    mark = ctx.mark()
    run_string(ctx, [(" ".join(rest), None)])
    ctx.uncertain(mark, why)
    return True


def _container(ctx: Ctx, args: list[Arg], cmd: Command, why: str) -> bool:
    """The command a container tool runs, as far as the text shows it: after ``--``; or after the image or
    container of ``run``/``exec``/``create`` (``--entrypoint X`` names the program); ``-c`` text. True when
    the tool runs nothing it is handed (``docker ps``, ``kubectl get pods``, ``docker build``)."""
    words = [a[0] for a in args]
    if "--" in words:
        hint(ctx, list(args[words.index("--") + 1 :]), why, cmd)
        return False
    for k, w in enumerate(words[:-1]):
        if w in ("-c", "--command", "-C") or w.startswith("--command="):
            text = w.partition("=")[2] if "=" in w else words[k + 1]
            mark = ctx.mark()
            run_string(ctx, [(text, None)])
            ctx.uncertain(mark, why)
            return False
    i = skip_options(args, 1, _DOCKER_SHORT, _DOCKER_VALUES)
    subs: list[str] = []
    while i < len(words) and len(subs) < 3:
        if words[i].startswith("-"):  # `gcloud compute ssh VM --zone z`: options between subcommands
            i = skip_options(args, i, _DOCKER_SHORT, _DOCKER_VALUES)
            continue
        subs.append(words[i])
        i += 1
        if subs[-1] in _RUNS:
            break
    if not subs or subs[-1] not in _RUNS:
        from hook.detect.programs import command_name

        return bool(subs) and (subs[0] in _QUIET or command_name(words[0]) in _CLOUDS or (
            len(subs) > 1 and subs[1] in _QUIET))
    entrypoint = next((words[k + 1] for k, w in enumerate(words[:-1]) if w == "--entrypoint"), None)
    i = skip_options(args, i, _DOCKER_SHORT, _DOCKER_VALUES)
    rest = list(args[i + 1 :])  # after the image, container or pod
    if entrypoint is not None:
        rest = [(entrypoint, None), *rest]
    hint(ctx, rest, why, cmd)
    return False
