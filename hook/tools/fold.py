"""`merge-hold hook fold --config SPEC`: send the session's guard records to the server's audit log.

Registered as Claude Code's SessionEnd hook. The record file is renamed aside before it is read, so a
guard still running in a parallel call appends to a fresh file instead of racing the fold; the renamed
file is deleted only after the server stored its events, and a failed fold leaves it for the next one.
Reading is tolerant (unreadable lines are skipped and counted), capped at `FOLD_CAP` events per fold
(the newest are kept: the API takes at most that many per request), and every string is scrubbed again
before it leaves the machine. The server stores each record as a ``hook.gate.fired`` event: evidence,
never consulted to judge.

Exit 0 with a one-line summary, or 1 with a one-line notice (records kept for the next fold).
"""

from __future__ import annotations

import contextlib
import os
import time

FOLD_CAP = 500
"""Events per fold; the API's `HOOK_EVENTS_MAX` is the same. A session that judged more merges than this
is unusual enough that its newest records are the ones worth keeping."""

FOLD_TIMEOUT_S = 10.0
"""The fold runs once, at session end: it may wait longer than the guard's per-call budget."""

PENDING = ".fold-"
"""Infix of record files renamed aside for folding: ``<record_file>.fold-<ns>``."""


def _pending_files(record_file: str) -> list[str]:
    directory = os.path.dirname(record_file) or "."
    stem = os.path.basename(record_file) + PENDING
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(os.path.join(directory, n) for n in names if n.startswith(stem))


def take_aside(record_file: str) -> list[str]:
    """Rename the live record file aside (if any) and return every file awaiting a fold, oldest first."""
    with contextlib.suppress(FileNotFoundError):
        os.replace(record_file, f"{record_file}{PENDING}{time.time_ns():020d}")
    return _pending_files(record_file)


def collect(paths: list[str]) -> tuple[list[dict[str, object]], int, int]:
    """(events to send, bad lines skipped, records dropped over the cap)."""
    from hook import evidence

    found: list[dict[str, object]] = []
    bad = 0
    for path in paths:
        with open(path, "rb") as handle:
            parsed, skipped = evidence.parse_lines(handle.read())
        found += parsed
        bad += skipped
    dropped = max(0, len(found) - FOLD_CAP)
    kept = found[dropped:]
    return [evidence.rescrub(r) for r in kept], bad, dropped


def fold(spec_path: str) -> tuple[int, str]:
    from hook.spec import SpecError, load_spec
    from hook.verdicts.sources import Unreachable, open_source

    try:
        spec = load_spec(spec_path)
    except SpecError as exc:
        return 1, f"merge-hold: fold skipped: {exc}"
    if not spec.record_file:
        return 0, "merge-hold: no record_file in the spec; nothing to fold"
    try:
        paths = take_aside(spec.record_file)
        events, bad, dropped = collect(paths)
    except OSError as exc:
        return 1, f"merge-hold: fold failed reading records: {exc}"
    notes = [f"{bad} unreadable line{'s' * (bad != 1)} skipped"] if bad else []
    if dropped:
        notes.append(f"{dropped} over the cap of {FOLD_CAP} dropped")
    stored = 0
    if events:
        try:
            source = open_source(spec, timeout_s=max(FOLD_TIMEOUT_S, spec.timeout_ms / 1000))
            try:
                stored = source.send_events(events)
            finally:
                source.close()
        except (Unreachable, SpecError) as exc:
            return 1, f"merge-hold: fold failed, records kept for the next fold: {exc}"
    for path in paths:
        os.unlink(path)
    tail = f" ({'; '.join(notes)})" if notes else ""
    return 0, f"merge-hold: folded {stored} hook record{'s' * (stored != 1)} into the audit log{tail}"


def main(argv: list[str]) -> int:
    from foundation.cliargs import ArgumentParser

    parser = ArgumentParser(prog="merge-hold hook fold", description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, metavar="SPEC", help="the guard's spec file")
    args = parser.parse_args(argv)
    try:
        code, line = fold(args.config)
    except Exception as exc:  # a SessionEnd hook reports, it does not crash
        code, line = 1, f"merge-hold: fold failed: {type(exc).__name__}: {exc}"
    print(" ".join(line.split()))
    return code
