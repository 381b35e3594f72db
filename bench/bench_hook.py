"""The agent guard against its start-up budgets (design §7), as Claude Code runs it: a fresh process per
tool call, the PreToolUse JSON on stdin.

- a non-merge command: median <= 1.3 x ``python -I -c pass``; measured for a command the detection
  prefilter rejects, and for a look-alike it passes (detection then reads the command);
- a merge whose verdict comes from Redis (held, so the full path: detection, one Redis round trip, the
  record appended, the message written): median <= 2.5 x.

Both with the launcher `hook settings` emits (`hook.tools.claude_settings.fast_guard_command`). The console
script ``merge-hold hook-guard`` is measured too, for information: it is the reason the settings use
the fast launcher. Redis: ``REDIS_URL`` if set (keys of a throwaway repo are removed afterwards), else a
throwaway redis-server. ``BENCH_RUNS`` overrides the number of alternating runs (default 60).
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from bench.timing import Command, Row, alternating_medians, interpreter_floor

REPO = "merge-hold-bench/widgets"
NON_MERGE_BUDGET = 1.3
MERGE_BUDGET = 2.5


def _redis_url(workdir: Path) -> AbstractContextManager[str]:
    from merge_hold.redis_server import given_or_throwaway

    return given_or_throwaway(workdir, os.environ.get("REDIS_URL"))


def run() -> list[Row]:
    import redis

    from core import keys
    from tests.hook_support import guard_argv, hold, payload, record, store, write_spec

    runs = int(os.environ.get("BENCH_RUNS", "60"))
    with tempfile.TemporaryDirectory() as tmp, _redis_url(Path(tmp)) as url:
        client = redis.Redis.from_url(url)
        try:
            store(client, REPO, 5, record(REPO, 5, [hold("comment", "alice", "waiting for the migration",
                                                         repo=REPO)]))
            spec = write_spec(Path(tmp), url)
            cwd = str(Path(tmp))
            non_merge = json.dumps(payload("ls -la src && git status", cwd=cwd)).encode()
            # Passes the prefilter (it says "push"), so detection reads it; a push of a feature branch.
            look_alike = json.dumps(payload("git push -u origin feature/login", cwd=cwd)).encode()
            # `$` and a glob could spell a merge word, so the prefilter sends it to the full reader
            expansions = json.dumps(payload('for f in src/*.py; do wc -l "$f"; done', cwd=cwd)).encode()
            merge = json.dumps(payload(f"gh pr merge 5 --squash -R {REPO}", cwd=cwd)).encode()
            medians = alternating_medians({
                "floor": interpreter_floor(),
                "non_merge": Command(guard_argv(spec), non_merge, 0),
                "look_alike": Command(guard_argv(spec), look_alike, 0),
                "expansions": Command(guard_argv(spec), expansions, 0),
                "merge": Command(guard_argv(spec), merge, 2),
                "non_merge_console": Command(guard_argv(spec, console_script=True), non_merge, 0),
                "merge_console": Command(guard_argv(spec, console_script=True), merge, 2),
            }, runs=runs)
        finally:
            client.delete(keys.verdict(REPO, 5), keys.managed(REPO), keys.held_prs(REPO))
            client.close()
    floor = medians["floor"]

    def ratio(name: str) -> float:
        return medians[name] / floor

    note = f"floor {floor:.1f} ms; median of {runs}"
    return [
        ("guard, non-merge command", ratio("non_merge"), NON_MERGE_BUDGET,
         f"{medians['non_merge']:.1f} ms; {note}"),
        ("guard, non-merge look-alike", ratio("look_alike"), NON_MERGE_BUDGET,
         f"{medians['look_alike']:.1f} ms; `git push -u origin feature/login`: detection runs; {note}"),
        ("guard, non-merge with expansions", ratio("expansions"), NON_MERGE_BUDGET,
         f"{medians['expansions']:.1f} ms; a for loop over a glob with \"$f\": read in full; {note}"),
        ("guard, merge with a Redis verdict", ratio("merge"), MERGE_BUDGET,
         f"{medians['merge']:.1f} ms; held, exit 2, record written; {note}"),
        ("console script, non-merge (info)", ratio("non_merge_console"), float("inf"),
         f"{medians['non_merge_console']:.1f} ms; `merge-hold hook-guard`, not what settings emit"),
        ("console script, merge (info)", ratio("merge_console"), float("inf"),
         f"{medians['merge_console']:.1f} ms; `merge-hold hook-guard`"),
    ]
