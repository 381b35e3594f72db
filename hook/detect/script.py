"""Text that becomes a program elsewhere: interpreter one-liners (``python3 -c``), what a pipe or a
heredoc feeds a shell, files written earlier in the same command, PowerShell hosts, nested agents.
Commands that only print or search text (``echo``, ``grep``, ``git commit -m``) run nothing.
"""

from __future__ import annotations

from hook.detect.model import Merge
from hook.shell.syntax import DYN, Command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg

# family -> the flags whose value is code (`python3 -c CODE`, `lua -e CODE`, `deno eval CODE`)
_CODE_FLAGS = {
    "python": ("-c",), "pypy": ("-c",), "ipython": ("-c",), "jython": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"), "ts-node": ("-e", "--eval", "-p", "--print"),
    "tsx": ("-e", "--eval", "-p", "--print"), "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",),
    "ruby": ("-e",), "perl": ("-e", "-E"), "raku": ("-e",), "php": ("-r", "-B", "-R", "-E"), "osascript": ("-e",),
    "lua": ("-e",), "luajit": ("-e",), "tclsh": (), "wish": (), "jimsh": (), "expect": ("-c",), "r": ("-e",),
    "rscript": ("-e",), "julia": ("-e", "-E", "--eval", "--print"), "elixir": ("-e", "--eval"), "erl": ("-eval",),
    "groovy": ("-e",), "guile": ("-c",), "racket": ("-e", "--eval"), "sbcl": ("--eval",), "clisp": ("-x",),
    "scala": ("-e",), "kotlin": ("-e",), "ghci": ("-e",), "clojure": ("-e",), "bb": ("-e", "--eval"),
    "janet": ("-e",), "fennel": ("-e", "--eval"), "jshell": (), "irb": (), "ocaml": (), "runghc": (),
    "runhaskell": (),
}
# flags that take a value that is no code (a module, a path, a setting): skipped with it
_VALUE_FLAGS = frozenset({"-W", "-X", "-r", "--require", "--import", "-C", "--loader", "--conditions", "-I", "-M",
                          "-d", "-c", "-l", "-L", "--project", "--config", "-n", "--input-type", "--env-file",
                          "--inspect-port", "--title", "-x"})
# flags whose value is the script file (`php -f FILE`, `expect -f FILE`, `R -f FILE`)
_FILE_FLAGS = frozenset({"-f", "--file"})
_PROGRAMS = frozenset({"gh", "git", "curl", "wget", "hub", "bash", "sh", "zsh", "busybox"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})
# what lets interpreter code start a program, reach the network or run code it builds (Python, Node,
# Ruby, Perl, PHP, AppleScript); code with none of these cannot merge
_CAPABILITIES = ("system", "popen", "spawn", "exec", "subprocess", "eval", "import(", "__import__", "importlib",
                 "getattr", "compile", "socket", "urllib", "http", "requests", "pty", "ctypes", "child_process",
                 "require", "fetch", "function(", "`", "qx", "open3", "net::", "lwp", "curl", "passthru",
                 "proc_open", "shell", "do shell script", "deno.command", "send(", "globals", "builtins")


def writes(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """echo, printf, cat, tee: print text (never run it); remember files they write."""
    name = args[0][0].rsplit("/", 1)[-1]
    if name in ("echo", "printf") and any("\\x" in a[0] or "\\0" in a[0] for a in args[1:]):
        ctx.decoder_seen = True  # printf '\x67\x68 ...' spells text out of escapes
    if cmd.redirects or name == "tee":
        _record_writes(ctx, name, args, cmd)


def interpreter(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``python3 -c CODE``, ``lua -e CODE``, ``deno eval CODE``, code on stdin, or a script file: see `code`."""
    name = args[0][0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    family = name if name in _CODE_FLAGS else name.rstrip("0123456789.-")  # lua5.4, tclsh8.6, php8.2
    family = "python" if name.startswith(("python", "pypy")) else family
    if family == "bun" and len(args) > 1 and args[1][0] in ("run", "test", "x", "install", "add", "build"):
        from hook.detect.make import runner

        runner(ctx, args, cmd, overlay)
    elif family in _CODE_FLAGS:
        _interpreter(ctx, family, args, cmd)
    ctx.decoder_seen = True  # its output may be text for a shell


def agent(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """A nested agent session (``claude -p``): asked to merge, it may; the text cannot say what."""
    if any("merge" in a[0].lower() for a in args[1:]):
        name = args[0][0].rsplit("/", 1)[-1]
        ctx.add(Merge(via="agent", undetermined=True, detail=f"{name}: a nested agent asked to merge"))


def _record_writes(ctx: Ctx, name: str, args: list[Arg], cmd: Command) -> None:
    """``cat > q.json <<EOF``, ``echo ... > f``, ``... | tee f``: later commands may read ``f``."""
    text = ctx.stdin_text(cmd) if name == "tee" else ctx.output_of(cmd)
    appends = {ctx.expand_one(r.target) for r in cmd.redirects if r.op in (">>", "&>>") and r.target is not None}
    targets = [ctx.expand_one(r.target) for r in cmd.redirects if r.op in _WRITES and r.target is not None]
    if name == "tee":
        words = [a[0] for a in args[1:]]
        targets += [w for w in words if not w.startswith("-")]
        if any(w in ("-a", "--append") for w in words):
            appends.update(targets)
    for target in targets:
        key = ctx.path(target)
        # appended to a file whose text is not known here, or text not known: only the run knows it
        ctx.files[key] = DYN if text is None or target in appends else text


def _interpreter(ctx: Ctx, family: str, args: list[Arg], cmd: Command) -> None:
    flags = _CODE_FLAGS[family]
    k = 1
    if family == "deno" and len(args) > 1 and args[1][0] in ("run", "test", "bench", "serve"):
        k = 2  # `deno run [opts] FILE`
    while k < len(args):
        text = args[k][0]
        if text in flags and k + 1 < len(args):
            code(ctx, args[k + 1][0])
            return
        if family == "python" and text == "-m":
            return  # an installed module: the user's program
        if text in _FILE_FLAGS and k + 1 < len(args):
            _file(ctx, args[k + 1], args[k + 2 :])
            return
        if text == "--":
            k += 1
            break
        if text.startswith("-") and text != "-":
            k += 2 if text in _VALUE_FLAGS else 1
            continue
        if text != "-":
            _file(ctx, args[k], args[k + 1 :])
            return
        break
    if k < len(args) and args[k][0] != "-":
        _file(ctx, args[k], args[k + 1 :])
        return
    source = ctx.stdin_text(cmd)
    if source is not None:
        code(ctx, source)
    elif cmd.piped or any(r.op == "<" for r in cmd.redirects):  # `curl … | python3`
        ctx.runtime("an interpreter reads code produced at run time", via="script")


def _file(ctx: Ctx, arg: Arg, rest: list[Arg]) -> None:
    """A script file: read for the merges it names (written earlier in this command, or on disk); its code
    is read by heuristics at best, so merge-shaped arguments after it, or a merge-shaped name of its own
    (``python3 tools/land.py 5``), are undetermined (hook/detect/opaque.py)."""
    from hook.detect.opaque import script_file
    from hook.detect.prefilter import merge_shaped

    name = arg[0]
    if DYN in name:
        if ctx.decoder_seen:
            ctx.runtime("an interpreter runs a script named at run time", via="script")
        return
    text = ctx.read_file(name)
    if text is not None and merge_shaped(text):
        code(ctx, text)
    script_file(ctx, name, rest, what="run by an interpreter")


def code(ctx: Ctx, text: str) -> None:
    """Heuristics over program text: shell commands in string literals (``os.system("gh pr merge
    5")``), argv lists (``["gh", "pr", "merge", "5"]``), REST merge URLs with PUT, merge mutations."""
    from hook.detect.prefilter import might_merge

    before = len(ctx.merges)
    if might_merge(text, constructed=False):
        _code(ctx, text)
    # a program's code is not modelled exactly (conditions, string building): what it was seen to
    # run is a hint, the answer undetermined (the soundness rule)
    ctx.merges[before:] = [m.replace(undetermined=True, detail=m.detail or "inside a program's code")
                           for m in ctx.merges[before:]]
    lowered = text.lower()
    if len(ctx.merges) == before and any(word in lowered for word in _CAPABILITIES):
        # code that can start a program or reach the network may merge in ways no string shows
        # (`"m" + "erge"`): undetermined, not "no merge"
        ctx.runtime("program code that can run commands or reach the network", via="script")


def _code(ctx: Ctx, text: str) -> None:
    from hook.detect.prefilter import might_merge

    literals = string_literals(text)
    for group in literals:
        if len(group) == 1 and might_merge(group[0], constructed=False):
            ctx.run_text(group[0], powershell=False)
        elif len(group) > 1 and group[0].rsplit("/", 1)[-1] in _PROGRAMS:
            ctx.run_text(" ".join(_quote(word) for word in group), powershell=False)
    lowered = text.lower()
    from hook.detect import api

    method = _method(lowered)
    for group in literals:
        for literal in group:
            if "api.github" in literal or "/api/v3/" in literal or literal.lstrip("/").startswith("repos/"):
                host, segments = api.split_url(literal)
                api.rest(ctx, "script", method, host, segments, None)
    documents = [literal for group in literals for literal in group if "mutation" in literal]
    for document in documents:
        api.graphql(ctx, "script", "POST", document)
    if not documents and api.merge_mutations(text):
        api.graphql(ctx, "script", "POST", text)


def _method(lowered: str) -> str:
    """The HTTP method program code names for its requests (``requests.put(``, ``method="PATCH"``); DYN when
    it names none or several (it may be any)."""
    named = {m.upper() for m in ("put", "patch", "post", "delete")
             if f".{m}(" in lowered or f"'{m}'" in lowered or f'"{m}"' in lowered}
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


def powershell(ctx: Ctx, args: list[Arg], cmd: Command) -> None:
    """``pwsh -Command ...``, ``-EncodedCommand BASE64`` (UTF-16LE), or commands on stdin."""
    i = 1
    while i < len(args):
        low = args[i][0].lower()
        if (low.startswith("-") and len(low) > 2 and "-command".startswith(low)) or low in ("-c", "/c"):
            ctx.run_text(" ".join(a[0] for a in args[i + 1 :]), powershell=True)
            return
        if low.startswith("-e") and ("-encodedcommand".startswith(low) or low == "-ec"):
            _encoded(ctx, args[i + 1][0] if i + 1 < len(args) else "")
            return
        if low.startswith("-f") and "-file".startswith(low):
            return
        if not low.startswith("-"):
            ctx.run_text(" ".join(a[0] for a in args[i:]), powershell=True)
            return
        valued = ("-executionpolicy", "-windowstyle", "-workingdirectory", "-outputformat", "-inputformat")
        i += 2 if any(v.startswith(low) for v in valued) and len(low) > 2 else 1
    source = ctx.stdin_text(cmd)
    if source is not None:
        ctx.run_text(source, powershell=True)


def _encoded(ctx: Ctx, value: str) -> None:
    import base64
    import binascii

    try:
        text = base64.b64decode(value, validate=True).decode("utf-16-le")
    except (binascii.Error, ValueError):
        ctx.add(Merge(via="obfuscated", undetermined=True, detail="PowerShell -EncodedCommand not readable"))
        return
    ctx.run_text(text, powershell=True)


def start_process(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """``Start-Process gh -ArgumentList 'pr','merge','5'``."""
    program, rest, i = None, [], 1
    while i < len(args):
        low = args[i][0].lower()
        if low.startswith("-") and len(low) > 2:
            if "-filepath".startswith(low) and i + 1 < len(args):
                program, i = args[i + 1][0], i + 1
            elif "-argumentlist".startswith(low) and i + 1 < len(args):
                rest.extend(args[i + 1][0].replace(",", " ").split())
                i += 1
        elif program is None:
            program = args[i][0]
        else:
            rest.extend(args[i][0].replace(",", " ").split())
        i += 1
    if program is not None:
        ctx.simple_command([(program, None), *((word, None) for word in rest)], cmd, overlay)


def _quote(word: str) -> str:
    if word and all(c.isalnum() or c in "-_./:#=@%+," for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"
