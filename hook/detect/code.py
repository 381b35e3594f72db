"""Program code handed to an interpreter (``python3 -c``, ``node -e``, code on stdin, a script file) or to a
compiler (hook/detect/planted.py), read by heuristics (design §6). It is never modelled exactly, so whatever it
is seen to do is undetermined. It looks for

- shell commands in string literals (``os.system("gh pr merge 5")``) and argv lists (``["gh", "pr", "merge"]``);
- REST requests to GitHub's API (hook/detect/hosts.py): URL literals, with the placeholders of f-strings and
  templates (``{n}``, ``${n}``, ``#{n}``, ``%s``) as values only the run knows, and the method the code names;
  routes with their method (``octokit.request("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge")``);
- GraphQL mutations;
- merges through a GitHub client library: a call named for merging (PyGithub's ``PullRequest.merge()`` and
  ``enable_automerge()``, Octokit's ``pulls.merge``, ``mergePullRequest``, Ruby Octokit's
  ``merge_pull_request``, go-github's ``PullRequests.Merge``, octocrab's ``pulls(o, r).merge(n)``) in code that
  names a GitHub client or a pull request: a merge of the PR it names (``get_pull(5)``, ``pull_number: 5``),
  in the repositories it names and the current directory's.

Code that shows none of these is undetermined when it can start a program or build code; when it can reach the
network only, it is undetermined when it may reach GitHub — it names GitHub (a host, a client, a token) beyond
requests already read, holds a mutation or a merge-shaped API path it does not send whole, or is handed
merge-shaped text (arguments, stdin, exported variables) — and clean otherwise: a GraphQL *query*, a ``GET``, a
request to another host. Any other code cannot merge.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_PROGRAMS = frozenset({"gh", "git", "curl", "wget", "hub", "bash", "sh", "zsh", "busybox"})
# what lets code start a program or run code it builds (Python, Node, Ruby, Perl, PHP, AppleScript, Lua, C …)
_PROCESS = ("system", "popen", "spawn", "exec", "subprocess", "eval", "import(", "__import__", "importlib", "getattr",
            "compile", "pty", "ctypes", "child_process", "require", "function(", "`", "qx", "open3", "passthru",
            "proc_open", "shell", "do shell script", "deno.command", "send(", "globals", "builtins", "dlopen",
            "fork", "process.start", "processbuilder", "runtime.getruntime", "command::new", "os/exec")
# what lets it reach the network
_NETWORK = ("socket", "urllib", "http", "requests", "fetch", "curl", "net::", "lwp", "axios", "urlopen", "aiohttp",
            "websocket", "grpc", "github", "octokit", "octocrab", "net/http", "reqwest", "ureq")
# a GitHub client library or credential in the code: it may reach GitHub without a URL in sight
_GITHUB_MARKERS = ("github", "octokit", "octocrab", "ghapi", "gh_token", "gh_host", "gh_enterprise")
_CALLERS = ("pull", "github", "octokit", "octocrab", "ghapi", "client.")
_METHODS = ("put", "patch", "post", "delete", "get")


def code(ctx: Ctx, text: str, *, handed: bool = False) -> None:
    """Read ``text`` as program code (see the module's docstring); ``handed``: the program is also handed
    merge-shaped text (its arguments, stdin or environment) that it may send."""
    from hook.detect.prefilter import might_merge

    before = len(ctx.merges)
    seen = _Seen()
    if might_merge(text, constructed=False):
        _read(ctx, text, seen)
    # a program's code is not modelled exactly (conditions, string building): what it was seen to
    # run is a hint, the answer undetermined (the soundness rule)
    found = [m.replace(undetermined=True, detail=m.detail or "inside a program's code") for m in ctx.merges[before:]]
    ctx.merges[before:] = found
    if found:
        if any(m.repo is None for m in found):  # a repository only the run knows: where gh would look first
            ctx.runtime("program code that names no repository", via="script")
        return
    lowered = text.lower()
    if any(word in lowered for word in _PROCESS):
        # code that can start a program may merge in ways no string shows (`"m" + "erge"`)
        ctx.runtime("program code that can run commands or build code", via="script")
    elif any(word in lowered for word in _NETWORK) and (handed or _may_reach_github(ctx, text, seen)):
        ctx.runtime("program code that can reach GitHub's API", via="script")


def handed_to(ctx: Ctx, words: list[Arg], cmd: Command | None) -> bool:
    """Whether the code is handed merge-shaped text it may send: its arguments, its stdin, or the variables this
    command exported (``U=https://api.github.com/… python3 -c '…os.environ["U"]…'``)."""
    from hook.detect.opaque import handed, shaped

    if handed(ctx, words, cmd, files=False) is not None:
        return True
    return any(shaped(ctx, value) for name, value in ctx.vars.items() if value and name in ctx.exported)


class _Seen:
    """What `_read` judged of the code's requests: the literals it read whole."""

    __slots__ = ("judged",)

    def __init__(self) -> None:
        self.judged: set[str] = set()


def _read(ctx: Ctx, text: str, seen: _Seen) -> None:
    from hook.detect.prefilter import might_merge

    literals = string_literals(text)
    for group in literals:
        if len(group) == 1 and _command_like(group[0]) and might_merge(group[0], constructed=False):
            ctx.run_text(group[0], powershell=False)
        elif len(group) > 1 and group[0].rsplit("/", 1)[-1] in _PROGRAMS:
            ctx.run_text(" ".join(quote_word(word) for word in group), powershell=False)
    from hook.detect import api

    method = _method(text.lower())
    for literal in (lit for group in literals for lit in group):
        _request(ctx, literal, method, seen)
    documents = [literal for group in literals for literal in group if "mutation" in literal]
    for document in documents:
        api.graphql(ctx, "script", "POST", document)
    if not documents and api.merge_mutations(text):
        api.graphql(ctx, "script", "POST", text)
    _library(ctx, text, literals)


def _command_like(literal: str) -> bool:
    """A literal that may be shell text: not a URL, a route (``"PUT /repos/…"``) or a GraphQL document."""
    head, _, tail = literal.lstrip().partition(" ")
    return "://" not in literal and not (head.lower() in _METHODS and tail.startswith("/")) and not (
        head in ("query", "mutation", "subscription", "fragment") or _query(literal))


def _request(ctx: Ctx, literal: str, method: str, seen: _Seen) -> None:
    """A URL or a route (``"PUT /repos/…"``) the code names: read when it addresses GitHub's API."""
    from hook.detect import api
    from hook.detect.hosts import is_github

    head, _, tail = literal.partition(" ")
    if head.lower() in _METHODS and tail.startswith("/"):  # an Octokit route: "PUT /repos/{owner}/…"
        method, literal = head.upper(), tail
    url = _templated(literal)
    if "://" in url:
        if not is_github(ctx, url):
            seen.judged.add(literal)  # another host: no GitHub act
            return
    elif not url.lstrip("/").startswith(("repos/", "repositories/", "agents/repos/", "graphql")):
        return
    host, segments = api.split_url(url)
    if segments[-1:] == ["graphql"]:
        seen.judged.add(literal)  # its documents are read as such (a query is no act)
        return
    before = len(ctx.merges)
    api.rest(ctx, "script", method, host, segments, None)
    if len(ctx.merges) == before and method != DYN:
        seen.judged.add(literal)  # a GET, or a write that is no merge and no act


def _templated(literal: str) -> str:
    """Placeholders of f-strings, templates and format strings as text only the run knows."""
    out, i = [], 0
    while i < len(literal):
        c = literal[i]
        if c in "{" or (c in "$#" and literal[i + 1 : i + 2] == "{"):
            close = literal.find("}", i)
            if close < 0:
                break
            out.append(DYN)
            i = close + 1
        elif c == "%" and literal[i + 1 : i + 2] in ("s", "d", "v"):
            out.append(DYN)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out) + literal[i:] if i < len(literal) else "".join(out)


def _library(ctx: Ctx, text: str, literals: list[list[str]]) -> None:
    """A merge through a GitHub client library: a call named for merging, in code that names a client or a pull
    request (``pd.merge(a, b)`` is pandas)."""
    from hook.detect.shaped import acts, words

    lowered = text.lower()
    if not any(marker in lowered for marker in _CALLERS):
        return
    calls = [name for name in _calls(text) if acts(words(name))]
    if not calls:
        return
    from hook.detect.gitrepo import plausible_repo

    repos = list(dict.fromkeys([*(lit for group in literals for lit in group if lit.count("/") == 1
                                  and plausible_repo(lit) and "." not in lit.split("/")[0]), *_named_repos(text)]))
    pr = _number(text)
    why = f"{calls[0]}(): a merge through a GitHub client library"
    for repo in repos:
        ctx.add(Merge(via="script", repo=repo, pr=pr, undetermined=True, detail=why))
    found = ctx.repo() if ctx.cwd is not None else None
    ctx.add(Merge(via="script", repo=found[1] if found else None, host=found[0] if found else None, pr=pr,
                  undetermined=True, detail=why))


def _calls(text: str) -> list[str]:
    """The names code calls: an identifier right before ``(`` (``.merge(``, ``merge_pull_request(``,
    ``PullRequests.Merge(``)."""
    names, k = [], text.find("(")
    while k >= 0:
        j = k
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            j -= 1
        if j < k:
            names.append(text[j:k])
        k = text.find("(", k + 1)
    return names


def _named_repos(text: str) -> list[str]:
    """``owner: "acme", repo: "widgets"`` (Octokit, PyGithub keywords), ``Merge(ctx, "acme", "widgets", …)``
    (go-github), ``pulls("acme", "widgets")`` (octocrab)."""
    import re

    from hook.detect.gitrepo import plausible_repo

    q = r"[\"'`]([\w.-]+)[\"'`]"
    found = []
    owners = re.findall(r"\bowner\W{1,4}" + q, text)
    names = re.findall(r"\brepo(?:_?name)?\W{1,4}" + q, text)
    if len(owners) == 1 and len(names) == 1:
        found.append(f"{owners[0]}/{names[0]}")
    for pattern in (r"\.Merge\([^,()]*,\s*" + q + r"\s*,\s*" + q, r"\bpulls\(\s*" + q + r"\s*,\s*" + q):
        found += [f"{o}/{n}" for o, n in re.findall(pattern, text)]
    return [r for r in found if plausible_repo(r)]


def _number(text: str) -> int | None:
    """The PR a client call names: ``get_pull(5)``, ``pull_number=5``/``pull_number: 5``,
    ``merge_pull_request(repo, 5)``, ``.merge(5)``, ``pulls/5/`` — when exactly one number is named so."""
    import re

    found: set[int] = set()
    for pattern in (r"get_?pull(?:_?request)?\(\s*(\d+)\s*\)", r"pull_?number\W{1,3}(\d+)", r"pulls?/(\d+)\b",
                    r"merge_pull_request\([^,()]+,\s*(\d+)", r"\.merge\(\s*(\d+)\s*[,)]",
                    r"PullRequests\.Merge\([^,()]+,[^,()]+,[^,()]+,\s*(\d+)", r"number\s*[:=]\s*(\d+)",
                    r"(?:pull_?request|merge)\([^()]*?,\s*(\d+)\s*[,)]"):
        found.update(int(m) for m in re.findall(pattern, text, flags=re.IGNORECASE) if len(m) <= 9)
    return found.pop() if len(found) == 1 else None


def _may_reach_github(ctx: Ctx, text: str, seen: _Seen) -> bool:
    """Network code that read no merge: may it still reach GitHub's API in a way the text does not show?"""
    from hook.detect.shaped import merge_shaped

    lowered = text.lower()
    if "mutation" in lowered:
        return True  # a GraphQL mutation that was not read whole
    rest = lowered
    for literal in seen.judged:
        rest = rest.replace(literal.lower(), " ")
    if any(marker in rest for marker in _GITHUB_MARKERS) or "api.github" in rest or "/api/v3" in rest:
        return True
    return any(merge_shaped(literal) for group in string_literals(text) for literal in group
               if literal not in seen.judged and not _query(literal))


def _query(literal: str) -> bool:
    """A GraphQL query document (no mutation): it reads, whatever its fields say (``mergeable``)."""
    stripped = literal.lstrip()
    shorthand = stripped.startswith("{") and stripped[1:].lstrip()[:1].isalpha()  # `{ viewer { login } }`, not JSON
    return "mutation" not in literal and "}" in literal and (stripped.startswith("query") or shorthand)


def _method(lowered: str) -> str:
    """The HTTP method program code names for its requests (``requests.put(``, ``method="PATCH"``); DYN when
    it names none or several (it may be any)."""
    named = {m.upper() for m in _METHODS
             if f".{m}(" in lowered or f"'{m}'" in lowered or f'"{m}"' in lowered}
    if not named and ("urlopen(" in lowered or "fetch(" in lowered) and "method" not in lowered and (
            "data=" not in lowered and "body" not in lowered):
        named = {"GET"}  # urlopen(url) and fetch(url) without a body or a method: a GET
    return named.pop() if len(named) == 1 else DYN


def string_literals(text: str) -> list[list[str]]:
    """Quoted strings of program text, grouped when only commas, blanks and an opening bracket
    separate them."""
    groups: list[list[str]] = []
    i, n, joined = 0, len(text), False
    while i < n:
        c = text[i]
        if c in "'\"`":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else c
            j, buf = i + len(quote), []
            while j < n and not text.startswith(quote, j):
                if text[j] == "\\" and j + 1 < n:
                    buf.append({"n": "\n", "t": "\t"}.get(text[j + 1], text[j + 1]))
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            if joined and groups:
                groups[-1].append("".join(buf))
            else:
                groups.append(["".join(buf)])
            i, joined = j + len(quote), False
            continue
        if c == ",":
            joined = bool(groups)
        elif c not in " \t\n\r[(":  # execFileSync("gh", ["pr", "merge"]) is one argv
            joined = False
        i += 1
    return groups


def quote_word(word: str) -> str:
    """A word as shell text (quoted when it needs to be)."""
    if word and all(c.isalnum() or c in "-_./:#=@%+," for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"
