"""One tool call, whichever agent asked: what every agent module turns its hook input into.

The guard judges tool calls in Claude Code's vocabulary (design §6): a shell command is ``Bash`` (or
``PowerShell``) with ``{"command": …}``; an MCP tool is ``mcp__<server>__<tool>`` with its arguments.
Each agent module maps its own stdin onto that, so detection, the verdict lookup and the records stay
agent-blind. Also here: the small readers the agent modules share, and a JSON writer for their answers.

Runs on every tool call of every agent: no imports at load time (``json`` alone costs ~9 ms, design §7).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELL = "Bash"
MCP_PREFIX = "mcp__"

Answer = tuple[int, str, str]
"""(exit status, stdout text, stderr text): what the guard hands back to the agent."""


class NotAToolCall(ValueError):
    """The hook input is not the named agent's shape at all (the guard reports it and allows)."""


class ToolCall:
    """A tool call in the guard's vocabulary. ``tool_name`` is ``Bash``/``PowerShell`` (``tool_input``
    holds ``command``) or ``mcp__<server>__<tool>`` (``tool_input`` holds the tool's arguments)."""

    __slots__ = ("cwd", "session_id", "tool_input", "tool_name", "tool_use_id")

    def __init__(self, tool_name: str, tool_input: dict[str, Any], *, cwd: str | None = None,
                 session_id: str | None = None, tool_use_id: str | None = None) -> None:
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.cwd = cwd or None  # Cursor sends "" for "unknown"
        self.session_id = session_id
        self.tool_use_id = tool_use_id

    @property
    def kind(self) -> str:
        return "mcp" if self.tool_name.startswith(MCP_PREFIX) else "shell"

    @property
    def command(self) -> str | None:
        value = self.tool_input.get("command") if self.kind == "shell" else None
        return value if isinstance(value, str) else None

    def payload(self) -> dict[str, Any]:
        """The call as a Claude Code PreToolUse input (what records and ``hook explain`` read)."""
        return {"tool_name": self.tool_name, "tool_input": self.tool_input, "cwd": self.cwd,
                "session_id": self.session_id, "tool_use_id": self.tool_use_id}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCall) and self.payload() == other.payload()

    __hash__ = None  # type: ignore[assignment]  # mutable dict inside

    def __repr__(self) -> str:
        return f"ToolCall({self.payload()!r})"


def shell(command: object, *, cwd: object = None, session_id: object = None, tool_use_id: object = None,
          powershell: bool = False) -> ToolCall | None:
    """A shell call, or None when there is no command text to judge."""
    if not isinstance(command, str):
        return None
    return ToolCall("PowerShell" if powershell else SHELL, {"command": command}, cwd=text(cwd),
                    session_id=text(session_id), tool_use_id=text(tool_use_id))


def mcp(server: object, tool: object, args: object, *, cwd: object = None, session_id: object = None,
        tool_use_id: object = None) -> ToolCall | None:
    if not isinstance(tool, str) or not tool:
        return None
    name = f"{MCP_PREFIX}{server if isinstance(server, str) and server else 'unknown'}__{tool}"
    return ToolCall(name, obj(args), cwd=text(cwd), session_id=text(session_id), tool_use_id=text(tool_use_id))


def split_mcp_name(name: str, sep: str) -> tuple[str, str]:
    """``server<sep>tool`` where either part may contain ``sep`` (Gemini's ``mcp_github_merge_pull_request``,
    Copilot's ``github-mcp-merge_pull_request``): a tail the detector gates (a merge, or a tool that may
    lift a hold) wins, so such a call is never misread as another tool; otherwise the first separator
    splits."""
    from hook.detect.mcp import is_gated_tool

    parts = name.split(sep)
    for at in range(1, len(parts)):
        tail = sep.join(parts[at:])
        if is_gated_tool(f"{MCP_PREFIX}server__{tail}"):
            return sep.join(parts[:at]), tail
    head, _, tail = name.partition(sep)
    return head, tail


def text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def obj(value: object) -> dict[str, Any]:
    """Tool arguments: an object, or an object sent as a JSON string (Cursor, Copilot, Cline)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        from hook.fastjson import JSONError, loads

        try:
            decoded = loads(value)
        except JSONError:
            return {}
        return decoded if isinstance(decoded, dict) else {}
    return {}


def first_root(value: object) -> str | None:
    """The first of a list of workspace roots (Cursor's ``workspace_roots``, Cline's ``workspaceRoots``)."""
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0] or None
    return None


def to_json(value: object) -> str:
    """Compact ASCII JSON for an answer (nested dicts of str, bool, int, None), without ``json``: the
    answer is written on the guard's hot path, and ASCII keeps it valid whatever the reason holds."""
    from _json import encode_basestring_ascii

    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{encode_basestring_ascii(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not an answer value: {type(value).__name__}")


def proceed() -> Answer:
    """`ALLOW`, as an agent module's ``allow()`` (``allow, deny, trouble = proceed, stderr_deny, notice_exit_1``
    for the agents whose answer is the exit status alone)."""
    return ALLOW


def stderr_deny(reason: str) -> Answer:
    """exit 2 with the reason on stderr: Claude Code, Gemini, Qwen, Factory, Kiro and Windsurf hand it to
    the model."""
    return (2, "", reason.rstrip("\n") + "\n")


def notice_exit_1(notice: str) -> Answer:
    """The guard's own trouble where exit 1 is a non-blocking error (the call proceeds, the user sees it)."""
    return (1, "", notice)


def notice_exit_0(notice: str) -> Answer:
    """The guard's own trouble where any non-zero exit would deny (Copilot) or is undefined: allow, and
    say why on stderr."""
    return (0, "", notice)


ALLOW: Answer = (0, "", "")
"""Proceed, silently: every agent that takes no JSON answer reads exit 0 with no output so."""
