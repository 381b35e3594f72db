"""`merge-hold hook-guard --config SPEC`: the Claude Code PreToolUse guard (design §6).

Reads the tool call JSON on stdin and exits 0 (allow), 2 (block: the reason on stderr, which Claude Code
hands to the agent) or 1 (the guard's own trouble: one line on stderr, and the call proceeds). It never
exits 2 on its own error and never prints a traceback: the required ``merge-hold`` status check stands
behind it, so failing open costs defence in depth, not the gate.

Cost is the product (design §7): most tool calls are not merges, so the path to "not a merge" imports
only `hook.spec`, `hook.fastjson` and the detection prefilter. The spec is read on every call (cheaply)
so that a broken spec is noticed at once. Detection, the verdict lookup and records load only for a
probable merge. No argument parser: argparse exits 2 on a bad argument, which would mean "block".
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from hook.decide import Judgement
    from hook.spec import Spec

SHELL_TOOLS = frozenset({"Bash", "PowerShell", "Monitor"})
"""Tools whose input is a command line; the MCP merge tools are recognised by name."""

ALLOW, BLOCK, OWN_ERROR = 0, 2, 1
USAGE = "usage: merge-hold hook-guard --config SPEC   (PreToolUse tool call JSON on stdin)\n"


class _GuardError(Exception):
    """A condition the guard reports in one line and then allows (fail open)."""


def _say(text: str) -> None:
    # A closed stderr must not turn a decision into a crash: the exit status is the decision.
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _notice(message: str) -> None:
    _say(f"merge-hold: guard error (allowing): {' '.join(message.split())}\n")


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
        else:
            raise _GuardError(f"unexpected argument {arg!r}; {USAGE.strip()}")
    if not path:
        raise _GuardError(f"no --config SPEC given; {USAGE.strip()}")
    return path


def is_merge_tool(tool_name: str) -> bool:
    # The settings' `mcp__.*__merge_pull_request`, and the other MCP tools that merge, enable auto-merge
    # or enqueue a PR (one table, in detection).
    if not tool_name.startswith("mcp__"):
        return False
    from hook.detect.mcp import is_merge_tool as names_a_merge

    return names_a_merge(tool_name)


def main(argv: list[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv, sys.stdin.buffer)
    except _GuardError as exc:
        _notice(str(exc))
    except SystemExit as exc:  # something below called sys.exit: never let a foreign 2 through
        _notice(f"unexpected exit {exc.code!r}")
    except BaseException as exc:  # the contract: never a traceback, never 2
        _notice(f"{type(exc).__name__}: {exc}")
    return OWN_ERROR


def _read_input(stdin: Any) -> dict[str, Any]:
    from hook.fastjson import JSONError, loads

    try:
        payload = loads(stdin.read())
    except JSONError as exc:
        raise _GuardError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise _GuardError("the hook input is not a JSON object")
    return payload


def run(argv: list[str], stdin: Any) -> int:
    path = config_path(argv)
    if path is None:
        sys.stdout.write(USAGE)
        return ALLOW
    from hook.spec import SpecError, load_spec

    try:
        spec = load_spec(path)
    except SpecError as exc:
        raise _GuardError(str(exc)) from None
    payload = _read_input(stdin)
    tool_name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_name, str) or not isinstance(tool_input, dict):
        raise _GuardError("the hook input has no tool_name/tool_input")
    if tool_name in SHELL_TOOLS:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return ALLOW
        from hook.detect.prefilter import might_merge

        if not might_merge(command):
            return ALLOW
    elif not is_merge_tool(tool_name):
        return ALLOW
    return judge(spec, payload, tool_name, tool_input)


def judge(spec: Spec, payload: dict[str, Any], tool_name: str, tool_input: dict[str, Any]) -> int:
    import os

    from hook.detect.toolcall import detect

    cwd = payload.get("cwd")
    detection = detect(tool_name, tool_input, cwd=cwd if isinstance(cwd, str) and cwd else os.getcwd(),
                       env=os.environ)
    merges = list(detection.merges)
    if not merges:
        return ALLOW
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
        except Unreachable as exc:
            unreachable = str(exc)
        finally:
            source.close()
    now_iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    judgements = judge_all(plan, spec, answers, unreachable, now_iso)
    record_problem = _record(spec, payload, tool_name, tool_input, judgements, now_iso)
    blocks = [j for j in judgements if j.blocks]
    if not blocks:
        if record_problem:
            _notice(record_problem)
            return OWN_ERROR
        return ALLOW
    _say("\n\n".join(dict.fromkeys(j.message for j in blocks)) + "\n")
    return BLOCK


def _record(spec: Spec, payload: dict[str, Any], tool_name: str, tool_input: dict[str, Any],
            judgements: list[Judgement], now_iso: str) -> str | None:
    """Append one record per judged merge; returns a problem to report, never raises (records are evidence,
    not the decision)."""
    if not spec.record_file:
        return None
    try:
        from hook import records

        command = records.command_text(tool_name, tool_input)
        records.append(spec.record_file, [
            records.make_record(
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
