"""gunicorn's settings for the web app: the one spelling of the production web command, used by the image's
default command, compose and the Kubernetes manifests alike:

    gunicorn --config python:merge_hold.gunicorn_conf "app:create_app()"

Command-line options win over these (``--bind 127.0.0.1:9000``, ``--workers 4``), and so does
``WEB_CONCURRENCY`` for the worker count. A config module is values at module level by gunicorn's design;
nothing here reads merge-hold's settings (the app factory does, in each worker).

More than one worker needs ``MERGE_HOLD_SECRET_KEY``: each worker process builds its own app, and without
a shared key each would sign dashboard sessions with its own random one, so a sign-in made on one worker
would be refused by the next. `on_starting` refuses that start, saying so (exit 78, EX_CONFIG).
"""

from __future__ import annotations

import os
import sys
from typing import Any

bind = ["0.0.0.0:8000"]
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
"""2 processes x 4 threads: design §7's acknowledgement budget is measured this way."""
threads = 4
worker_class = "gthread"
timeout = 30
graceful_timeout = 20
"""SIGTERM: requests in flight get 20 s (the pods' preStop delay and grace period are sized around it)."""
keepalive = 5
# The workers' heartbeat files: /dev/shm is a tmpfs in Docker and Kubernetes, writable with a read-only
# root filesystem; gunicorn's default (the temp dir) is on disk, or not writable at all.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
accesslog = "-"
errorlog = "-"
proc_name = "merge-hold-web"
# gunicorn 27 opens a control socket under $HOME by default: the image has no writable home, and nothing
# here uses `gunicornc`.
control_socket_disable = True


def on_starting(server: Any) -> None:
    from foundation.logs import configure

    # The app's own lines (the factory, jobs it queues) in merge-hold's log format, inherited by the workers,
    # and urllib3's URL-bearing DEBUG lines held back (foundation/logs.py). gunicorn's lines keep its format.
    try:
        configure(os.environ.get("MERGE_HOLD_LOG_LEVEL", "INFO").upper())
    except ValueError:
        configure("INFO")  # the app's settings name the bad value when the factory runs
    if server.cfg.workers > 1 and not os.environ.get("MERGE_HOLD_SECRET_KEY"):
        server.log.error(
            "MERGE_HOLD_SECRET_KEY is not set: with %d gunicorn workers each would sign dashboard sessions with "
            "its own random key and refuse the others' sign-ins. Set it (e.g. `openssl rand -hex 32`, the same "
            "value on every replica), or run one worker (--workers 1).", server.cfg.workers)
        sys.exit(78)  # EX_CONFIG
