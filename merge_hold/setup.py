"""`merge-hold setup [--print]`: the GitHub App manifest flow (`/setup`) on its own, before the service
runs — no Redis needed. It serves only `/setup` until the App exists, then exits.

Without `--print` the App's credentials go to the data folder (files mode 0600, `app.env` for
`set -a; . app.env`); with `--print` they are printed here for a secret store and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import threading

from foundation.cliargs import ArgumentParser


def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="merge-hold setup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: %(default)s)")
    parser.add_argument("--print", dest="print_only", action="store_true",
                        help="print the credentials (for a secret store) instead of writing them")
    return parser


def _print(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from flask import Flask
    from werkzeug.serving import make_server

    from app import setup
    from foundation.settings import SettingsError, from_env

    try:
        settings = from_env()
    except SettingsError as exc:
        print(f"merge-hold setup: {exc}", file=sys.stderr)
        return 78
    if setup.configured(settings):
        print("merge-hold setup: a GitHub App is already configured (environment or data folder)", file=sys.stderr)
        return 1
    finished = threading.Event()
    app = Flask("app")  # the `app` package's templates and static files
    states = setup.MemoryStates()
    setup.install(app, setup.SetupConfig(settings, states, print_only=args.print_only,
                                         out=_print, done=finished.set),
                  announce=False)
    server = make_server(args.host, args.port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    where = f"http://{args.host}:{server.server_port}/setup"
    if args.host not in setup.LOOPBACK and not settings.dry_run:
        where += f"?token={states.token()}"
    print(f"Open {where} in a browser to register the GitHub App "
          f"(GitHub sends you back to {settings.public_url}/setup).", file=sys.stderr, flush=True)
    try:
        finished.wait()
    except KeyboardInterrupt:
        return 130
    finally:
        # Let the browser receive the final page before the server goes away.
        threading.Timer(1.0, server.shutdown).start()
        thread.join(timeout=5)
    return 0
