"""What the app factory reads of the server it starts in: how many gunicorn workers will share it.

Signed session cookies need one secret key for every process that may answer the next request. Without
``MERGE_HOLD_SECRET_KEY`` each process draws its own, so under several gunicorn workers a sign-in made on
one worker is refused by the others (the issue saw 7 logins of 10 fail with 400). `merge-hold serve`
draws one key for all its workers before they start; a bare ``gunicorn --workers 2 "app:create_app()"``
(the image's default command) cannot, so the factory refuses to start there (`create_app`).

gunicorn keeps its configuration — command line, ``GUNICORN_CMD_ARGS``, ``WEB_CONCURRENCY``, config file,
all merged — on the object that loads the app: the worker (or, with ``--preload``, the arbiter), whose
``cfg`` is a `gunicorn.config.Config`. It is read from the frames that called the factory, the only way
gunicorn offers to an app it loads by name.
"""

from __future__ import annotations

import inspect
import os


def gunicorn_workers() -> int | None:
    """The number of worker processes of the gunicorn serving this process; None outside gunicorn or
    when it cannot be told."""
    if not os.environ.get("SERVER_SOFTWARE", "").startswith("gunicorn"):  # set by gunicorn's arbiter
        return None
    try:
        from gunicorn.config import Config
    except ImportError:
        return None
    frame = inspect.currentframe()
    try:
        while frame is not None:
            cfg = getattr(frame.f_locals.get("self"), "cfg", None)
            if isinstance(cfg, Config):
                return int(cfg.workers)
            frame = frame.f_back
    finally:
        del frame  # no reference cycle through the frames
    return None
