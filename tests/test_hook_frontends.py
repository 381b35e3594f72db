"""The two shell front-ends agree (issue 17 item 5).

hook/shell/parser.py (the fast reader) and hook/shell/treesitter.py (tree-sitter-bash, for what the
fast reader does not model) turn shell text into the events one interpreter runs. Each spells bash's
structure (pipelines, and-or lists, ``if``/``case``/loops, subshells and groups, functions,
redirections, here-documents, assignments) in its own way, so this test reads generated programs
(tests/shell_structures.py, built on the differential test's statements) twice through the same
detector: as the guard does (the fast reader, falling back to tree-sitter where it raises
`Unsupported`), and with every text, nested ones included, handed to tree-sitter. The two judgements
(every merge, lift and tamper with its repository, PR, branch, push target, and whether it is
undetermined: what ``hook explain`` prints, and more) must be the same. The fast reader's "I don't
know" is its fall-back, so it is allowed by construction; tree-sitter's own (a tree with syntax errors,
where the grammar does not know a bash form) makes the program incomparable and is counted, not
compared. Every program is bash (``bash -n``), or the generator is wrong.

Seeded and bounded: ``MAX_EXAMPLES`` derandomized programs in ``make test`` (a few seconds). A longer
run on demand: ``MH_FRONTENDS_EXAMPLES=20000 .venv/bin/python -m pytest tests/test_hook_frontends.py``,
and ``MH_FRONTENDS_SEED=N`` for another sequence than the derandomized one. Each disagreement found
once is a row of ``ROWS``, checked against real bash too (tests/shell_oracle.py, the differential
test's oracle).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

import hook.shell.interpreter as interpreter
import hook.shell.treesitter as treesitter
from hook.detect.model import Detection, Merge
from hook.detect.toolcall import detect
from hook.shell.parser import parse
from hook.shell.syntax import Event, Unsupported
from tests.shell_oracle import Sandbox, environment
from tests.shell_structures import programs
from tests.test_hook_differential import judge

MAX_EXAMPLES = int(os.environ.get("MH_FRONTENDS_EXAMPLES", "300"))
SEED = os.environ.get("MH_FRONTENDS_SEED")
BASH = shutil.which("bash") or "/bin/bash"
MIN_COMPARED = 0.7  # below this the generator mostly writes what tree-sitter cannot read: a blind test


class Readers:
    """Runs the detector on a program with the guard's readers, or with tree-sitter alone."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.cwd, self.env = str(sandbox.checkout), environment(sandbox)
        self.incomplete = False  # tree-sitter met syntax errors in some text of the last reading
        self.slow_reads = 0  # texts tree-sitter read in the last reading

    def judge(self, program: str, *, tree_sitter_only: bool) -> frozenset[Merge]:
        with self.forced(tree_sitter_only):
            detection = detect("Bash", {"command": program}, cwd=self.cwd, env=self.env)
        return judgement(detection)

    @contextlib.contextmanager
    def forced(self, tree_sitter_only: bool) -> Iterator[None]:
        """The interpreter asks the fast reader first and tree-sitter when it raises: refusing every
        text sends all of them, nested ones too, down the guard's own fall-back path. The switch is the
        test's (the interpreter's one call of each reader, by module name), so the hook pays nothing for
        it and imports nothing more (`test_the_switch_switches` keeps it from comparing a reader with
        itself)."""
        fast, slow = parse, treesitter.parse_bash
        self.incomplete, self.slow_reads = False, 0

        def refuse(text: str, *, powershell: bool = False) -> list[Event]:
            raise Unsupported("tree-sitter only")

        def watched(text: str) -> tuple[list[Event], bool]:
            events, complete = slow(text)
            self.slow_reads += 1
            self.incomplete = self.incomplete or not complete
            return events, complete

        setattr(interpreter, "parse", refuse if tree_sitter_only else fast)  # noqa: B010 - the name it calls
        treesitter.parse_bash = watched
        try:
            yield
        finally:
            setattr(interpreter, "parse", fast)  # noqa: B010
            treesitter.parse_bash = slow


def assert_valid_bash(program: str) -> None:
    """The generator writes bash, not text either reader may guess at: real bash parses it (``-n``: reads
    without running; extglob on, as the oracle runs, for ``@(…)`` patterns)."""
    checked = subprocess.run([BASH, "-O", "extglob", "-n"], input=program, capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, f"not bash:\n{program}\n{checked.stderr}"


def judgement(detection: Detection) -> frozenset[Merge]:
    """What the guard judges, without the free-text detail."""
    return frozenset(m.replace(detail="") for m in detection.gated)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    return Sandbox(Path(tmp_path_factory.mktemp("frontends")))


@pytest.fixture(scope="module")
def readers(sandbox: Sandbox) -> Readers:
    return Readers(sandbox)


def test_the_two_front_ends_give_the_same_judgement(readers: Readers, capsys: pytest.CaptureFixture[str]) -> None:
    seen: Counter[str] = Counter()

    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=SEED is None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(programs())
    def check(program: str) -> None:
        assert_valid_bash(program)
        guard = readers.judge(program, tree_sitter_only=False)
        alone = readers.judge(program, tree_sitter_only=True)
        if readers.incomplete:  # tree-sitter's own "I don't know": nothing to compare
            seen["incomplete"] += 1
            return
        seen["compared"] += 1
        assert guard == alone, f"program:\n{program}\nguard's readers: {sorted(map(repr, guard))}\n" \
                               f"tree-sitter alone: {sorted(map(repr, alone))}"

    if SEED is not None:
        check = seed(int(SEED))(check)
    check()
    total = sum(seen.values())
    with capsys.disabled():
        print(f"\n[frontends] {total} programs: {seen['compared']} compared, {seen['incomplete']} that tree-sitter "
              "could not read")
    assert seen["compared"] >= MIN_COMPARED * total, seen


ROWS: list[tuple[str, str]] = [
    # tree-sitter-bash hangs a list's last redirections on the whole list and regroups `a && b 2>&1 | c`
    # as a pipeline of a list (`x=5` ran in a subshell there); the region after `&&` runs to the list's end
    ("x=5 && true 2>&1 | cat; gh pr merge $x", "determined"),
    ("x=5; true && x=7 && gh pr merge $x", "determined"),
    ("cd sub && cd .. && git pp", "determined"),
    # it leaves a lone `-` before a redirection out of the tree
    ("gh pr merge 5 -R acme/other --body-file - <<EOF\nmerged\nEOF", "determined"),
    ("gh pr comment 5 -R acme/widgets -F - <<EOF\ngh pr merge 5\nEOF", "determined"),  # no lift: the body shows none
    # it gives a here-document nested in another's node the first body of the line
    ("v=true; cat <<EOF | bash <<EOF\ngh pr merge 5\nEOF\n$v\nEOF", "determined"),
    # a compound's input reaches the one command inside; with more, which reads it is the run's
    ("{ bash; } <<EOF\ngh pr merge 5\nEOF", "determined"),  # the fast reader gave bash nothing
    ("( bash ) <<EOF\ngh pr merge 5\nEOF", "determined"),
    ("gh pr merge 5 -R acme/other | ( ( bash ) ) </dev/null", "determined"),
    ("v=5 | ( ( gh pr comment 5 -F - ) ) </dev/null", "determined"),  # reads /dev/null: no lift
    ("{ cat; bash; } <<EOF\ngh pr merge 5\nEOF", "undetermined"),  # tree-sitter gave bash the body; cat reads it
    ("echo gh pr merge 5 | { true; bash; }", "undetermined"),  # the fast reader gave bash nothing
    # what a compound prints: its one command's output, else unknown
    ("( echo gh pr merge 5 ) | bash", "determined"),  # the fast reader: unknown
    ("{ echo gh pr merge 5; echo x; } | bash", "undetermined"),  # tree-sitter: only the last echo
    # a file a compound writes, or `>f` alone, is not what it was
    ("echo 5 > f.txt; { echo 7; } > f.txt; gh pr merge $(cat f.txt)", "undetermined"),  # the fast reader: 5
    ("echo 5 > f.txt; > f.txt; gh pr merge $(cat f.txt)", "undetermined"),  # both: 5 (bash: empty)
    # a here-document's substitutions run before its command, not after the line
    ("x=5; cat <<EOF && x=7\n$(gh pr merge $x)\nEOF", "determined"),  # the fast reader: 7
    # a background job is the whole and-or list, in any body
    ("cd / || true & gh pr merge 5", "determined"),  # the fast reader ran `cd /` here
    ("x=5; if true; then x=7 & fi; gh pr merge $x", "determined"),  # tree-sitter: 7
    ("cd / && case a in a) true;; esac & gh pr merge 5", "determined"),  # the fast reader: from `case` on
    # so is an arithmetic command in a pipeline
    ("x=5; x=7 | ((x++)); gh pr merge $x", "determined"),  # the fast reader: unknown
    # a test command prints nothing, whatever its substitutions print
    ("[[ $(echo gh pr merge 5) ]] | bash", "undetermined"),  # tree-sitter: a merge (the echo's output)
    # `[[ … ]]` on the tree-sitter path is read as on the fast path: `$((x=7))` assigns
    ("x=5; [[ $((x=7)) ]]; gh pr merge $x", "undetermined"),
    # an assignment in a pipeline is a simple command (tree-sitter fed the pipe to the substitution's
    # commands, and `set --` ran in a subshell of its own)
    ("v=5 | v=$( if set -- 7 5; then gh pr merge $1; fi; echo 7 )", "determined"),
    # tree-sitter-bash keeps the words after a redirection's target in the redirection node: they were
    # dropped (`-R acme/other` lost: the wrong repository, determined) and the last was taken for the target
    ("gh pr merge >/dev/null 5 -R acme/other", "determined"),  # tree-sitter: the branch's PR in acme/widgets
    ("gh pr merge 5 2>/dev/null -R acme/other", "determined"),  # tree-sitter: acme/widgets#5
    ("echo </dev/null gh pr merge 5 | bash", "determined"),  # tree-sitter: echo printed nothing
    ("echo >f.txt 5; gh pr merge $(cat f.txt)", "determined"),  # tree-sitter: it wrote a file named 5
    ("gh pr merge 5 <<EOF -R acme/other\nmerged\nEOF", "determined"),  # and in a here-document's node
    ("gh pr merge {fd}>/dev/null 5 -R acme/other", "determined"),  # `{fd}` was read as gh's argument
    ("git push origin HEAD:main 2>&1 {fd}>/dev/null", "determined"),  # and as one after `2>&1`'s target
    # a redirected test or arithmetic command prints nothing of its substitutions' (the fast reader
    # gave the pipe `echo`'s output); a redirected group still prints its one command's
    ("[[ $(echo 5) ]] 2>&1 | gh pr comment 5 -F -", "determined"),
    ("(( $(echo 5) )) >&2 | gh pr comment 5 -F -", "determined"),
    ("{ echo gh pr merge 5; } 2>&1 | bash", "determined"),
]
"""Programs on which the two readers once disagreed, with what real bash makes of them (the differential
test's verdicts: ``determined`` and equal to what the stand-ins received, or ``undetermined``)."""

UNREADABLE: list[tuple[str, str]] = [
    # tree-sitter-bash ran `bash` on past the newline (`bash gh pr merge 5`, no error node); found as
    # `if v=5 NL then v=5 | echo 'v=5 && v=5 && v=5' | bash NL elif v=5 NL then gh pr merge && v=5 NL fi`
    ("v=5 | echo x | bash\ngh pr merge 5 && true", "determined"),
    # it took the first here-document's body from the `else` branch and read its own lines as commands
    ("true | if true\nthen cat <<EOF && case a in a) true\ngh pr merge 5\nEOF\ntrue;; esac\n"
     "else cat <<EOF\ngh pr merge 5\nEOF\nfi", "determined"),
    # it read a newline and an escaped word as one word of the line before (`true '\ngh' pr merge 5`):
    # no merge at all; found as `while false; do v=5 NL \gh pr merge 5; done`
    ("true\n\\gh pr merge 5", "determined"),
    ("v=5\n\\gh pr merge 5", "determined"),
    ("echo x >/dev/null\n\\gh pr merge 5", "determined"),  # the same inside a redirection's node
    # and split a word at a line continuation (`gh pr mer ge 5`: no merge)
    ("gh pr mer\\\nge 5", "determined"),
    ("g\\\nh pr merge 5 -R acme/other", "determined"),
    # and made a reserved word a command's name after `!` or `time` (`{ gh pr merge 5`, then `}`)
    ("! { gh pr merge 5; }", "determined"),
    ("! if true; then gh pr merge 5 -R acme/other; fi", "determined"),
    ("time { gh pr merge 5; }", "determined"),
]
"""Programs tree-sitter misread without an error node: it must count them as unread, never trust them."""


def test_the_switch_switches(readers: Readers) -> None:
    """A text the fast reader reads goes to tree-sitter only when forced (the switch patches names the
    interpreter calls: a rename there would otherwise make both readings the fast reader's)."""
    for program in ("gh pr merge 5", "for v in 5; do echo $(gh pr merge $v); done"):
        readers.judge(program, tree_sitter_only=False)
        assert readers.slow_reads == 0, program
        readers.judge(program, tree_sitter_only=True)
        assert readers.slow_reads >= 1, program


@pytest.mark.parametrize(("program", "verdict"), ROWS)
def test_rows_on_which_the_front_ends_once_disagreed(sandbox: Sandbox, readers: Readers, program: str,
                                                     verdict: str) -> None:
    guard = readers.judge(program, tree_sitter_only=False)
    alone = readers.judge(program, tree_sitter_only=True)
    assert not readers.incomplete
    assert guard == alone, f"guard's readers: {sorted(map(repr, guard))}\ntree-sitter alone: {sorted(map(repr, alone))}"
    got, detail = judge(sandbox, program)
    assert got == verdict, detail


@pytest.mark.parametrize(("program", "verdict"), UNREADABLE)
def test_what_tree_sitter_misreads_is_unread(sandbox: Sandbox, readers: Readers, program: str, verdict: str) -> None:
    alone = readers.judge(program, tree_sitter_only=True)
    assert readers.incomplete
    assert any(m.via == "unparsed" and m.undetermined for m in alone), sorted(map(repr, alone))
    got, detail = judge(sandbox, program)
    assert got == verdict, detail
