"""The agent guard against its start-up budgets (design §7), as Claude Code runs it: a fresh process per
tool call, the PreToolUse JSON on stdin.

- a non-merge command: median <= 1.1 x ``python -I -c pass``; measured for a command the detection
  prefilter rejects, and for a look-alike it passes (detection then reads the command):
  ``git commit -m "gh pr merge 5 once CI is green"``, which is no merge in any directory;
- a merge whose verdict comes from Redis (held, so the full path: detection, one Redis round trip, the
  record appended, the message written): median <= 2.0 x;
- ``git push -u origin feature/login`` in a checkout of a managed repository, against the *merge*
  budget (2.0 x), because it is a merge candidate that only the one read can settle: a PR's base can
  be any branch (a stacked PR's base is its parent's branch), and a push that writes a held PR's base
  with a commit containing its head lands it (design §6). No local fact rules that out without the held
  PRs' bases and heads: not the branch's name (``feature/*`` is a base as often as ``main``), not that
  the remote-tracking ref matches (it can be stale). So the guard reads the held heads once (here no
  held PR has that base: allowed, and no ``git merge-base`` runs). The same push outside any git
  repository, or to a remote that is not GitHub, is decided without a read; it was this bench's
  "non-merge look-alike" row before (1.26-1.37 x on a quiet machine: the detection reader's imports,
  as for every look-alike the prefilter passes, plus the git readers' ≈ 0.1 x), and is kept for
  information.

- the SessionStart hook (`hook.session`) in a checkout of a managed repository with a held PR and a frozen
  branch (one read: held heads and the branch freezes record, the context written): median <= 1.5 x.

All with the launcher `hook settings` emits (`hook.tools.claude_settings.fast_guard_command`). The console
script ``merge-hold hook-guard`` is measured too, for information: it is the reason the settings use
the fast launcher. Redis: ``REDIS_URL`` if set (keys of a throwaway repo are removed afterwards), else a
throwaway redis-server. ``BENCH_RUNS`` overrides the number of alternating runs (default 60).
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from bench.timing import Command, Row, alternating_medians, interpreter_floor

REPO = "merge-hold-bench/widgets"
NON_MERGE_BUDGET = 1.1
MERGE_BUDGET = 2.0
SESSION_BUDGET = 1.5


def _redis_url(workdir: Path) -> AbstractContextManager[str]:
    from merge_hold.redis_server import given_or_throwaway

    return given_or_throwaway(workdir, os.environ.get("REDIS_URL"))


def run() -> list[Row]:
    import redis

    from core import keys
    from hook.tools.claude_settings import fast_command
    from tests.hook_support import (
        freezes_record,
        git_checkout,
        guard_argv,
        hold,
        payload,
        record,
        store,
        store_freezes,
        write_spec,
    )

    runs = int(os.environ.get("BENCH_RUNS", "60"))
    with tempfile.TemporaryDirectory() as tmp, _redis_url(Path(tmp)) as url:
        client = redis.Redis.from_url(url)
        try:
            store(client, REPO, 5, record(REPO, 5, [hold("comment", "alice", "waiting for the migration",
                                                         repo=REPO)]))
            store_freezes(client, REPO, freezes_record(REPO, [hold("room", "carol", "release week", repo=REPO,
                                                                  scope=f"{REPO}@main")]))
            spec = write_spec(Path(tmp), url)
            cwd = str(Path(tmp))
            checkout = str(git_checkout(Path(tmp) / "checkout", f"https://github.com/{REPO}.git", "feature/login"))
            non_merge = json.dumps(payload("ls -la src && git status", cwd=cwd)).encode()
            # Passes the prefilter (it says "merge"), so detection reads it; a commit message.
            look_alike = json.dumps(payload('git commit -m "gh pr merge 5 once CI is green"', cwd=checkout)).encode()
            push = "git push -u origin feature/login"
            push_candidate = json.dumps(payload(push, cwd=checkout)).encode()  # one read (see above)
            push_no_repo = json.dumps(payload(push, cwd=cwd)).encode()  # no git repository: no read
            # `$` and a glob could spell a merge word, so the prefilter sends it to the full reader
            expansions = json.dumps(payload('for f in src/*.py; do wc -l "$f"; done', cwd=cwd)).encode()
            merge = json.dumps(payload(f"gh pr merge 5 --squash -R {REPO}", cwd=cwd)).encode()
            session = json.dumps({"session_id": "s", "transcript_path": "/t.jsonl", "cwd": checkout,
                                  "hook_event_name": "SessionStart", "source": "startup"}).encode()
            session_argv = [*shlex.split(fast_command("hook.session")), "--config", str(spec)]
            medians = alternating_medians({
                "floor": interpreter_floor(),
                "non_merge": Command(guard_argv(spec), non_merge, 0),
                "look_alike": Command(guard_argv(spec), look_alike, 0),
                "push_candidate": Command(guard_argv(spec), push_candidate, 0),
                "push_no_repo": Command(guard_argv(spec), push_no_repo, 0),
                "expansions": Command(guard_argv(spec), expansions, 0),
                "merge": Command(guard_argv(spec), merge, 2),
                "session_start": Command(session_argv, session, 0),
                "non_merge_console": Command(guard_argv(spec, console_script=True), non_merge, 0),
                "merge_console": Command(guard_argv(spec, console_script=True), merge, 2),
            }, runs=runs)
        finally:
            client.delete(keys.verdict(REPO, 5), keys.managed(REPO), keys.held_prs(REPO), keys.held_heads(REPO),
                          keys.branch_freezes(REPO))
            client.close()
    floor = medians["floor"]

    def ratio(name: str) -> float:
        return medians[name] / floor

    note = f"floor {floor:.1f} ms; median of {runs}"
    return [
        ("guard, non-merge command", ratio("non_merge"), NON_MERGE_BUDGET,
         f"{medians['non_merge']:.1f} ms; {note}"),
        ("guard, non-merge look-alike", ratio("look_alike"), NON_MERGE_BUDGET,
         f"{medians['look_alike']:.1f} ms; `git commit -m \"gh pr merge 5 …\"`: detection runs; {note}"),
        ("guard, git push of a branch (merge candidate, one read)", ratio("push_candidate"), MERGE_BUDGET,
         f"{medians['push_candidate']:.1f} ms; `{push}` in a managed checkout: held heads read; {note}"),
        ("guard, git push outside a repository (info)", ratio("push_no_repo"), float("inf"),
         f"{medians['push_no_repo']:.1f} ms; `{push}` where no .git is: decided without a read; {note}"),
        ("guard, non-merge with expansions", ratio("expansions"), NON_MERGE_BUDGET,
         f"{medians['expansions']:.1f} ms; a for loop over a glob with \"$f\": read in full; {note}"),
        ("guard, merge with a Redis verdict", ratio("merge"), MERGE_BUDGET,
         f"{medians['merge']:.1f} ms; held, exit 2, record written; {note}"),
        ("SessionStart hook, held PR and frozen branch told", ratio("session_start"), SESSION_BUDGET,
         f"{medians['session_start']:.1f} ms; one read, additionalContext written; {note}"),
        ("console script, non-merge (info)", ratio("non_merge_console"), float("inf"),
         f"{medians['non_merge_console']:.1f} ms; `merge-hold hook-guard`, not what settings emit"),
        ("console script, merge (info)", ratio("merge_console"), float("inf"),
         f"{medians['merge_console']:.1f} ms; `merge-hold hook-guard`"),
    ]
