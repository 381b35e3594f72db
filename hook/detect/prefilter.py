"""The cheap first look: can this text merge at all? `might_merge` runs on every Bash call, so it is
plain ``str`` work and this module imports nothing at load time; hook/detect/toolcall.py loads the
shell readers only for text that passed it, and tree-sitter only for syntax the fast reader does not
model (design §7).
"""

from __future__ import annotations

# Words without which no merge can happen: merge commands and endpoints (``merge``, ``enqueue``),
# pushes and ref moves, GraphQL, merge-sounding task names, HTTP clients (a merge URL may sit in a
# variable), the usual ways of hiding text from a reader (eval of decoded text), and what lifts a hold
# (a label removed, a comment or review, a dismissal: lifting is judged like a merge).
_KEYWORDS = ("merge", "push", "graphql", "enqueue", "updateref", "refs", "ship", "land", "curl", "wget",
             "eval", "base64", "xxd", "\\x", "rot13", "n-za-m", "encodedcommand", "frombase64", "iex",
             "hold", "label", "comment", "review", "dismiss")
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

