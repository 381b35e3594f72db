"""HTTP clients pointed at GitHub's merge endpoints: curl, wget, httpie/xh, PowerShell's
Invoke-RestMethod. The method follows each tool's rules (curl: ``-X`` > ``-T`` PUT > ``-I`` HEAD >
``-G`` GET > data POST > GET); bodies named ``@file`` are read when the file exists.
"""

from __future__ import annotations

from hook.detect import api
from hook.detect.hosts import is_github
from hook.detect.model import Merge
from hook.detect.pflag import exact, may_be_flag
from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

_CURL_VALUE_SHORT = "AbcCdDeEFHKmoPQrtTuUwxXyYz"
_CURL_VALUE_LONG = frozenset({
    "--request", "--url", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
    "--form", "--form-string", "--header", "--output", "--user", "--user-agent", "--referer", "--cookie",
    "--cookie-jar", "--upload-file", "--config", "--max-time", "--connect-timeout", "--retry", "--retry-delay",
    "--retry-max-time", "--proxy", "--cacert", "--cert", "--key", "--write-out", "--range", "--resolve",
    "--connect-to", "--oauth2-bearer", "--limit-rate", "--interface", "--output-dir", "--variable",
    "--aws-sigv4", "--unix-socket", "--trace", "--trace-ascii", "--stderr", "--proto", "--max-redirs",
    "--netrc-file", "--dump-header", "--proxy-user", "--url-query", "--noproxy", "--request-target",
    "--expand-data", "--expand-url", "--expand-header", "--expand-json",
})
_CURL_DATA = frozenset({"-d", "--data", "--data-binary", "--data-ascii", "--json", "--expand-data",
                        "--expand-json"})
_CURL_RAW = frozenset({"--data-raw", "--data-urlencode", "-F", "--form", "--form-string"})
_WGET_VALUE = frozenset({"-O", "-o", "-a", "-e", "-t", "-T", "-w", "-Q", "-P", "-U", "-i", "-B", "--method",
                         "--header", "--body-data", "--body-file", "--post-data", "--post-file",
                         "--output-document", "--user", "--password", "--user-agent"})
_HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


def curl(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    before = len(ctx.merges)
    _curl(ctx, args, cmd)
    _doubt(ctx, "curl", args, before)


def _curl(ctx: Ctx, args: list[Arg], cmd: Command) -> None:
    method: str | None = None
    implied = "GET"
    urls: list[str] = []
    bodies: list[str | None] = []
    config = False
    i = 1
    while i < len(args):
        a = args[i][0]
        if a.startswith("-") and len(a) > 1 and a != "--":
            if a.startswith("--"):
                name, eq, value = a.partition("=")
                if not eq and name in _CURL_VALUE_LONG:
                    value, i = (args[i + 1][0] if i + 1 < len(args) else ""), i + 1
                flags = [(name, value)]
            else:
                flags, i = _curl_shorts(args, i)
            for name, value in flags:
                if name in ("-X", "--request"):
                    method = value.upper()
                elif name in ("-T", "--upload-file"):
                    implied = "PUT"
                elif name in ("-I", "--head") and implied != "PUT":
                    implied = "HEAD"
                elif name in ("-G", "--get"):
                    implied = "GET!"
                elif name in _CURL_DATA or name in _CURL_RAW:
                    implied = implied if implied in ("PUT", "GET!") else "POST"
                    at_file = value.startswith("@") and name in _CURL_DATA
                    bodies.append(_read_body(ctx, cmd, value[1:]) if at_file else value)
                elif name == "--url":
                    urls.append(value)
                elif name in ("-K", "--config"):
                    bodies.append(None)  # options from a file: anything may be in there
                    config = True
                elif name in ("-o", "--output"):
                    _downloaded(ctx, value)
        else:
            urls.append(a)
        i += 1
    final = method or implied.rstrip("!")
    body = None if any(b is None for b in bodies) else "&".join(b for b in bodies if b is not None)
    before = len(ctx.merges)
    _requests(ctx, "curl", final, urls, body, args)
    if config and len(ctx.merges) == before:  # a URL and a method may be in the file too
        ctx.add(Merge(via="curl", undetermined=True, detail="curl options read from a file (-K)"))


def wget(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    before = len(ctx.merges)
    _wget(ctx, args, cmd)
    _doubt(ctx, "wget", args, before)


def _wget(ctx: Ctx, args: list[Arg], cmd: Command) -> None:
    method: str | None = None
    body: str | None = ""
    urls: list[str] = []
    i = 1
    while i < len(args):
        a = args[i][0]
        name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
        if a.startswith("-") and len(a) > 1:
            if not eq and name in _WGET_VALUE:
                value, i = (args[i + 1][0] if i + 1 < len(args) else ""), i + 1
            if name == "--method":
                method = value.upper()
            elif name in ("--post-data", "--body-data"):
                method, body = method or "POST", value
            elif name in ("--post-file", "--body-file"):
                method, body = method or "POST", _read_body(ctx, cmd, value)
            elif name in ("-O", "--output-document"):
                _downloaded(ctx, value)
        else:
            urls.append(a)
        i += 1
    _requests(ctx, "wget", method or "GET", urls, body, args)


def httpie(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``http [flags] [METHOD] URL [ITEM...]``: items make it a POST unless a method is named."""
    before = len(ctx.merges)
    _httpie(ctx, args)
    _doubt(ctx, "http", args, before)


def _httpie(ctx: Ctx, args: list[Arg]) -> None:
    rest = [a[0] for a in args[1:] if not a[0].startswith("-")]
    method: str | None = None
    if rest and rest[0].upper() in _HTTP_METHODS:
        method = rest.pop(0).upper()
    if not rest:
        return
    url = rest[0] if "://" in rest[0] or rest[0].startswith(DYN) else "https://" + rest[0].lstrip(":/")
    items = rest[1:]
    _requests(ctx, "http", method or ("POST" if items else "GET"), [url], _httpie_body(items), args)


def _httpie_body(items: list[str]) -> str | None:
    """HTTPie's request items as the JSON body it sends: ``key=value`` (a string), ``key:=json``; headers
    (``Name:value``) and query items (``key==value``) are not the body; a file (``@``) is not read."""
    fields: dict[str, str] = {}
    for item in items:
        if "@" in item or DYN in item:
            return None
        at_eq, at_colon = item.find("="), item.find(":")
        if at_colon >= 0 and (at_eq < 0 or at_colon < at_eq) and not item[at_colon:].startswith(":="):
            continue  # a header
        if "==" in item and item.find("==") == at_eq:
            continue  # a query parameter
        key, _, value = item.partition(":=" if ":=" in item and item.find(":=") < at_eq + 1 else "=")
        fields[key] = value
    import json

    return json.dumps(fields) if fields else ""


def invoke_rest(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """PowerShell ``Invoke-RestMethod -Method Put -Uri URL -Body ...`` (parameters by prefix)."""
    method, uri = "GET", None
    body: str | None = ""
    i = 1
    while i < len(args):
        a = args[i][0]
        value = args[i + 1][0] if i + 1 < len(args) else ""
        low = a.lower()
        if low.startswith("-") and len(low) > 2:
            if "-method".startswith(low):
                method, i = value.upper(), i + 1
            elif "-uri".startswith(low):
                uri, i = value, i + 1
            elif "-body".startswith(low) or "-infile".startswith(low):
                body, i = (value if "-body".startswith(low) else _read_body(ctx, cmd, value)), i + 1
            elif low in ("-headers", "-contenttype", "-outfile", "-credential", "-token", "-authentication"):
                i += 1
        elif uri is None:
            uri = a
        i += 1
    if uri is not None:
        _requests(ctx, "http", method, [uri], body, args)


def _doubt(ctx: Ctx, via: str, args: list[Arg], before: int) -> None:
    """An argument computed at run time in option position may be ``-X PUT``, or a merge URL: the
    request is not modelled exactly (the soundness rule), so whatever is read is undetermined, and
    if nothing is, the request is an undetermined merge. Values of options that take one may be
    computed (``-H "Authorization: token $T"``), as long as each is one word."""
    unsure = False
    i = 1
    while i < len(args):
        text, word = args[i]
        whole = word is not None and bool(word.parts) and all(p.kind != "l" for p in word.parts)
        if not exact(args[i]) or (text.startswith(DYN) and whole) or (text.startswith("-") and may_be_flag(args[i])):
            unsure = True
            break
        long_valued = text.startswith("--") and "=" not in text and text in _CURL_VALUE_LONG | _WGET_VALUE
        short_valued = len(text) == 2 and text[0] == "-" and (text[1] in _CURL_VALUE_SHORT or text in _WGET_VALUE)
        if long_valued or short_valued:
            i += 1
        i += 1
    if unsure:
        why = f"{via} with arguments computed at run time"
        ctx.merges[before:] = [m.replace(undetermined=True, detail=m.detail or why) for m in ctx.merges[before:]]
        if len(ctx.merges) == before:
            ctx.add(Merge(via=via, undetermined=True, detail=why))


def _curl_shorts(args: list[Arg], i: int) -> tuple[list[tuple[str, str]], int]:
    """``-sSX PUT`` / ``-XPUT``: boolean letters, then at most one letter taking a value."""
    a, out = args[i][0], []
    for k, letter in enumerate(a[1:]):
        if letter in _CURL_VALUE_SHORT:
            value = a[k + 2 :]
            if not value:
                value, i = (args[i + 1][0] if i + 1 < len(args) else ""), i + 1
            out.append(("-" + letter, value))
            break
        out.append(("-" + letter, ""))
    return out, i


def _downloaded(ctx: Ctx, name: str) -> None:
    """A file a download writes: text only the run knows (judged where another program runs it: planted.py)."""
    if name and name != "-" and DYN not in name:
        key = ctx.path(name)
        ctx.files[key] = DYN
        ctx.planted(key, None, append=False)


def _read_body(ctx: Ctx, cmd: Command, name: str) -> str | None:
    if name == "-":
        return ctx.stdin_text(cmd)
    return ctx.read_file(name)


def _requests(ctx: Ctx, via: str, method: str, urls: list[str], body: str | None, args: list[Arg]) -> None:
    for url in urls:
        if not url or url.startswith("-"):
            continue
        if not is_github(ctx, url):
            continue  # another host (`http://localhost:3000/api/…`, another forge): no GitHub act
        host, segments = api.split_url(url)
        visible = [s for s in segments if DYN not in s]
        if segments and segments[-1] == "graphql":
            api.graphql(ctx, via, method, body, host)
        elif visible or "://" in url:
            api.rest(ctx, via, method, host, segments, _json_fields(body))
        elif method in ("POST", "PUT", "PATCH") or DYN in method:
            _opaque(ctx, via, body, args)


def _opaque(ctx: Ctx, via: str, body: str | None, args: list[Arg]) -> None:
    """A write to a URL computed at run time: with a GitHub credential or media type in sight and a
    body we cannot read (or one holding a merge mutation), it may be a merge."""
    githubish = any("github" in a[0].lower() for a in args)
    if githubish and (body is None or DYN in body or api.merge_mutations(body)):
        ctx.add(Merge(via=via, undetermined=True, detail="write to a computed URL with an unseen body"))


def _json_fields(body: str | None) -> dict[str, str] | None:
    if not body or not body.lstrip().startswith("{"):
        return None
    import json

    try:
        data = json.loads(body, strict=False)
    except ValueError:
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None
