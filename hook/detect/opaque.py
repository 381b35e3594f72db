"""The soundness rule for a program the guard does not read (design §6): an *unknown* program, or an
interpreter whose language is not read, that is handed merge-shaped text — in its arguments, its stdin
(a pipe, a here-document, a here-string, a redirected file) or a file it names — may run it, so the
answer is undetermined. Text it is not handed cannot steer it, so a program given none runs no merge of
this command's making (`hook.detect.shaped.merge_shaped` says what counts).

What the text shows is still read, as a hint: the words read as a command line (``IMAGE gh pr merge 5
-R o/r`` names acme's repo), and as gh's arguments when they read like them (``IMAGE pr merge 5``: an
entrypoint that may be gh); everything found is undetermined, and the current directory's repository is
judged too (where gh would look first), as for any text produced at run time.
"""

from __future__ import annotations

from hook.detect.prefilter import GH_BUILTINS
from hook.detect.shaped import merge_shaped
from hook.shell.syntax import DYN, Command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hook.detect.context import Ctx
    from hook.shell.expansion import Arg

_MAX_FILES = 8
_HINT_PROGRAMS = frozenset({"gh", "hub", "git", "curl", "wget", "http", "https", "xh", "bash", "sh", "zsh", "dash",
                            "ash", "env", "sudo", "timeout", "nohup", "exec", "python", "python3", "node"})


def shaped(ctx: Ctx, text: str) -> bool:
    """Merge-shaped text; a piece only the run knows counts when a decoder ran in this command (its text may
    be hidden on purpose) — otherwise nothing in the command steers it."""
    if DYN in text:
        return ctx.decoder_seen or merge_shaped(text.replace(DYN, " "))
    return merge_shaped(text)


def handed(ctx: Ctx, words: list[Arg], cmd: Command | None, *, files: bool = True) -> str | None:
    """What merge-shaped text ``words`` and the command's stdin hand the program (a short description), or
    None. ``files``: also the files the words name, when they can be read (written earlier here, or on disk)."""
    for text, _ in words:
        if shaped(ctx, text):
            return f"its arguments carry {_clip(text)!r}"
    if cmd is not None:
        stdin = ctx.stdin_text(cmd)
        if stdin is not None and shaped(ctx, stdin):
            return "its stdin carries merge-shaped text"
        if stdin is None and ctx.decoder_seen and (cmd.piped or any(r.op.startswith("<") for r in cmd.redirects)):
            return "its stdin is decoded at run time"
    if files:
        read = 0
        for text, _ in words:
            if read >= _MAX_FILES or not text or text.startswith("-") or DYN in text or "\n" in text:
                continue
            read += 1
            content = ctx.read_file(text)
            if content is not None and merge_shaped(content):
                return f"the file {text!r} it names carries merge-shaped text"
    return None


def opaque(ctx: Ctx, name: str, args: list[Arg], cmd: Command | None, *, via: str = "program",
           what: str = "a program the guard does not know", files: bool = True, own_name: bool = False) -> bool:
    """Apply the rule to ``args`` (``args[0]`` the program); True when the answer became undetermined.
    ``own_name``: the program's own name counts as text it carries — an unknown ``merge-pr 5`` or
    ``./scripts/automerge`` says what it is for, though its arguments say nothing."""
    reason = handed(ctx, args[1:], cmd, files=files)
    if reason is None and own_name and args and name_shaped(args[0][0]):
        reason = f"its name {_clip(_base(args[0][0]))!r} is merge-shaped"
    if reason is None:
        return False
    undetermined(ctx, name, args[1:], f"{name}: {what}, and {reason}", via=via, cmd=cmd)
    return True


def name_shaped(path: str) -> bool:
    """A program's or script's own name says what it is for (``merge-pr``, ``./scripts/automerge``): its
    base name is merge-shaped, also split at ``.``, ``_`` and ``-`` — ``land.py``, ``ship_it.sh`` and
    ``gh-sync`` name a merge word, though ``.`` and ``-`` join words in the text of arguments."""
    from hook.detect.shaped import name_shaped as shaped_name

    base = _base(path)
    return DYN not in base and shaped_name(base)


def script_file(ctx: Ctx, path: str, rest: list[Arg], *, what: str) -> bool:
    """A script file run by an interpreter or a shell whose text is not modelled here (not on disk, or not
    read): like an unknown program, merge-shaped arguments or a merge-shaped name (``python3 tools/land.py
    5``) make the answer undetermined; True when they did."""
    reason = handed(ctx, rest, None, files=False)
    if reason is None and name_shaped(path):
        reason = f"its name {_clip(_base(path))!r} is merge-shaped"
    if reason is None:
        return False
    undetermined(ctx, path, rest, f"a script ({_clip(path)}) {what}: {reason}", via="script")
    return True




def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def undetermined(ctx: Ctx, name: str, words: list[Arg], why: str, *, via: str, cmd: Command | None = None) -> None:
    """The words may run anything: read them as hints (their merges undetermined), and judge the current
    directory's repository too."""
    hint(ctx, words, why, cmd)
    ctx.runtime(why, via=via)


def hint(ctx: Ctx, words: list[Arg], why: str, cmd: Command | None = None) -> None:
    """Read ``words`` as a command line (from the first word that names a program the guard reads) and as gh's
    arguments; whatever merges that finds is undetermined, and nothing it changes is kept."""
    if not words or ctx.hinting > 2:
        return
    from hook.detect.programs import command_name

    ctx.hinting += 1
    mark = ctx.mark()
    try:
        start = next((k for k, (text, _) in enumerate(words) if command_name(text) in _HINT_PROGRAMS), None)
        if start is not None:
            ctx.simple_command(list(words[start:]), cmd or Command([], [], []), {})
        elif words[0][0] in GH_BUILTINS or words[0][0] == "merge":
            ctx.dispatch(ctx, [("gh", None), *words], cmd or Command([], [], []), {})
    finally:
        ctx.uncertain(mark, why)
        ctx.hinting -= 1


def _clip(text: str) -> str:
    shown = text.replace(DYN, "…")
    return shown if len(shown) <= 60 else shown[:57] + "..."
