"""What `merge-hold reconcile` shows while it works: progress per repository, then a summary.

On a terminal one line per repository is rewritten in place as its PRs are done ("[2/5] acme/widgets:
re-reading 17/40 PRs"), then left with the repo's outcome; anywhere else (a log, a pipe, CI) only that
outcome line is written per repository, so logs stay one line per repo. The summary counts every repo.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

REDRAW_SECONDS = 0.1
"""A terminal line is redrawn at most this often (the last step of a phase always is)."""
PHASES = {"rebuild": "re-reading from GitHub", "record": "recomputing"}


@dataclass
class Progress:
    out: TextIO
    repos: int
    tty: bool = False
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    _index: int = 0
    _repo: str = ""
    _drawn: float = 0.0
    _width: int = 0
    _started: float = 0.0
    totals: dict[str, int] = field(default_factory=lambda: {"repos": 0, "prs": 0, "posted": 0})

    def __post_init__(self) -> None:
        self._started = self._now()

    def _now(self) -> float:
        return self.clock()

    def start(self, repo: str) -> None:
        self._index += 1
        self._repo = repo
        self._drawn = 0.0
        if self.tty:
            self._draw(f"{self._prefix()}{repo}: starting…")

    def step(self, phase: str, done: int, total: int) -> None:
        """``done`` of ``total`` PRs of the current repo through ``phase`` (``rebuild`` or ``record``)."""
        if not self.tty:
            return
        now = self._now()
        if done < total and now - self._drawn < REDRAW_SECONDS:
            return
        self._drawn = now
        self._draw(f"{self._prefix()}{self._repo}: {PHASES.get(phase, phase)} {done}/{total} PRs")

    def finish(self, repo: str, prs: int, posted: int) -> None:
        self.totals["repos"] += 1
        self.totals["prs"] += prs
        self.totals["posted"] += posted
        line = f"{self._prefix() if self.tty else ''}{repo}: {_counted(prs, posted)}"
        if self.tty:
            self._draw(line)
            self.out.write("\n")
            self._width = 0
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def summary(self, *, rebuild: bool) -> str:
        seconds = max(0.0, self._now() - self._started)
        how = ", re-read from GitHub" if rebuild else ""
        repos = self.totals["repos"]
        line = (f"reconciled {repos} repo{'' if repos == 1 else 's'}{how}: "
                f"{_counted(self.totals['prs'], self.totals['posted'])} in {seconds:.1f} s")
        self.out.write(line + "\n")
        self.out.flush()
        return line

    def _prefix(self) -> str:
        return f"[{self._index}/{self.repos}] "

    def _draw(self, text: str) -> None:
        # Carriage return, the new text, and spaces over whatever the longer previous text left.
        pad = max(0, self._width - len(text))
        self.out.write("\r" + text + " " * pad)
        self.out.flush()
        self._width = len(text)


def _counted(prs: int, posted: int) -> str:
    """``1 open PR, 2 statuses posted``: singular where it is one."""
    return f"{prs} open PR{'' if prs == 1 else 's'}, {posted} status{'' if posted == 1 else 'es'} posted"
