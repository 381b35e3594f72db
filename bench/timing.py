"""Timing helpers for the benchmarks: medians of many runs, baseline and candidates alternating.

Alternating runs (baseline, candidate A, candidate B, baseline, ...) expose every command to the same
machine load, which on a shared machine drifts by more than the differences measured; the median
discards the stragglers. Budgets are ratios to a baseline measured in the same run (design §7).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Row = tuple[str, float, float, str]
"""One benchmark result: (name, measured, budget, note). It passes when measured <= budget."""


@dataclass(frozen=True)
class Command:
    argv: Sequence[str]
    stdin: bytes = b""
    expect_exit: int | None = 0
    """The exit status a correct run has (None: any); a run that differs aborts the benchmark."""


def interpreter_floor() -> Command:
    """``python3 -I -c pass`` with this interpreter: the unit of the hook's budgets (design §7).

    The venv's interpreter, not a ``python3`` found on PATH (possibly a version manager's shell shim),
    so that the floor and the guard start the same binary with the same site configuration.
    """
    return Command([sys.executable, "-I", "-c", "pass"])


def run_once(command: Command) -> float:
    started = time.perf_counter()
    done = subprocess.run(list(command.argv), input=command.stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if command.expect_exit is not None and done.returncode != command.expect_exit:
        raise RuntimeError(f"{command.argv[:3]}... exited {done.returncode}, expected {command.expect_exit}: "
                           f"{done.stderr.decode(errors='replace')[:300]}")
    return elapsed


def alternating_medians(commands: Mapping[str, Command], *, runs: int = 60, warmup: int = 3) -> dict[str, float]:
    """Median wall time in milliseconds of each command, the commands run in turn ``runs`` times."""
    for _ in range(warmup):
        for command in commands.values():
            run_once(command)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(run_once(command))
    return {name: statistics.median(times) * 1000 for name, times in samples.items()}
