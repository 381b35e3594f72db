"""`make bench` (``python -m bench``): run every ``bench/bench_*.py`` and print one table.

Each module exposes ``run() -> list[tuple[str, float, float, str]]``: rows of (name, measured, budget,
note), where measured and budget share a unit (usually a ratio to a baseline the module measured in the
same run, see `bench.timing`) and a row passes when measured <= budget. A module that fails to run is
reported as a failed row rather than stopping the others. ``python -m bench hook`` runs only
``bench_hook*`` modules. Exit status 1 if any row is over budget or any module failed.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

from bench.timing import Row


def discover(selector: str | None = None) -> list[str]:
    here = Path(__file__).resolve().parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    return [f"bench.{n}" for n in names if selector is None or n.startswith(f"bench_{selector}")]


def run_module(name: str) -> list[Row]:
    try:
        rows: list[Row] = importlib.import_module(name).run()
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        return [(f"{name} (failed)", float("inf"), 0.0, f"{type(exc).__name__}: {exc}")]
    return rows


def render(rows: list[tuple[str, Row]]) -> str:
    header = ("module", "benchmark", "measured", "budget", "", "note")
    table = [header] + [
        (module.removeprefix("bench."), name, f"{measured:.2f}", f"{budget:.2f}",
         "ok" if measured <= budget else "OVER", note)
        for module, (name, measured, budget, note) in rows
    ]
    widths = [max(len(r[i]) for r in table) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r[:-1])) + "  " + r[-1] for r in table
    )


def main(argv: list[str]) -> int:
    selector = argv[0] if argv else None
    started = time.monotonic()
    rows: list[tuple[str, Row]] = []
    for module in discover(selector):
        print(f"running {module} ...", file=sys.stderr, flush=True)
        rows += [(module, row) for row in run_module(module)]
    print(render(rows))
    print(f"\n{len(rows)} rows in {time.monotonic() - started:.0f} s")
    return 0 if rows and all(measured <= budget for _, (_, measured, budget, _) in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
