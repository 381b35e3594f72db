"""Code compiled or assembled from text in the command, then run now, later, or preloaded (design §6, issue 26
item 1): ``gcc -x c - <<EOF``, ``printf … | rustc -``, ``go run m.go`` of a file this command wrote,
``tcc -run``, ``zig run``, ``java M.java`` (a source launcher). The source is read like interpreter code
(hook/detect/code.py): the commands in its strings and argv lists, GitHub's API paths, client libraries —
undetermined — and code that can start a program or reach GitHub is undetermined too; code that can do neither
(``puts("hi")``) cannot merge, however it is run. A source file on disk that this command did not write is the
project's own code: read only when it names a merge, like a script file. Source produced at run time
(``curl … | gcc -x c -``) is undetermined.
"""

from __future__ import annotations

from hook.shell.syntax import DYN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg
    from hook.shell.syntax import Command

SOURCES = (".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm", ".s", ".S", ".asm", ".f", ".f90", ".go", ".rs",
           ".zig", ".java", ".kt", ".kts", ".swift", ".nim", ".cr", ".dart", ".hs", ".d", ".v", ".odin")
"""Source files by their extension."""
# options whose value is the next word (not a source): output, include and library paths, language, defines
_VALUED = frozenset({"-o", "-I", "-L", "-l", "-D", "-U", "-x", "-include", "-isystem", "-MF", "-MT", "-MQ",
                     "--out-dir", "--crate-name", "--crate-type", "--edition", "--target", "-C", "--emit", "-cp",
                     "-classpath", "--class-path", "-d", "-target", "-femit-bin", "--cache-dir", "-mod", "-tags",
                     "-ldflags", "-gcflags", "-modfile", "-exec"})


def compiled(ctx: Ctx, args: list[Arg], cmd: Command, overlay: dict[str, str | None]) -> None:
    """A compiler handed source: ``-`` (stdin; with ``-x LANG`` for the C family), or source files."""
    from hook.detect.code import code
    from hook.detect.shaped import merge_shaped

    words = [a[0] for a in args[1:]]
    stdin = "-" in words or (words[:1] == ["run"] and "-" in words[1:])
    sources, i = [], 0
    while i < len(words):
        w = words[i]
        if w in _VALUED:
            i += 2
            continue
        if not w.startswith("-") and w.endswith(SOURCES):
            sources.append(w)
        i += 1
    if stdin:
        text = ctx.stdin_text(cmd)
        if text is None:
            if cmd.piped or any(r.op.startswith("<") for r in cmd.redirects):
                ctx.runtime("a compiler builds code produced at run time", via="script")
        else:
            code(ctx, text)
    for source in sources:
        if DYN in source:
            ctx.runtime("a compiler builds a file named at run time", via="script")
            continue
        key = ctx.path(source)
        written = ctx.files.get(key)
        if written is not None:  # written by this command: text in the command
            if DYN in written and not written.strip(DYN + " \n"):
                ctx.runtime(f"a compiler builds {source}, written with text only the run knows", via="script")
            else:
                code(ctx, written)
            continue
        text = ctx.read_file(source)
        if text is not None and merge_shaped(text):
            code(ctx, text)


def preloads(ctx: Ctx, overlay: dict[str, str | None]) -> None:
    """``LD_PRELOAD``/``LD_AUDIT``/``DYLD_INSERT_LIBRARIES`` for a command: the libraries it runs before its own
    code (hook/detect/planted.py judges one this command wrote)."""
    for name in ("LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"):
        value = ctx.getenv(name, overlay)
        if not value:
            continue
        for lib in value.replace(":", " ").split():
            ctx.preloads.add(ctx.path(lib) if DYN not in lib else lib)
