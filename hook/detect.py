"""Merge detection for the agent guard: which pull-request merges would a tool call perform?

`might_merge` runs on every Bash call, so it is plain ``str`` work and this module imports nothing at
load time; `detect` loads the readers (hook/shell.py and the ``detect_*`` modules) only for text
that passed it, and tree-sitter only for syntax the fast reader does not model (design §7).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from hook.model import Detection

# Words without which no merge can happen: merge commands and endpoints (``merge``, ``enqueue``),
# pushes and ref moves, GraphQL, merge-sounding task names, HTTP clients (a merge URL may sit in a
# variable), and the usual ways of hiding text from a reader (eval of decoded text).
_KEYWORDS = ("merge", "push", "graphql", "enqueue", "updateref", "refs", "ship", "land", "curl", "wget",
             "eval", "base64", "xxd", "\\x", "rot13", "n-za-m", "encodedcommand", "frombase64", "iex")
_QUOTING = str.maketrans("", "", "'\"\\`")
# gh's built-in commands; any other `gh NAME` is an alias or extension that may merge
GH_BUILTINS = frozenset({
    "accessibility", "a11y", "agent-task", "agent-tasks", "agent", "agents", "alias", "api", "attestation",
    "at", "auth", "browse", "cache", "co", "codespace", "cs", "completion", "config", "copilot", "extension",
    "extensions", "ext", "gist", "gpg-key", "help", "issue", "label", "org", "pr", "preview", "project",
    "release", "repo", "ruleset", "rs", "run", "search", "secret", "ssh-key", "status", "variable",
    "workflow", "version", "licenses", "skill", "skills",
})
_COMMAND_START = frozenset(" \t\n;|&({$/=")
SHELL_TOOLS = frozenset({"Bash", "PowerShell", "Monitor"})


def might_merge(text: str) -> bool:
    """False only when ``text`` (a command, or an MCP tool's name and arguments) cannot merge."""
    lowered = text.lower()
    bare = lowered.translate(_QUOTING)  # g''h p"r" mer\ge -> gh pr merge
    for word in _KEYWORDS:
        if word in bare or word in lowered:
            return True
    if ("pwsh" in bare or "powershell" in bare) and " -e" in bare:
        return True
    return _gh_alias(bare)


def _gh_alias(text: str) -> bool:
    """``gh NAME`` where NAME is not a gh built-in: a user alias or extension."""
    at = text.find("gh")
    while at >= 0:
        end = at + 2
        if text.startswith(".exe", end):
            end += 4
        if (at == 0 or text[at - 1] in _COMMAND_START) and text[end : end + 1] in (" ", "\t"):
            rest = text[end:].split(None, 1)
            name = rest[0] if rest else ""
            if name and not name.startswith("-") and name not in GH_BUILTINS:
                return True
        at = text.find("gh", at + 2)
    return False


def detect(tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | None, env: Mapping[str, str]) -> Detection:
    """Every merge the tool call would perform. Never raises: text it cannot read but that looks
    like a merge comes back as an undetermined merge."""
    from hook.model import Detection, Merge

    if tool_name.startswith("mcp__"):
        from hook.detect_mcp import detect_mcp

        return Detection(tuple(detect_mcp(tool_name, tool_input)))
    command = tool_input.get("command")
    if not isinstance(command, str) or not might_merge(command):
        return Detection()
    from hook.detect_run import Ctx

    ctx = Ctx(cwd, env, powershell=tool_name == "PowerShell")
    try:
        ctx.run_text(command)
    except Exception as exc:  # a reader bug must not hide a merge: fail towards "maybe"
        ctx.add(Merge(via="unparsed", undetermined=True, detail=f"detector error: {type(exc).__name__}"))
    return Detection(tuple(ctx.merges), tuple(ctx.notes))
