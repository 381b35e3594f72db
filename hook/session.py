"""`merge-hold hook session-start [--agent NAME] --config SPEC`: tell, before you stop (design §6).

Registered as the agent's ``SessionStart`` hook (Claude Code, Codex, VS Code, Copilot, Qoder, goose, …): it
reads the session's repository from the hook input's working directory (its git remote, as ``gh`` picks
it), makes the guard's one verdict-source read for that repository (`hook.verdicts.sources`: the held PRs
with their bases and status descriptions, and the branch freezes record), and hands the agent, as context
(Claude Code's ``hookSpecificOutput.additionalContext``, or the agent's own form: `context` in its
module), which PRs are on hold and which branches are frozen, by whom and why — so that it plans around
them instead of running into the guard. Nothing at all when nothing is held or frozen, when the directory
is no GitHub repository merge-hold manages, or when anything goes wrong (a notice on stderr; a session
start is never delayed past the spec's ``timeout_ms`` nor stopped).

Cost (design §7, ≤ 1.5 x the interpreter floor): no detection, no shell reader; the spec, the JSON reader,
the git config reader and the verdict source only. Launched like the guard (`hook.tools.claude_settings`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType
    from typing import Any

    from hook.verdicts.sources import RepoAnswer

MAX_PRS = 20
MAX_FREEZES = 10
USAGE = "usage: merge-hold hook session-start [--agent NAME] --config SPEC   (the agent's hook input on stdin)\n"


def _cwd(payload: Mapping[str, Any]) -> str | None:
    """The session's directory, as each agent names it."""
    for key in ("cwd", "working_dir", "workspaceRoot"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    for key in ("workspace_roots", "workspaceRoots"):
        roots = payload.get(key)
        if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
            return roots[0]
    return None


def context_text(repo: str, answer: RepoAnswer, now_iso: str) -> str | None:
    """What the agent is told about ``repo``; None when nothing is held or frozen (or it is unmanaged)."""
    if not answer.managed:
        return None
    from hook.freezes import describe, read_record

    lines: list[str] = []
    if answer.held:
        lines.append(f"merge-hold: these pull requests of {repo} are on hold. Do not merge them (no `gh pr merge`, "
                     "API call, auto-merge, merge queue or push of their branch onto its base), and do not lift "
                     "their holds: if your task needs one merged, stop and ask the user.")
        for number in answer.held[:MAX_PRS]:
            base, _, said = answer.heads.get(number, ("", "", ""))
            into = f" (into {base})" if base else ""
            lines.append(f"  - #{number}{into}: {said or 'held'}")
        if len(answer.held) > MAX_PRS:
            lines.append(f"  (+{len(answer.held) - MAX_PRS} more held PRs)")
    active, default, problem = read_record(answer.freezes, now_iso)
    if problem is not None:
        lines.append(f"merge-hold: which branches of {repo} are frozen is not known right now ({problem}); "
                     "pushes to it are blocked until it is.")
    elif active:
        if lines:
            lines.append("")
        whole = any(f.get("branches") == "*" for f in active)
        where = f" (the whole repository: {default or 'its default branch'} and every open PR's base)" if whole else ""
        lines.append(f"merge-hold: branches of {repo} are frozen{where}. Do not push, merge or write commits onto "
                     "them until the freeze ends; a held push is blocked and shown the holder and reason.")
        lines += describe(active[:MAX_FREEZES], branches=True)
        if len(active) > MAX_FREEZES:
            lines.append(f"  (+{len(active) - MAX_FREEZES} more freezes)")
    if not lines:
        return None
    lines.append("Holds and freezes are lifted by people (a `/unhold` comment, the chat room, the dashboard), "
                 "never by the agent.")
    return "\n".join(lines)


def tell(agent: ModuleType, spec_path: str, stdin: Any, env: Mapping[str, str]) -> tuple[int, str, str]:
    """The answer ``(exit status, stdout, stderr)``; raises on the hook's own trouble (the caller says so)."""
    import time

    from hook.detect.gitrepo import resolve_repo
    from hook.fastjson import loads
    from hook.spec import load_spec
    from hook.verdicts.sources import open_source

    spec = load_spec(spec_path)
    payload = loads(stdin.read() or b"{}")
    if not isinstance(payload, dict):
        raise ValueError("the hook input is not a JSON object")
    import posix

    repo = resolve_repo(_cwd(payload) or posix.getcwd(), env)
    if repo is None:
        return (0, "", "")
    source = open_source(spec)
    try:
        (answer,) = source.lookup([], [repo])[1]
    finally:
        source.close()
    text = context_text(repo, answer, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if text is None:
        return (0, "", "")
    say = getattr(agent, "context", None)
    return say(text) if say is not None else claude_context(text)


def claude_context(text: str) -> tuple[int, str, str]:
    """Claude Code's form (Codex, VS Code, Qoder read the same): ``hookSpecificOutput.additionalContext``."""
    from hook.agents.call import to_json

    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return (0, to_json(output) + "\n", "")


def _environ() -> Mapping[str, str]:
    """The environment (for ``GH_REPO``) without importing ``os`` when it is not loaded (`hook.guard`'s reason)."""
    os = sys.modules.get("os")
    if os is not None:
        return os.environ  # type: ignore[no-any-return]
    import posix

    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    return {key.decode(encoding, errors): value.decode(encoding, errors) for key, value in posix.environ.items()}


def _answer(answer: tuple[int, str, str]) -> int:
    code, out, err = answer
    for stream, text in ((sys.stdout, out), (sys.stderr, err)):
        if text:
            try:
                stream.write(text)
                stream.flush()
            except (OSError, ValueError):
                pass
    return int(code)


def main(argv: list[str] | None = None) -> int:
    from hook.guard import agent_name, config_path

    args = sys.argv[1:] if argv is None else argv
    try:
        from hook import agents

        agent = agents.load(agent_name(args))
        path = config_path(args)
        if path is None:
            sys.stdout.write(USAGE)
            return 0
        return _answer(tell(agent, path, sys.stdin.buffer, _environ()))
    except BaseException as exc:  # never a traceback, never a stopped session
        notice = f"merge-hold: session-start: {type(exc).__name__}: {' '.join(str(exc).split())} (nothing told)\n"
        return _answer((0, "", notice))


def launch() -> None:
    """The fast launcher's entry (`hook.tools.claude_settings.fast_command`), as `hook.guard.launch`."""
    code = main(sys.argv[1:])
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 -- contextlib costs start-up (design §7)
            stream.flush()
        except (OSError, ValueError):
            pass
    import posix

    posix._exit(code)
