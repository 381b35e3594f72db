"""Shell programs built from bash's structures, for tests/test_hook_frontends.py: pipelines, and-or
lists, ``if``/``case``/loops, subshells and groups, functions, redirections, here-documents,
assignments and text handed to a nested shell, around the state a merge's target depends on (a
variable, the working directory, ``GH_REPO``, ``$1``, an array, an alias).

The simple commands are the differential test's own (tests/test_hook_differential.py: `statement`,
`DECOYS`) plus the state-changing ones below; this module composes them. A program is drawn as text
with two marks, `NL` for a newline and a here-document body between `BODY` marks right after its
redirection; `render` moves each body to the line after the next newline, where bash reads it, so a
here-document may sit inside an ``if``, a loop or a function on one line. Every loop ends: ``while``
and ``until`` run on a condition that is false (or true) from the start, read a finite input, or end
in ``break``. Each choice is one draw from a table (hypothesis pays per draw: a few seconds for a few
hundred programs).
"""

from __future__ import annotations

import shlex

from hypothesis import strategies as st

from tests.test_hook_differential import DECOYS, statement

Draw = st.DrawFn
NL = "\x1e"
BODY = "\x1f"

ASSIGNS = ("v=5", "v=7", "v=$(echo 7)", "v=`echo 5`", "r=acme/other", "v+=5", "read v", "unset v",
           "a=(5 7)", "a+=(9)", "a[1]=5", "export GH_REPO=acme/other", "GH_REPO=acme/other", "declare v=7",
           "local v=9", "((v++))", "let v=7", "set -- 7 5", "shift", "set -a", "v=${v:-9}", "printf -v v 7",
           "export v", "v=", "v=5 r=acme/other", "IFS=,", "alias gm='gh pr merge'", "x=5 v=$x", "declare -a a=(5 7)",
           "export r=acme/other", "v=$(case 7 in 7) echo 5;; esac)", "read -r v <<<7")
DIRS = ("cd sub", "cd ..", "cd /", "cd sub || true", "pushd sub >/dev/null")
MERGES = ("gh pr merge $v -R acme/widgets", 'gh pr merge "$v" -R "$r"', "gh pr merge 5", "gh pr merge $1",
          'gh pr merge "${a[1]}" -R acme/other', 'gh pr merge "$@"', "gh api -X PUT repos/acme/widgets/pulls/$v/merge",
          "curl -X PUT https://api.github.com/repos/$r/pulls/5/merge", "git push origin HEAD:main",
          "gh pr merge 5 -R acme/other", "GH_REPO=$r gh pr merge 5", "gh pr merge ${v}", "gm 5",
          "gh pr merge \\\n 5 -R acme/other", "bash <(echo gh pr merge 5)", "gh pr merge $(echo 7) -R acme/other")
QUOTED_MERGES = ('"gh" pr merge 5', "g\\h pr merge 5", "gh 'pr' \"merge\" 5 -R acme/other", "\\gh pr merge 5",
                 "gh pr mer\\ge $v", "gh pr $'merge' 5", "gh api -X PUT 'repos/acme/widgets/pulls/5/merge'",
                 "git push origin 'HEAD:main'", "git push origin HEAD:\\main", "$(echo gh) pr merge 5",
                 'gh pr "merge" "$(echo 5)" -R acme/other')
"""Merges spelled through quotes and escapes: each word is still the merge's once bash has removed them."""
HARMLESS = ("ls", "ls >/dev/null", "git status", "git status --short", "grep merge file", "grep -c merge /dev/null")
LOOKALIKES = ("echo 'gh pr merge 5'", 'echo "gh pr merge $v"', "echo gh\\ pr\\ merge\\ 5", ": gh pr merge 5",
              "printf '%s\\n' 'git push origin HEAD:main'", "grep 'gh pr merge' file", "echo gh pr merge 5 '#'",
              "echo 'gh api -X PUT repos/acme/widgets/pulls/5/merge'", "cat <<<'gh pr merge 5'",
              'echo "\\$(gh pr merge 5)"', "echo '$(gh pr merge 5)'", "git commit --dry-run -m 'gh pr merge 5'")
"""Text that names a merge without running one: quoted, escaped, an argument, data on stdin."""
LIFTS = ("gh pr comment $v -R acme/widgets --body /unhold", "gh pr edit 5 --remove-label hold",
         'gh pr review "$v" -R "$r" --approve', "gh pr comment 5 -F -")
"""Lifts: judged like merges (the oracle's reference reading does not know them: tests/shell_oracle.py)."""
TAMPERS = ("gh api -X DELETE repos/acme/widgets/branches/main/protection",
           "gh api -X POST repos/$r/statuses/abc -f state=success -f context=merge-hold")
"""Acts that weaken the gate: judged like lifts (the oracle does not know them either)."""
NEUTRAL = ("true", "false", ":", "echo hi", "echo $v", "[ -e /nope ]", "[[ $v == 5 ]]", 'test -n "$v"',
           "cat /dev/null", "wait", "[[ $(echo 5) ]]", "(( v > 2 ))", "echo gh pr merge 9", "time true",
           "cat <(echo 5)", "echo $'gh pr merge 9'", "printf '%s\\n' 5 7")
CALLS = ("f", "f 7", 'f "$v"', "g 5 -R acme/other")
LOOPING = ("break", "continue")
IN_FUNCTION = ("return", "local v=7", 'local r="$1"')
REDIRECTS = ("",) * 8 + (">/dev/null", "2>&1", ">>log.txt", "</dev/null", "2>/dev/null >&2", "&>/dev/null",
                         "{fd}>/dev/null", '<<<"$v"')
PATTERNS = ("5", "7", "5|7", "*", "[57]", "?", "g*", '""', "$v", "5|@(7)")
SUBJECTS = ("$v", "5", "go", '"$1"', "$(echo 7)")
CONDITIONS = ("while false", "while [ -e /nope ]", "until true", "while read x", "while true", "until false")
FOR_HEADERS = ("for x in 5 7", "for v in 5 7", 'for v in "$@"', "for x in 5 7", "for v in 5",
               "for ((i = 0; i < 2; i++))", "for v in $(echo 5 7)", "for v in {5..7}", "select v in 5", "for v")
FUNCTIONS = ("{0}() {{ {1}; }}", "{0} () {{ {1}; }}", "{0}() ( {1} )", "function {0} {{ {1}; }}",
             "function {0}() {{ {1}; }}", "{0}() {{ {1}\x1e}}")
NESTED = ("eval {0}", "bash -c {0}", "sh -c {0} _ 7", "bash -c {0} sh 5 -R acme/other", "echo {0} | bash",
          "bash <<< {0}")
SUBSTITUTIONS = ("v=$( {0}; echo 7 )", "gh pr merge $( {0} ) -R acme/widgets", 'echo "$( {0} )"', "[[ -n $( {0} ) ]]",
                 "v=$({0})")
HEREDOC_READERS = ("cat", "bash", "sh", "cat | bash", "bash -s 5", "gh pr comment 5 -R acme/widgets -F -",
                   "gh pr comment 5 @-R acme/other -F -", "bash @-s 5", "cat @- | bash",
                   "cat >/dev/null")
HEREDOC_BODIES = ("gh pr merge 5", "$v", "/unhold", "gh pr merge $v -R acme/other", "$(gh pr merge 7)", "text")
# simple commands, then if, while, for, case, ( ), { }, a function, a here-document, a nested shell, a
# substitution, a group over lines; functions (the fast reader leaves them to tree-sitter) drawn rarely
_FORMS = st.sampled_from((0,) * 12 + (4, 4, 5, 6, 6, 7, 7, 8, 8, 9, 10, 11, 11, 12, 12, 13, 13, 14))
_LENGTHS = (st.sampled_from((1, 2, 2, 3)), st.sampled_from((1, 1, 2, 2, 3)), st.sampled_from((1, 1, 1, 2)))
_PIPES = st.sampled_from(("",) * 6 + (" | ", "|", " |& ", "!"))
_ARMS = st.sampled_from([(p, o, t) for p in PATTERNS for o in ("", "(") for t in (";;", ";;", ";&", ";;&")])
_COMPOUND = ("{", "(", "if", "case", "for", "while", "until", "select", "f()", "g()", "function", "local")
_REDIRECTED = st.sampled_from([(r, w) for r in REDIRECTS for w in ("end", "end", "end", "middle", "start")])
_KEYWORDS = ("time", "[[", "((", "!", "{", "(")
_HEREDOCS = st.sampled_from([(op, d, q, t) for op in ("<<", "<<-") for d in ("EOF", "END") for q in ("", "'", '"')
                             for t in ("", "\t") if op == "<<-" or not t])
_ONE_LINE_STATEMENTS = st.one_of(statement(), DECOYS).filter(lambda text: "\n" not in text)


def render(text: str) -> str:
    """Real newlines, each here-document body on the lines after the first newline that follows it."""
    out: list[str] = []
    pending: list[str] = []
    for k, piece in enumerate(text.split(BODY)):
        if k % 2:  # a body: read after the next newline
            pending.append(piece)
            continue
        for j, segment in enumerate(piece.split(NL)):
            if j:
                out.append("\n")
                if pending:
                    out.append("\n".join(pending) + "\n")
                    pending = []
            out.append(segment)
    if pending:
        out.append("\n" + "\n".join(pending))
    return "".join(out)


_POOLS: dict[tuple[bool, bool, bool, bool], st.SearchStrategy[str]] = {}


def _leaves(lifts: bool, in_loop: bool, in_function: bool, calls: bool) -> st.SearchStrategy[str]:
    """One simple command, one draw: state (twice as likely), merges, decoys, and what fits here."""
    key = (lifts, in_loop, in_function, calls)
    if key not in _POOLS:
        pool: tuple[str, ...] = ASSIGNS + ASSIGNS + DIRS + MERGES + MERGES + QUOTED_MERGES + NEUTRAL + HARMLESS
        pool += LOOKALIKES
        pool += (LIFTS + TAMPERS if lifts else ()) + (CALLS if calls else ()) + (LOOPING if in_loop else ())
        pool += IN_FUNCTION if in_function else ()
        _POOLS[key] = st.sampled_from(pool + ("\x00",) * (len(pool) // 8))  # NUL: one of the differential's
    return _POOLS[key]


class _Context:
    __slots__ = ("calls", "in_function", "in_loop", "lifts", "one_line")

    def __init__(self, lifts: bool, in_loop: bool, in_function: bool, calls: bool, one_line: bool) -> None:
        self.lifts, self.in_loop, self.in_function, self.calls, self.one_line = (lifts, in_loop, in_function, calls,
                                                                                 one_line)

    def but(self, **changes: bool) -> _Context:
        values = {name: getattr(self, name) for name in self.__slots__} | changes
        return _Context(values["lifts"], values["in_loop"], values["in_function"], values["calls"],
                        values["one_line"])


def _simple(draw: Draw, ctx: _Context) -> str:
    """A simple command, maybe redirected: at its end, after its first word or before it (the words
    after a redirection are still the command's: ``gh pr merge >/dev/null 5 -R acme/other``)."""
    text = draw(_leaves(ctx.lifts, ctx.in_loop, ctx.in_function, ctx.calls))
    statement = text == "\x00"
    if statement:
        text = draw(_ONE_LINE_STATEMENTS)
    redirect, where = draw(_REDIRECTED)
    head, _, rest = text.partition(" ")
    if "=" in head or not redirect:  # tree-sitter-bash reads no redirection after a bare assignment
        return text
    # a statement may be a compound one; `declare >f a=(5)` is no array assignment (bash: a syntax error)
    # tree-sitter-bash reads no `{fd}>f` before the command name: a program it cannot read
    if where == "end" or statement or head.startswith(_KEYWORDS) or "=(" in rest:
        return f"{text} {redirect}"
    start = where == "start" and not redirect.startswith("{")
    return f"{redirect} {text}" if start or not rest else f"{head} {redirect} {rest}"


def _heredoc(draw: Draw, depth: int, ctx: _Context) -> str:
    """A here-document: its body is data (``cat``), a script (``bash``), or a body a lift reads."""
    op, delim, quoting, tabs = draw(_HEREDOCS)
    if depth > 0 and draw(st.booleans()):
        inner = _list(draw, depth - 1, ctx.but(one_line=True))
    else:
        inner = draw(st.sampled_from(HEREDOC_BODIES))
    program, _, tail = draw(st.sampled_from(HEREDOC_READERS)).partition(" | ")
    program, _, after = program.partition(" @")  # `@`: the words after the here-document are the command's
    return (f"{program} {op}{quoting}{delim}{quoting}{' ' + after if after else ''}{BODY}{tabs}{inner}\n{tabs}"
            f"{delim}{BODY}" + (f" | {tail}" if tail else ""))


def _command(draw: Draw, depth: int, ctx: _Context) -> str:
    """A command: simple, or (while ``depth`` lasts) a compound one, maybe with redirections."""
    form = draw(_FORMS) if depth > 0 else 0
    if form == 0 or (form == 11 and ctx.one_line):
        return _simple(draw, ctx)
    d = depth - 1
    sep = draw(st.sampled_from(("; ", NL))) if not ctx.one_line else "; "
    if form == 4:
        shape = draw(st.sampled_from(("if", "if-else", "if-elif", "if-elif-else")))
        text = f"if {_list(draw, d, ctx)}{sep}then {_list(draw, d, ctx)}{sep}"
        if "elif" in shape:
            text += f"elif {_list(draw, d, ctx)}{sep}then {_list(draw, d, ctx)}{sep}"
        if shape.endswith("else"):
            text += f"else {_list(draw, d, ctx)}{sep}"
        text += "fi"
    elif form == 5:
        cond = draw(st.sampled_from(CONDITIONS))
        looping = cond in ("while true", "until false")  # no `continue` in there: it would never end
        text = f"{cond}{sep}do {_list(draw, d, ctx.but(in_loop=not looping))}{'; break' if looping else ''}{sep}done"
        if cond == "while read x" and draw(st.booleans()):
            text = f"printf '5\\n7\\n' | {text}"
    elif form == 6:
        header = draw(st.sampled_from(FOR_HEADERS))
        sep = "; " if header.startswith("select") else sep
        text = f"{header}{sep}do {_list(draw, d, ctx.but(in_loop=True))}{sep}done"
        text += " </dev/null" if header.startswith("select") else ""
    elif form == 7:
        arms = []
        count = draw(st.integers(1, 3))
        for k in range(count):
            pattern, opener, term = draw(_ARMS)
            term = ";;" if k == count - 1 else term  # tree-sitter-bash reads `;&` and `;;&` only before an arm
            arms.append(f"{opener}{pattern}) {_list(draw, d, ctx)}{term}")
        between = draw(st.sampled_from((" ", NL))) if not ctx.one_line else " "
        text = f"case {draw(st.sampled_from(SUBJECTS))} in {between.join(arms)} esac"
    elif form == 8:
        text = f"( {_list(draw, d, ctx)} )"
    elif form == 9:
        text = f"{{ {_list(draw, d, ctx)}; }}"
    elif form == 10:
        name, shape, call = draw(st.sampled_from([(n, s, c) for n in ("f", "g") for s in FUNCTIONS
                                                  for c in (None, "", "7", '"$v"', "5 -R acme/other")]))
        shape = shape.replace("\x1e", sep)
        text = shape.format(name, _list(draw, d, ctx.but(calls=False, in_function=True, in_loop=False)))
        text += f"{sep}{name} {call}" if call is not None else ""
    elif form == 11:
        text = _heredoc(draw, d, ctx)
    elif form == 12:  # text handed to a shell that reads it again
        inner = _list(draw, d, ctx.but(one_line=True))
        text = draw(st.sampled_from(NESTED)).format(shlex.quote(inner))
    elif form == 13:  # a substitution: its commands run
        inner = _list(draw, d, ctx.but(one_line=True, in_loop=False))
        inner = f" {inner}" if inner.startswith("(") else inner  # `$((` opens arithmetic, not a subshell
        text = draw(st.sampled_from(SUBSTITUTIONS)).format(inner)
    else:
        text = f"{{ {_list(draw, d, ctx)}{sep}}}"
    if form in (4, 5, 6, 7, 8, 9, 14):
        redirect = draw(st.sampled_from(REDIRECTS[:-2]))  # tree-sitter-bash: no `<<<` or `{fd}>f` there
        text += f" {redirect}" if redirect else ""
    return text


def _list(draw: Draw, depth: int, ctx: _Context) -> str:
    """An and-or list of pipelines, or a few of them separated by ``;``, ``&`` or newlines."""
    separators = (" && ", " || ", "&&", "; ", " & ") + ((NL, " # gh pr merge 9" + NL) if not ctx.one_line else ())
    text = ""
    for k in range(draw(_LENGTHS[min(depth, 2)])):
        if k:
            text += draw(st.sampled_from(separators))
        first = _command(draw, depth, ctx)
        shape = draw(_PIPES)
        if shape == "!":  # `! PIPELINE`; tree-sitter-bash reads `!` only before a simple command
            simple = "=" not in first.split(" ", 1)[0] and not first.startswith(_COMPOUND)
            text += "! " + first if simple else first
        elif shape:
            text += first + shape + _command(draw, depth, ctx)
        else:
            text += first
    return text


@st.composite
def programs(draw: Draw, depth: int = 2, *, lifts: bool = True) -> str:
    """Whole programs, rendered: what an agent's Bash call would hold."""
    return render(_list(draw, depth, _Context(lifts, False, False, True, False)))
