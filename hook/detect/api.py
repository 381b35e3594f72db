"""``gh api`` (REST and GraphQL), and GitHub's GraphQL endpoint for every client.

REST requests, from any client, go to hook/detect/rest.py (GitHub's own list of write operations:
merges, lifts, acts that weaken the gate). GraphQL: the documents' mutations (hook/detect/graphql.py);
their targets are node ids, so such merges are undetermined.
"""

from __future__ import annotations

from hook.detect.graphql import graphql, merge_mutations
from hook.detect.model import Merge
from hook.detect.pflag import may_be_flag
from hook.detect.rest import rest
from hook.shell.syntax import DYN, Command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg

__all__ = ["gh_api", "graphql", "merge_mutations", "rest", "split_url"]
_VALUE_SHORT = "XfFHpqt"
_VALUE_LONG = frozenset({"--method", "--raw-field", "--field", "--header", "--preview", "--jq", "--template",
                         "--input", "--hostname", "--cache"})


def gh_api(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    method: str | None = None
    fields: dict[str, Arg] = {}
    input_file: str | None = None
    endpoint: str | None = None
    hostname: str | None = None
    i = 0
    while i < len(args):
        a = args[i][0]
        if a.startswith("-") and len(a) > 1 and not a.startswith(DYN):
            if a.startswith("--"):
                name, eq, value = a.partition("=")
                if not eq and name in _VALUE_LONG:
                    value, i = (args[i + 1][0] if i + 1 < len(args) else ""), i + 1
            else:
                name, value = "-" + a[1], a[2:]
                if name[1] in _VALUE_SHORT and not value:
                    value, i = (args[i + 1][0] if i + 1 < len(args) else ""), i + 1
            if name in ("-X", "--method"):
                method = value.upper()
            elif name in ("-f", "--raw-field", "-F", "--field"):
                key, _, field_value = value.partition("=")
                magic = name in ("-F", "--field") and field_value.startswith("@")
                fields[key] = (field_value, args[i][1]) if not magic else ("@" + field_value[1:], None)
            elif name == "--input":
                input_file = value
            elif name == "--hostname":
                hostname = value
        elif endpoint is None:
            endpoint = a
        i += 1
    if endpoint is None:
        return
    if method is None:
        method = "POST" if fields or input_file is not None else "GET"
    # an argument wholly computed at run time (`gh api "$EP" -X PUT`, "${args[@]}") may be any option
    # or endpoint; a word with literal text around a variable (repos/$R/pulls) is read as one word
    unsure = any(a[0][:1] in (DYN, "-") and may_be_flag(a) for a in args) or (
        endpoint.startswith(DYN) and method != "GET")
    before = len(ctx.merges)
    _gh_api(ctx, endpoint, method, fields, input_file, hostname, cmd, overlay)
    if unsure:  # not modelled exactly (the soundness rule): what was read is a hint
        why = "gh api with arguments computed at run time"
        ctx.merges[before:] = [m.replace(undetermined=True, detail=m.detail or why) for m in ctx.merges[before:]]
        if len(ctx.merges) == before:
            ctx.add(Merge(via="gh_api_rest", undetermined=True, detail=why))


def _gh_api(ctx: Ctx, endpoint: str, method: str, fields: dict[str, Arg], input_file: str | None,
            hostname: str | None, cmd: Command, overlay: dict[str, str | None]) -> None:
    if endpoint.strip("/") == "graphql" or endpoint.endswith("/graphql"):
        query = _graphql_text(ctx, cmd, fields.get("query"), input_file)
        variables = "\n".join(value for key, (value, _) in fields.items() if key != "query")
        graphql(ctx, "gh_api_graphql", method, query, _host(hostname), variables)
        return
    host, repo, _ = ctx.gh_repo(overlay, None)
    owner, name = repo.split("/", 1) if repo else (DYN, DYN)
    path = endpoint.replace("{owner}", owner).replace(":owner", owner).replace("{repo}", name)
    path = path.replace(":repo", name).replace("{branch}", ctx.branch() or DYN)
    url_host, segments = split_url(path)
    body = {key: value for key, (value, _) in fields.items()} if input_file is None else _input_fields(
        ctx.stdin_text(cmd) if input_file == "-" else ctx.read_file(input_file))
    sha_word = fields["sha"][1] if "sha" in fields else None
    if hostname:
        host = _host(hostname)
    rest(ctx, "gh_api_rest", method, url_host if "://" in path else host, segments, body, sha_word)


def _input_fields(text: str | None) -> dict[str, str] | None:
    """``--input FILE``: the request body's top-level fields, when the file is JSON the text shows."""
    if text is None or DYN in text or not text.lstrip().startswith("{"):
        return None
    import json

    try:
        data = json.loads(text, strict=False)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def _host(hostname: str | None) -> str | None:
    from hook.detect.gitrepo import normalize_host

    return normalize_host(hostname.lower()) if hostname and DYN not in hostname else None


def _graphql_text(ctx: Ctx, cmd: Command, query: Arg | None, input_file: str | None) -> str | None:
    if query is not None:
        text = query[0]
        if text.startswith("@"):
            return ctx.stdin_text(cmd) if text == "@-" else ctx.read_file(text[1:])
        return text
    if input_file is not None:
        return ctx.stdin_text(cmd) if input_file == "-" else ctx.read_file(input_file)
    return None


def split_url(text: str) -> tuple[str | None, list[str]]:
    """``https://api.github.com/repos/o/r`` or ``repos/o/r`` -> ``(host, ["repos", "o", "r"])``.

    GitHub Enterprise serves REST under ``/api/v3`` and GraphQL at ``/api/graphql``; the host is
    returned for those (``None`` for github.com and for a bare endpoint)."""
    from hook.detect.gitrepo import normalize_host

    host: str | None = None
    _, sep, rest_ = text.partition("://")
    if sep:
        hostpart, _, text = rest_.partition("/")
        host = normalize_host(hostpart.rsplit("@", 1)[-1].split(":", 1)[0].lower())
    segments = [s for s in text.split("?", 1)[0].split("#", 1)[0].split("/") if s]
    if segments[:2] == ["api", "v3"]:
        segments = segments[2:]
    elif segments[:1] == ["api"] and segments[1:2] == ["graphql"]:
        segments = segments[1:]
    return host, segments
