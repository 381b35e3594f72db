"""`merge-hold serve`: the web app behind gunicorn (Werkzeug's server only with ``--debug``).

Settings are validated before any worker starts, so a bad variable stops the command with a message
naming it instead of a crash loop of workers.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import secrets
import sys
from typing import TYPE_CHECKING, Any

from foundation.cliargs import ArgumentParser

if TYPE_CHECKING:
    from flask import Flask

    from foundation.settings import Settings

log = logging.getLogger("merge_hold.serve")


def loopback_host(host: str) -> bool:
    """Whether a bind address is reachable from this machine only (`merge-hold dev`'s demo needs one)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="merge-hold serve",
        description="Run the web app: GitHub webhooks, chat commands, JSON API, dashboard, health and metrics.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2,
                        help="gunicorn worker processes (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=4,
                        help="threads per worker; slow clients then do not block a worker (default: %(default)s)")
    parser.add_argument("--timeout", type=int, default=30,
                        help="seconds before a silent worker is restarted (default: %(default)s)")
    parser.add_argument("--access-log", action="store_true", help="log every request to stderr")
    parser.add_argument("--debug", action="store_true",
                        help="Werkzeug's development server with the debugger; never in production")
    return parser


def gunicorn_options(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    options: dict[str, Any] = {
        "bind": f"[{args.host}]:{args.port}" if ":" in args.host else f"{args.host}:{args.port}",
        "workers": args.workers,
        "threads": args.threads,
        "worker_class": "gthread" if args.threads > 1 else "sync",
        "timeout": args.timeout,
        "graceful_timeout": 20,
        "loglevel": settings.log_level.lower(),
        "errorlog": "-",
        "proc_name": "merge-hold",
        # gunicorn 27 opens a control socket at a fixed path under $HOME by default: two servers on one
        # machine would take each other's. Nothing here uses it.
        "control_socket_disable": True,
    }
    if args.access_log:
        options["accesslog"] = "-"
        # gunicorn's default line shows the request line with its query string, and a calendar feed's URL
        # carries its token (`/calendar/acme.ics?token=…`): log the path without the query.
        options["access_log_format"] = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'
    return options


def run_gunicorn(settings: Settings, options: dict[str, Any]) -> None:
    from gunicorn.app.base import BaseApplication

    class Server(BaseApplication):  # type: ignore[misc]  # gunicorn ships no type hints
        """gunicorn configured from a dict; each worker builds its own app (own Redis connections)."""

        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Flask:
            from app import create_app

            return create_app(settings)

    Server().run()


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from foundation.settings import SettingsError, from_env, require

    try:
        settings = from_env()
        require(settings, "REDIS_URL")
    except SettingsError as exc:
        print(f"merge-hold serve: {exc}", file=sys.stderr)
        return 78  # EX_CONFIG
    if settings.demo_signin and not loopback_host(args.host):
        print(f"merge-hold serve: MERGE_HOLD_DEMO_SIGNIN: the demo sign-in is served on loopback only, "
              f"not on --host {args.host}", file=sys.stderr)
        return 78
    level = logging.getLevelName(settings.log_level.upper())
    if not isinstance(level, int):
        print(f"merge-hold serve: MERGE_HOLD_LOG_LEVEL: unknown level {settings.log_level!r}", file=sys.stderr)
        return 78
    from foundation.logs import configure

    configure(level)
    if not settings.secret_key:
        # One key for every worker, or a login made on one worker would be refused by the next.
        log.warning("MERGE_HOLD_SECRET_KEY is not set: dashboard sessions last until this server stops")
        settings = dataclasses.replace(settings, secret_key=secrets.token_hex(32))
    if not settings.github_webhook_secret:
        log.warning("GITHUB_WEBHOOK_SECRET is not set: every webhook delivery will be refused (503)")
    if not settings.api_tokens_file:
        log.warning("MERGE_HOLD_API_TOKENS_FILE is not set: the API and the dashboard refuse everyone")
    if args.debug:
        from app import create_app

        create_app(settings).run(host=args.host, port=args.port, debug=True, use_reloader=False)
        return 0
    if args.workers < 1 or args.threads < 1:
        print("merge-hold serve: --workers and --threads must be at least 1", file=sys.stderr)
        return 64
    run_gunicorn(settings, gunicorn_options(args, settings))
    return 0
