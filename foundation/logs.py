"""Logging set-up for the long-running processes (`merge-hold serve`, `merge-hold worker`).

Secrets never reach a log line: settings keep them out of their repr, and the one library that would
write URLs we treat as credentials is held back: urllib3 logs every request's path at DEBUG, and a
chat command's ``response_url`` is a bearer credential for its channel.
"""

from __future__ import annotations

import logging

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
QUIET = ("urllib3",)
"""Loggers kept at INFO or above whatever MERGE_HOLD_LOG_LEVEL says."""


def configure(level: int | str) -> None:
    logging.basicConfig(level=level, format=FORMAT)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.INFO)
