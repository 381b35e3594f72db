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
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>"})


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
    from hook.detect.shaped import merge_shaped

    if any(merge_shaped(a[0]) for a in args[1:]):
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
        ctx.planted(key, text, append=target in appends)  # what it writes there (hook/detect/planted.py)


def _interpreter(ctx: Ctx, family: str, args: list[Arg], cmd: Command) -> None:
    from hook.detect.grammars import INTERPRETERS

    if family in INTERPRETERS:
        _by_grammar(ctx, family, args, cmd)
        return
    flags = _CODE_FLAGS[family]
    k = 1
    if family == "deno" and len(args) > 1 and args[1][0] in ("run", "test", "bench", "serve"):
        k = 2  # `deno run [opts] FILE`
    while k < len(args):
        text = args[k][0]
        if text in flags and k + 1 < len(args):
            from hook.detect.code import code, handed_to

            code(ctx, args[k + 1][0], handed=handed_to(ctx, args[k + 2 :], cmd))
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
        from hook.detect.code import code, handed_to

        code(ctx, source, handed=handed_to(ctx, args[k + 1 :], None))
    elif cmd.piped or any(r.op == "<" for r in cmd.redirects):  # `curl … | python3`
        ctx.runtime("an interpreter reads code produced at run time", via="script")


def _by_grammar(ctx: Ctx, family: str, args: list[Arg], cmd: Command) -> None:
    """An interpreter's command line by its grammar (hook/detect/grammars.py): the code its code options carry
    (``-c``, ``-e``/``-E`` — perl and ruby join several ``-e``), a module (``-m``: the user's program), else the
    first operand, a script file (``-`` or none: stdin). A spelling the grammar does not settle: undetermined."""
    from hook.detect.code import code, handed_to
    from hook.detect.getopt import parse
    from hook.detect.grammars import INTERPRETERS, NODE_BUNDLES

    grammar, code_options, modules = INTERPRETERS[family]
    words = [NODE_BUNDLES.get(a[0], a[0]) if family in ("node", "nodejs", "ts-node", "tsx") else a[0] for a in args]
    start = 2 if family == "bun" and words[1:2] == ["run"] else 1
    parsed = parse(grammar, words, start)
    mark = ctx.mark() if not parsed.exact else -1
    before = len(ctx.merges)
    given = [v for o, v in parsed.options if o in code_options]
    rest = args[parsed.end :]
    if given:
        text = "\n".join(v if v is not None else DYN for v in given)
        code(ctx, text, handed=handed_to(ctx, rest, cmd))
    elif parsed.has(*modules):
        pass  # an installed module: the user's program
    elif rest and rest[0][0] != "-":
        _file(ctx, rest[0], rest[1:])
    else:
        source = ctx.stdin_text(cmd)
        if source is not None:
            code(ctx, source, handed=handed_to(ctx, rest[1:], None))
        elif cmd.piped or any(r.op == "<" for r in cmd.redirects):  # `curl … | python3`
            ctx.runtime("an interpreter reads code produced at run time", via="script")
    if mark >= 0:
        name = args[0][0].rsplit("/", 1)[-1]
        ctx.uncertain(mark, f"{name}: a spelling of its options the guard does not read exactly")
        if len(ctx.merges) == before:
            from hook.detect.opaque import opaque

            opaque(ctx, name, args, cmd, what="an interpreter whose options are not read exactly", files=False)


def _file(ctx: Ctx, arg: Arg, rest: list[Arg]) -> None:
    """A script file: read for the merges it names (written earlier in this command, or on disk); its code
    is read by heuristics at best, so merge-shaped arguments after it, or a merge-shaped name of its own
    (``python3 tools/land.py 5``), are undetermined (hook/detect/opaque.py)."""
    from hook.detect.opaque import script_file
    from hook.detect.shaped import merge_shaped

    name = arg[0]
    if DYN in name:
        if ctx.decoder_seen:
            ctx.runtime("an interpreter runs a script named at run time", via="script")
        return
    text = ctx.read_file(name)
    if text is not None and merge_shaped(text):
        from hook.detect.code import code

        code(ctx, text)
    script_file(ctx, name, rest, what="run by an interpreter")


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
