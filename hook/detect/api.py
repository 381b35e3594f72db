"""GitHub's API endpoints that merge, shared by ``gh api``, curl, wget and httpie.

REST: ``PUT repos/O/R/pulls/N/merge``; ``PATCH repos/O/R/git/refs/heads/B`` (moving a base branch to
a PR's head lands it: GitHub then marks the PR merged); ``POST repos/O/R/merges`` (merges a head
branch into a base). Not merges: a GET on ``/merge`` (``is it merged?``), ``update-branch``.
GraphQL: the mutations ``mergePullRequest``, ``enablePullRequestAutoMerge``, ``enqueuePullRequest``,
``mergeBranch``, ``updateRef(s)``; their targets are node ids, so such merges are undetermined.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.detect.pflag import may_be_flag
from hook.shell.syntax import DYN, Command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Word

MERGE_MUTATIONS = ("mergePullRequest", "enablePullRequestAutoMerge", "enqueuePullRequest", "mergeBranch",
                   "updateRef", "updateRefs")
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
    body = {key: value for key, (value, _) in fields.items()} if input_file is None else None
    sha_word = fields["sha"][1] if "sha" in fields else None
    if hostname:
        host = _host(hostname)
    rest(ctx, "gh_api_rest", method, url_host if "://" in path else host, segments, body, sha_word)


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


def graphql(ctx: Ctx, via: str, method: str, text: str | None, host: str | None = None,
            variables: str = "") -> None:
    """A request to the GraphQL endpoint: merge mutations found in its body, or an unseen body; and
    mutations that would lift a hold (`hook.detect.lift`)."""
    if method not in ("POST", DYN) and DYN not in method:
        return
    from hook.detect.lift import graphql_lift

    graphql_lift(ctx, via, text, host, variables)
    if text is None or (DYN in text and not merge_mutations(text)):
        # an unseen document may hold any mutation; a visible query with a computed piece does not
        if text is None or "mutation" in text or not ("query" in text or "{" in text):
            ctx.add(Merge(via=via, host=host, undetermined=True, detail="GraphQL body not visible"))
        return
    for name in merge_mutations(text):
        ctx.add(Merge(via=via, host=host, undetermined=True, detail=f"{name}: target is a node id"))


def merge_mutations(text: str) -> list[str]:
    """Merge mutations named in a GraphQL document (``disablePullRequestAutoMerge`` is not one)."""
    if "mutation" not in text:
        return []
    found = []
    for name in MERGE_MUTATIONS:
        at = text.find(name)
        while at >= 0:
            before = text[at - 1] if at else " "
            after = text[at + len(name) : at + len(name) + 1] or " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                found.append(name)
                break
            at = text.find(name, at + 1)
    return found


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


def rest(ctx: Ctx, via: str, method: str, host: str | None, segments: list[str],
         body: dict[str, str] | None, sha_word: Word | None = None) -> None:
    """A REST request: the merges it performs, if any."""
    if segments[:1] != ["repos"] and "repos" in segments:  # "$API/repos/...": a computed base URL
        segments = segments[segments.index("repos") :]
    if len(segments) < 4 or segments[0] != "repos":
        if segments and DYN in segments[0] and segments[-1] == "merge" and _may_be(method, "PUT"):
            ctx.add(Merge(via=via, host=host, undetermined=True, detail="PUT to a computed …/merge URL"))
        return
    if segments[1] == DYN and segments[2] in ("pulls", "git", "merges", "issues"):  # repos/$REPO/pulls/...
        segments = ["repos", DYN, *segments[1:]]
    owner, name = segments[1], segments[2]
    repo = None if DYN in owner or DYN in name else f"{owner}/{name}"
    tail = segments[3:]
    if len(tail) == 3 and tail[0] == "pulls" and tail[2] == "merge" and _may_be(method, "PUT"):
        number = tail[1]
        pr = int(number) if number.isdigit() else None
        ctx.add(Merge(via=via, repo=repo, host=host, pr=pr, undetermined=pr is None or repo is None or method != "PUT",
                      detail="" if pr is not None else "PR number computed at run time"))
    elif tail[:3] == ["git", "refs", "heads"] and len(tail) > 3 and _may_be(method, "PATCH"):
        base = "/".join(tail[3:])
        pr = pr_from_head_sha(sha_word)
        ctx.add(Merge(via=via, repo=repo, host=host, pr=pr, push_target=None if DYN in base else base,
                      undetermined=pr is None or repo is None or DYN in base,
                      detail="moves a branch; a PR whose head it reaches is marked merged"))
    elif tail == ["merges"] and _may_be(method, "POST"):
        head, base_branch = (body or {}).get("head"), (body or {}).get("base")
        known = head is not None and base_branch is not None and DYN not in head + base_branch
        ctx.add(Merge(via=via, repo=repo, host=host, branch=head if known else None,
                      push_target=base_branch if known else None, undetermined=not known or repo is None,
                      detail="merges a branch into a base branch"))
    else:
        from hook.detect.lift import rest_lift

        rest_lift(ctx, via, method, host, repo, tail, body)


def pr_from_head_sha(word: Word | None) -> int | None:
    """``sha=$(gh pr view 5 --json headRefOid ...)`` names PR 5."""
    if word is None:
        return None
    for part in word.parts:
        for event in part.inner or []:
            if not isinstance(event, Command):
                continue
            texts = [w.literal() for w in event.words]
            if texts[:3] == ["gh", "pr", "view"] and any("headRefOid" in (t or "") for t in texts):
                for text in texts[3:]:
                    number = (text or "").lstrip("#")
                    if number.isdigit():
                        return int(number)
    return None


def _may_be(method: str, wanted: str) -> bool:
    return method == wanted or DYN in method
