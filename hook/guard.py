"""`merge-hold hook-guard [--agent NAME] --config SPEC`: the agent guard (design §6).

Reads one pre-execution hook input on stdin — Claude Code's PreToolUse JSON by default, or the named
agent's own shape (`hook.agents`) — and answers in that agent's form: for Claude Code exit 0 (allow), 2
(block: the reason on stderr, which Claude Code hands to the agent) or 1 (the guard's own trouble: one
line on stderr, and the call proceeds); for the others, their documented equivalents (stdout JSON,
exit status, stderr). It never blocks on its own error and never prints a traceback: the required
``merge-hold`` status check stands behind it, so failing open costs defence in depth, not the gate.

Cost is the product (design §7): most tool calls are not merges, so the path to "not a merge" imports
only `hook.spec`, `hook.fastjson`, the named agent's module and the detection prefilter. The spec is
read on every call (cheaply) so that a broken spec is noticed at once. Detection, the verdict lookup
and records load only for a probable merge. No argument parser: argparse exits 2 on a bad argument,
which would mean "block".
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType
    from typing import Any

    from hook.agents.call import Answer, ToolCall
    from hook.judgement import Judgement
    from hook.spec import Spec

SHELL_TOOLS = frozenset({"Bash", "PowerShell", "Monitor"})
"""Tools whose input is a command line; the MCP merge tools are recognised by name."""

ALLOW, OWN_ERROR = 0, 1
USAGE = "usage: merge-hold hook-guard [--agent NAME] --config SPEC   (the agent's hook input on stdin)\n"


class _GuardError(Exception):
    """A condition the guard reports in one line and then allows (fail open)."""


def _say(text: str) -> None:
    # A closed stderr must not turn a decision into a crash: the exit status is the decision.
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def config_path(argv: list[str]) -> str | None:
    """The ``--config`` value; None for ``--help``. Raises `_GuardError` on anything else."""
    path: str | None = None
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in ("-h", "--help"):
            return None
        if arg == "--config" and rest:
            path = rest.pop(0)
        elif arg.startswith("--config="):
            path = arg.partition("=")[2]
        elif arg == "--agent" and rest:
            rest.pop(0)  # read by `agent_name`
        elif arg.startswith("--agent="):
            pass
        else:
            raise _GuardError(f"unexpected argument {arg!r}; {USAGE.strip()}")
    if not path:
        raise _GuardError(f"no --config SPEC given; {USAGE.strip()}")
    return path


def is_merge_tool(tool_name: str) -> bool:
    # The MCP tools that merge, enable auto-merge, enqueue a PR or lift a hold: one table, in detection,
    # from which the settings' matcher is derived.
    if not tool_name.startswith("mcp__"):
        return False
    from hook.detect.mcp import is_gated_tool

    return is_gated_tool(tool_name)


def agent_name(argv: list[str]) -> str:
    """The ``--agent`` value (default ``claude``); read before anything else can fail, so that even a
    bad argument is answered in the agent's own form."""
    for at, arg in enumerate(argv):
        if arg == "--agent" and at + 1 < len(argv):
            return argv[at + 1]
        if arg.startswith("--agent="):
            return arg.partition("=")[2]
    return "claude"


def main(argv: list[str] | None = None) -> int:
    # The cycle collector is paused while the guard runs: loading the shell reader allocates enough
    # objects for several collections that find nothing to free (its objects live until the process
    # ends), 0.2-0.4 ms of a one-shot process (design §7). Restored for callers that run it in-process.
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        return _guard(sys.argv[1:] if argv is None else argv)
    finally:
        if collecting:
            gc.enable()


def launch() -> None:
    """The fast launcher's entry (`hook.tools.claude_settings.fast_guard_command`): `main`, then the
    process ends at once with its status. Why not ``sys.exit``: interpreter finalization (clearing the
    namespaces of the ~40 modules loaded, the last collections) costs ~0.8 ms, 4-5% of the floor
    (design §7), and the guard leaves nothing to finalize: the answer is flushed here, records are
    appended with unbuffered ``os.write``, a socket closes with the process, no atexit hook is ours."""
    code = main(sys.argv[1:])
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 -- contextlib would load functools and collections (start-up, design §7)
            stream.flush()
        except (OSError, ValueError):
            pass
    import posix

    posix._exit(code)


def _guard(args: list[str]) -> int:
    agent: ModuleType | None = None
    try:
        from hook import agents

        try:
            agent = agents.load(agent_name(args))
        except agents.UnknownAgent as exc:
            raise _GuardError(str(exc)) from None
        path = config_path(args)
        if path is None:
            sys.stdout.write(USAGE)
            return ALLOW
        reason = run(agent, path, sys.stdin.buffer)
        return _answer(agent.allow() if reason is None else agent.deny(reason))
    except _GuardError as exc:
        message = str(exc)
    except SystemExit as exc:  # something below called sys.exit: never let a foreign 2 through
        message = f"unexpected exit {exc.code!r}"
    except BaseException as exc:  # the contract: never a traceback, never a block
        message = f"{type(exc).__name__}: {exc}"
    notice = f"merge-hold: guard error (allowing): {' '.join(message.split())}\n"
    try:
        return _answer(agent.trouble(notice) if agent is not None else (OWN_ERROR, "", notice))
    except BaseException:  # a bug in the agent module itself: Claude Code's non-blocking form, the
        _say(notice)       # only one left (Copilot reads any non-zero exit as a deny, failing safe)
        return OWN_ERROR


def _answer(answer: Answer) -> int:
    """Hand the answer over: stdout (the agents that read JSON), stderr, and the exit status."""
    code, out, err = answer
    if out:
        try:
            sys.stdout.write(out)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    if err:
        _say(err)
    return int(code)


def _read_input(stdin: Any) -> dict[str, Any]:
    from hook.fastjson import JSONError, loads

    try:
        payload = loads(stdin.read())
    except JSONError as exc:
        raise _GuardError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise _GuardError("the hook input is not a JSON object")
    return payload


def run(agent: ModuleType, path: str, stdin: Any) -> str | None:
    """None to allow, or the reason to block with. Raises `_GuardError` on the guard's own trouble."""
    from hook.agents.call import NotAToolCall
    from hook.spec import SpecError, load_spec

    try:
        spec = load_spec(path)
    except SpecError as exc:
        raise _GuardError(str(exc)) from None
    payload = _read_input(stdin)
    try:
        call: ToolCall | None = agent.tool_call(payload)
    except NotAToolCall as exc:
        raise _GuardError(str(exc)) from None
    if call is None:
        return None
    if call.tool_name in SHELL_TOOLS:
        command = call.command
        if command is None:
            return None
        from hook.detect.prefilter import might_merge

        if not might_merge(command):
            return None
    elif not is_merge_tool(call.tool_name):
        return None
    return judge(spec, call)


def _environ() -> Mapping[str, str]:
    """The process environment as ``os.environ`` gives it, without importing ``os`` (1-3 ms under ``-S``,
    see hook/shell/paths.py): `posix.environ` decoded the same way. When ``os`` is loaded (the console
    script, tests) its mapping is used, since it alone sees changes made through it since start-up."""
    os = sys.modules.get("os")
    if os is not None:
        return os.environ  # type: ignore[no-any-return]
    import posix

    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    return {key.decode(encoding, errors): value.decode(encoding, errors) for key, value in posix.environ.items()}


def judge(spec: Spec, call: ToolCall) -> str | None:
    import posix

    from hook.detect.toolcall import detect

    detection = detect(call.tool_name, call.tool_input, cwd=call.cwd or posix.getcwd(), env=_environ())
    merges = list(detection.gated)
    if not merges:
        return None
    # Only now, for a merge: the decision, the lookup and the records.
    import time

    from hook.decide import Plan, judge_all
    from hook.spec import SpecError
    from hook.verdicts.sources import Unreachable, open_source

    plan = Plan(merges, spec)
    answers = None
    unreachable: str | None = None
    if plan.needs_lookup:
        try:
            source = open_source(spec)
        except SpecError as exc:
            raise _GuardError(str(exc)) from None
        try:
            answers = source.lookup(plan.prs, plan.repos)
            merging = plan.merging()  # a free PR stacked on others merges them too: read the chain below
            if merging:
                from hook.verdicts.stacks import follow

                follow(source, [plan.prs[i] for i in merging], [answers[0][i] for i in merging])
        except Unreachable as exc:
            unreachable = str(exc)
        finally:
            source.close()
    now_iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    judgements = judge_all(plan, spec, answers, unreachable, now_iso)
    record_problem = _record(spec, call.payload(), call.tool_name, call.tool_input, judgements, now_iso)
    blocks = [j for j in judgements if j.blocks]
    if not blocks:
        if record_problem:
            raise _GuardError(record_problem)
        return None
    return "\n\n".join(dict.fromkeys(j.message for j in blocks))


def _record(spec: Spec, payload: dict[str, Any], tool_name: str, tool_input: dict[str, Any],
            judgements: list[Judgement], now_iso: str) -> str | None:
    """Append one record per judged merge; returns a problem to report, never raises (records are evidence,
    not the decision)."""
    if not spec.record_file:
        return None
    from hook.detect.model import is_merge

    # Evidence of merges and of what was blocked; an allowed own-name push or a comment on a free PR is
    # not a merge, and recording every push would fill the audit log with noise.
    judgements = [j for j in judgements if j.blocks or is_merge(j.merge)]
    if not judgements:
        return None
    try:
        from hook import evidence

        command = evidence.command_text(tool_name, tool_input)
        evidence.append(spec.record_file, [
            evidence.make_record(
                spec_version=spec.spec_version, time_iso=now_iso, payload=payload, command=command,
                repo=j.repo, pr=j.pr, decision=j.decision, code=j.code, reason=j.reason, via=j.merge.via,
            )
            for j in judgements
        ])
    except Exception as exc:
        return f"cannot write the record file {spec.record_file}: {exc}"
    return None


if __name__ == "__main__":
    raise SystemExit(main())
