"""Fixed rows for the two shell front-ends (issue 17 item 5), one group per structure each reader spells
in its own way: pipelines, and-or lists, ``if``, ``case``, loops, subshells and groups, command
substitution, here-documents, redirections (the words after one are still the command's), functions (the
guard reads a text that defines one with tree-sitter), nested shells, and the quoted and escaped
spellings of a command word.

tests/test_hook_frontends.py generates programs and requires the two readers to agree; these rows pin
*what* they agree on, as ``merge-hold hook explain`` reports it (hook/tools/explain.py: merges, lifts,
tampers, undetermined), so a change that moves both readers the same wrong way is caught too. Each
row is read as the guard reads it (the fast reader, tree-sitter where it says it cannot read) and
with tree-sitter alone, and must be bash (``bash -n``).

A branch that may not run is judged as if it ran (``false && gh pr merge 5``): the guard does not
evaluate conditions, and a merge it reports that bash would skip costs a question, never a merge.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hook.detect.model import Detection
from hook.detect.toolcall import detect
from hook.tools.explain import render
from tests.shell_oracle import Sandbox
from tests.test_hook_frontends import Readers, assert_valid_bash

W5 = ("merge gh_pr_merge acme/widgets#5",)
PUSH = ("merge git_push acme/widgets@feature/login",)  # the sandbox's checkout is on feature/login
UNKNOWN = ("merge gh_pr_merge None#None", "undetermined")
NONE: tuple[str, ...] = ()
UNREAD = "merge unparsed None#None"  # text tree-sitter reads with errors, or misreads (hook/shell/treeshape.py)

ROWS: list[tuple[str, str, tuple[str, ...]]] = [
    ("pipeline", "ls | grep merge", NONE),
    ("pipeline", "echo hi | gh pr merge 5 | cat", W5),
    ("pipeline", "git status | gh pr merge 5 -R acme/other", ("merge gh_pr_merge acme/other#5",)),
    ("pipeline", "echo 'gh pr merge 5' | bash", W5),  # the quoted text is a script here
    ("pipeline", 'echo "gh pr merge 5" | cat', NONE),
    ("pipeline", "v=7 | true; gh pr merge $v", UNKNOWN),  # `v=7` ran in the pipeline's subshell
    ("pipeline", "! gh pr merge 5 |& cat", W5),
    ("and-or", "ls && gh pr merge 5 || echo hi", W5),
    ("and-or", "false && gh pr merge 5", W5),
    ("and-or", "git status && git push origin HEAD:main", PUSH),
    ("and-or", "grep merge file || gh api -X PUT repos/acme/widgets/pulls/5/merge",
     ("merge gh_api_rest acme/widgets#5",)),
    ("and-or", "grep -c merge /dev/null && echo 'gh pr merge 5' || :", NONE),
    ("if", "if git status; then gh pr merge 5; fi", W5),
    ("if", "if false; then gh pr merge 5; else echo 'gh pr merge 7'; fi", W5),
    ("if", "if ls; then echo hi; elif true; then gh pr merge 7; fi", ("merge gh_pr_merge acme/widgets#7",)),
    ("if", 'if [ -e /nope ]\nthen echo "gh pr merge 5"\nelse gh pr merge 7 -R acme/other\nfi',
     ("merge gh_pr_merge acme/other#7",)),
    ("case", "case 5 in 5) gh pr merge 5;; 7) gh pr merge 7;; esac", W5),  # the subject decides the arm
    ("case", "case go in g*) git push origin HEAD:main;; *) echo 'git push origin HEAD:main';; esac", PUSH),
    ("case", "v=7; case $v in 5) ls;; *) gh pr merge $v;; esac", ("merge gh_pr_merge acme/widgets#7",)),
    # an extglob pattern: the fast reader hands the text to tree-sitter; the arm is not decided
    ("case", 'case 7 in @(5|7)) gh pr merge 7;; *) echo "gh pr merge 9";; esac',
     ("merge gh_pr_merge acme/widgets#7", "undetermined")),
    ("loop", "for v in 5 7; do gh pr merge $v; done",
     ("merge gh_pr_merge acme/widgets#5", "merge gh_pr_merge acme/widgets#7")),
    ("loop", 'for v in 5; do echo "gh pr merge $v"; done', NONE),
    ("loop", "while false; do gh pr merge 5; done", W5),
    ("loop", "until true; do gh pr merge 5; done", W5),
    ("loop", "printf '5\\n7\\n' | while read v; do gh pr merge $v; done", UNKNOWN),  # what `read` reads
    ("loop", "for ((i = 0; i < 2; i++)); do ls; done; gh pr merge 5", W5),
    ("subshell", "( cd sub && gh pr merge 5 )", W5),
    ("subshell", "( v=7 ); v=${v:-5}; gh pr merge $v", UNKNOWN),  # the subshell's v is gone: the environment's
    ("subshell", "( echo 'gh pr merge 5' ) | cat", NONE),
    ("subshell", "( echo gh pr merge 5 ) | bash", W5),
    ("group", "{ echo hi; gh pr merge 5; } >/dev/null", W5),
    ("group", "v=5; { v=7; }; gh pr merge $v", ("merge gh_pr_merge acme/widgets#7",)),  # a group is no subshell
    ("substitution", "v=$(echo 7); gh pr merge $v", ("merge gh_pr_merge acme/widgets#7",)),
    ("substitution", 'echo "$(gh pr merge 5)"', W5),
    ("substitution", "echo '$(gh pr merge 5)'", NONE),
    ("substitution", 'echo "\\$(gh pr merge 5)"', NONE),
    ("substitution", "gh pr merge $(echo 7) -R acme/other", ("merge gh_pr_merge acme/other#7",)),
    ("substitution", 'v=`echo 5`; gh pr merge "$v"', W5),
    ("here-document", "cat <<EOF\ngh pr merge 5\nEOF", NONE),
    ("here-document", "bash <<EOF\ngh pr merge 5\nEOF", W5),
    ("here-document", "v=7; bash <<EOF\ngh pr merge $v\nEOF", ("merge gh_pr_merge acme/widgets#7",)),
    ("here-document", "cat <<EOF | bash\ngh pr merge 5 -R acme/other\nEOF", ("merge gh_pr_merge acme/other#5",)),
    ("here-document", "cat <<-EOF >/dev/null\n\tgh pr merge 5\n\tEOF", NONE),
    ("here-document", "gh pr comment 5 -F - <<EOF\n/unhold\nEOF", ("lift:comment gh_pr_comment acme/widgets#5",)),
    ("nested shell", "bash -c 'gh pr merge 5'", W5),
    ("nested shell", "sh -c \"echo 'gh pr merge 5'\"", NONE),
    ("nested shell", "eval 'gh pr merge 5 -R acme/other'", ("merge gh_pr_merge acme/other#5",)),
    ("quoting", '"gh" pr merge 5', W5),
    ("quoting", "g\\h pr merge 5", W5),
    ("quoting", "gh 'pr' \"merge\" 5", W5),
    ("quoting", "gh pr $'merge' 5", W5),
    ("quoting", "echo gh\\ pr\\ merge\\ 5", NONE),
    ("quoting", "git commit --dry-run -m 'gh pr merge 5'", NONE),
    ("quoting", ": gh pr merge 5", NONE),
    ("redirection", "gh pr merge >/dev/null 5 -R acme/other", ("merge gh_pr_merge acme/other#5",)),
    ("redirection", ">/dev/null gh pr merge 5", W5),
    ("redirection", "echo </dev/null gh pr merge 5 | bash", W5),
    ("redirection", "gh pr merge 5 <<EOF -R acme/other\nmerged\nEOF", ("merge gh_pr_merge acme/other#5",)),
    # a function makes the guard read the whole text with tree-sitter: these were its misreadings
    ("function", "f() { :; }; gh pr merge 5 2>/dev/null -R acme/other", ("merge gh_pr_merge acme/other#5",)),
    ("function", "f() { :; }\ntrue\n\\gh pr merge 5", (UNREAD, "undetermined")),
    ("function", "f() { gh pr merge \"$1\"; }; f 5", W5),
    ("tamper", "ls && gh api -X DELETE repos/acme/widgets/branches/main/protection",
     ("tamper gh_api_rest acme/widgets Delete branch protection (branch main)",)),
    ("tamper", "echo hi | gh api -X POST repos/acme/widgets/statuses/abc -f state=success -f context=merge-hold",
     ("tamper gh_api_rest acme/widgets Forge the merge-hold status",)),
]
"""``(structure, program, what explain reports)``: one line per merge, lift or tamper, and
``undetermined`` when the detection is."""


def told(detection: Detection) -> tuple[str, ...]:
    """``hook explain``'s JSON (hook/tools/explain.py `render`), one sorted line per entry."""
    shown = render(detection)
    lines = {f"merge {m['via']} {m['repo']}" + (f"#{m['pr']}" if m["branch"] is None else f"@{m['branch']}")
             for m in shown["merges"]}
    lines |= {f"lift:{m['lift']} {m['via']} {m['repo']}#{m['pr']}" for m in shown["lifts"]}
    lines |= {f"tamper {m['via']} {m['repo']} {m['act']}" for m in shown["tampers"]}
    return tuple(sorted(lines)) + (("undetermined",) if shown["undetermined"] else ())


@pytest.fixture(scope="module")
def readers(tmp_path_factory: pytest.TempPathFactory) -> Readers:
    return Readers(Sandbox(Path(tmp_path_factory.mktemp("frontend-rows"))))


@pytest.mark.parametrize(("structure", "program", "expected"), ROWS, ids=[f"{s}-{k}" for k, (s, _, _) in
                                                                          enumerate(ROWS)])
def test_both_front_ends_tell_what_the_row_says(readers: Readers, structure: str, program: str,
                                                 expected: tuple[str, ...]) -> None:
    assert_valid_bash(program)
    for tree_sitter_only in (False, True):
        with readers.forced(tree_sitter_only):
            detection = detect("Bash", {"command": program}, cwd=readers.cwd, env=readers.env)
        assert readers.incomplete == (UNREAD in expected), f"tree-sitter could read {program!r}: {readers.incomplete}"
        reader = "tree-sitter alone" if tree_sitter_only else "the guard's readers"
        assert told(detection) == expected, f"{structure}, {reader}:\n{program}"
