"""`merge-hold dev`: everything on one machine — embedded Redis, the web app, one worker, dry-run GitHub.

What it keeps in the data folder (``MERGE_HOLD_DATA_DIR``, default ``.merge-hold/``), so that a restart
finds the same state, secret and login:

    redis/           the embedded Redis's append-only file (holds survive a restart)
    redis.port       the port it listens on, fixed at first start
    webhook-secret   used when GITHUB_WEBHOOK_SECRET is unset (0600)
    secret-key       signs dashboard sessions (0600)
    tokens           hashed API tokens (MERGE_HOLD_API_TOKENS_FILE, unless set)
    dev-token        the dashboard login token in clear, for this machine only (0600)
    slack-signing-secret  the demo chat workspace's signing secret, for `simulate chat` (0600)
    hook/            the demo's agent guard: spec, token and a checkout of acme/widgets
                     (`merge_hold.dev_hook`; `merge-hold hook install --demo` registers it)
    dev.json         while running: URL, embedded Redis URL, dry run or not, process ids (no secrets);
                     `simulate`, `doctor`, `reconcile` and `token` find this instance through it

Web and worker run as `merge-hold serve` / `merge-hold worker` child processes, each in its own
session so that Ctrl-C reaches only this supervisor, which then stops them in order: worker and web
first, Redis last (no orphaned redis-server). A worker that exits is started again (a few times a
minute at most), like a deployment's restart policy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foundation.cliargs import ArgumentParser
from merge_hold.supervise import Child, alive, cmdline, terminate_pid

if TYPE_CHECKING:
    from foundation.settings import Settings
    from merge_hold.redis_server import LocalRedis

READY_TIMEOUT = 60.0
WORKER_RESTARTS_PER_MINUTE = 5
"""Past this, a worker that keeps exiting is a fault to show, not to hide: dev stops."""
TOKEN_NAME = "dev"
APP_FILE = "github-app.json"
"""What a completed `/setup` leaves in the data folder (`app.setup`): an App exists, so no demo users."""


class DevError(Exception):
    """A start-up problem the user can fix; the message says how."""


def data_dir(given: str | None = None, environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(given or env.get("MERGE_HOLD_DATA_DIR") or ".merge-hold")


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def kept_secret(path: Path) -> str:
    """The secret stored at ``path``, created (random, 0600) on first use."""
    with contextlib.suppress(FileNotFoundError):
        value = path.read_text(encoding="utf-8").strip()
        if value:
            return value
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    _write_private(path, value + "\n")
    return value


def dev_token(tokens_file: Path, token_file: Path) -> str:
    """The dashboard login token: the kept one while its hash is still in the tokens file, else a new one."""
    from merge_hold.dev_hook import kept_token

    # this machine's operator: dashboard, API, hook records
    return kept_token(tokens_file, token_file, TOKEN_NAME, "admin")


def read_state(folder: Path) -> dict[str, Any]:
    """What a running `merge-hold dev` wrote to ``dev.json`` ({} when none)."""
    try:
        data = json.loads((folder / "dev.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def clear_leftovers(folder: Path) -> None:
    """Refuse a second supervisor on one folder; stop children a killed one left behind (checked by
    their command line, so a recycled pid is never signalled)."""
    state = read_state(folder)
    supervisor = state.get("pid")
    if isinstance(supervisor, int) and supervisor != os.getpid() and alive(supervisor) \
            and "merge" in cmdline(supervisor):
        raise DevError(f"another `merge-hold dev` (pid {supervisor}) is using {folder}; stop it first")
    for name, markers in (("worker", ("worker",)), ("web", ("serve", "gunicorn")), ("redis", ("redis-server",))):
        pid = (state.get("children") or {}).get(name)
        if isinstance(pid, int) and alive(pid) and any(m in cmdline(pid) for m in markers):
            print(f"merge-hold dev: stopping a left-over {name} process ({pid})", file=sys.stderr)
            terminate_pid(pid)
    (folder / "dev.json").unlink(missing_ok=True)


def _port_free(host: str, port: int) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def start_redis(folder: Path) -> LocalRedis:
    """The embedded Redis, on the port kept in ``redis.port`` (chosen once), persisting to ``redis/``."""
    from merge_hold.redis_server import LocalRedis, free_port

    port_file = folder / "redis.port"
    try:
        port = int(port_file.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        port = free_port()
        port_file.write_text(f"{port}\n", encoding="utf-8")
    if not _port_free("127.0.0.1", port):
        raise DevError(f"port {port} (kept in {port_file}) is in use by another program; "
                       f"delete that file to pick a new one")
    try:
        return LocalRedis(folder / "redis", port=port, persist=True, own_session=True).start()
    except RuntimeError as exc:
        raise DevError(f"embedded Redis did not start: {exc}") from None


def _wait_ready(url: str, children: list[Child], stop: threading.Event) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline and not stop.is_set():
        for child in children:
            if child.process.poll() is not None:
                raise DevError(f"`merge-hold {child.name}` exited with {child.process.returncode} during start-up")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        stop.wait(0.1)
    if not stop.is_set():
        raise DevError(f"the web app did not answer {url}/healthz within {READY_TIMEOUT:.0f} s")


def parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="merge-hold dev",
        description="Run merge-hold on this machine: an embedded Redis (unless REDIS_URL is set), the web "
        "app and one worker. Without GITHUB_APP_ID/GITHUB_PRIVATE_KEY it runs in dry-run mode: statuses are "
        "recorded and shown on the dashboard, nothing is posted to GitHub. A dry run on a loopback --host also "
        "offers a demo sign-in as pretend GitHub users (printed with their permissions) and a demo Slack "
        "workspace for `merge-hold simulate chat`. Try `merge-hold simulate` next.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address of the web app (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port of the web app (default: %(default)s)")
    parser.add_argument("--data-dir", help="where state is kept (default: MERGE_HOLD_DATA_DIR or .merge-hold)")
    return parser


def _base_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def demo_refusal(settings: Settings, folder: Path, host: str) -> str | None:
    """Why the demo sign-in is not offered (None: it is): only a dry run without an App, on loopback."""
    from merge_hold.serve import loopback_host

    if settings.has_app_credentials:
        return "a GitHub App is configured (GITHUB_APP_ID/GITHUB_PRIVATE_KEY): sign in with GitHub instead"
    if (folder / APP_FILE).exists():
        return f"a GitHub App was set up ({folder / APP_FILE}): sign in with GitHub instead"
    if not loopback_host(host):
        return f"--host {host} is reachable from other machines; the demo sign-in is for loopback only"
    return None


def child_env(base: Mapping[str, str], folder: Path, *, redis_url: str, url: str, dry_run: bool,
              demo: bool = False) -> dict[str, str]:
    """The children's environment: the user's, with what dev provides filled in where unset. With
    ``demo`` the demo sign-in is on, and a demo Slack workspace is bound for `simulate chat`."""
    env = dict(base)
    env["REDIS_URL"] = redis_url
    env["MERGE_HOLD_DATA_DIR"] = str(folder)
    provided: dict[str, Callable[[], str]] = {
        "GITHUB_WEBHOOK_SECRET": lambda: kept_secret(folder / "webhook-secret"),
        "MERGE_HOLD_SECRET_KEY": lambda: kept_secret(folder / "secret-key"),
        "MERGE_HOLD_API_TOKENS_FILE": lambda: str((folder / "tokens").resolve()),
        "MERGE_HOLD_PUBLIC_URL": lambda: url,
    }
    for name, value in provided.items():
        if not env.get(name):  # an empty variable counts as unset, as in the settings
            env[name] = value()
    if dry_run:
        env["MERGE_HOLD_DRY_RUN"] = "1"
    env["MERGE_HOLD_DEMO_SIGNIN"] = "1" if demo else "0"  # decided here, whatever the user's shell says
    if demo:
        from core.demo_users import DEMO_SLACK_ORGS, DEMO_SLACK_TEAM, DEMO_SLACK_USER

        chat: dict[str, Callable[[], str]] = {
            "SLACK_SIGNING_SECRET": lambda: kept_secret(folder / "slack-signing-secret"),
            "MERGE_HOLD_SLACK_TEAMS": lambda: f"{DEMO_SLACK_TEAM}={'+'.join(DEMO_SLACK_ORGS)}",
            "MERGE_HOLD_CHAT_ADMINS": lambda: f"slack:{DEMO_SLACK_TEAM}/{DEMO_SLACK_USER}",
        }
        for name, value in chat.items():
            if not env.get(name):
                env[name] = value()
    env["PYTHONUNBUFFERED"] = "1"  # lines reach the terminal as they are written
    return env


def github_note(settings: Settings) -> str:
    if settings.has_app_credentials and not settings.dry_run:
        return f"posting statuses to {settings.github_api_url} as App {settings.github_app_id}"
    why = "MERGE_HOLD_DRY_RUN is set" if settings.dry_run else "no GITHUB_APP_ID/GITHUB_PRIVATE_KEY"
    return f"DRY RUN ({why}): statuses are recorded and shown on the dashboard, nothing is posted to GitHub"


def self_command(argv0: str | None = None) -> str:
    """How to run `merge-hold` again from this shell: the bare name when it is on PATH (an activated
    venv), else the script's path as invoked (`make run` runs `.venv/bin/merge-hold`)."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name == "merge-hold":
        found = shutil.which("merge-hold")
        if found and Path(found).resolve() == script.resolve():
            return "merge-hold"
        return str(script)
    return f"{Path(sys.executable).name} -m merge_hold.cli"


def demo_note(url: str, me: str, extra: str, refusal: str | None) -> str:
    """The banner's demo lines: the pretend users and their permissions, or why they are not offered."""
    if refusal is not None:
        return f"  demo users  not offered: {refusal}\n"
    from core.demo_users import DEMO_SLACK_TEAM, table

    return (f"  demo users  {url}/login/demo — sign in as a pretend GitHub user (dry run, this machine only):\n"
            f"{table()}\n"
            f"  chat        {me} simulate chat{extra} '/hold acme/widgets release freeze'\n"
            f"              (signed like Slack for the demo workspace {DEMO_SLACK_TEAM}, bound to acme)\n")


def banner(url: str, token: str, redis_note: str, github: str, folder: Path, *, dry_run: bool = True,
           demo: bool = False, demo_refusal: str | None = None) -> str:
    """What dev prints once up; with ``demo`` (a dry run) the demo users, or ``demo_refusal``'s why not."""
    extra = "" if folder == Path(".merge-hold") else f" --data-dir {folder}"
    me = self_command()
    lines = demo_note(url, me, extra, demo_refusal) if dry_run and demo else ""
    return (
        f"\nmerge-hold dev is running\n"
        f"  dashboard   {url}/   (log in with token {token})\n"
        f"              sign in at {url}/login: paste the token"
        + (" (dry run: no GitHub App, so no GitHub sign-in)\n" if dry_run else "\n")
        + (f"  dry-run log {url}/dry-run\n" if dry_run else "") + lines +
        f"  webhooks    POST {url}/webhooks/github\n"
        f"  redis       {redis_note}\n"
        f"  github      {github}\n"
        f"  data        {folder.resolve()}\n\n"
        + (f"Send a sample event from another terminal:\n"
           f"  {me} simulate{extra}          # PR opened, then `/hold waiting for DB migration` by @alice\n"
           f"  {me} simulate unhold{extra}   # @alice lifts her hold\n"
           + (f"  {me} hook install --demo      # the agent guard against this demo: `gh pr merge 42` is blocked\n"
              if demo and demo_refusal is None and not extra else "")
           if dry_run else
           "GitHub delivers to the webhooks URL above once it is reachable from GitHub (e.g. via a tunnel).\n")
        + "Ctrl-C stops everything.\n\n"
    )


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    from foundation.settings import SettingsError, from_env

    try:
        settings = from_env()
    except SettingsError as exc:
        print(f"merge-hold dev: {exc}", file=sys.stderr)
        return 78  # EX_CONFIG
    folder = data_dir(args.data_dir)
    stop = threading.Event()

    def request_stop(signum: int, _frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _run(args, settings, folder, stop)
    except DevError as exc:
        print(f"merge-hold dev: {exc}", file=sys.stderr)
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(args: argparse.Namespace, settings: Settings, folder: Path, stop: threading.Event) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    clear_leftovers(folder)
    url = _base_url(args.host, args.port)
    if not _port_free(args.host, args.port):
        raise DevError(f"{args.host}:{args.port} is in use; pass --port to pick another")
    dry_run = settings.dry_run or not settings.has_app_credentials
    refusal = demo_refusal(settings, folder, args.host)
    redis = None if settings.redis_url else start_redis(folder)
    children: list[Child] = []
    out_lock = threading.Lock()
    try:
        redis_url = settings.redis_url or (redis.url if redis else "")
        env = child_env(os.environ, folder, redis_url=redis_url, url=url, dry_run=dry_run,
                        demo=dry_run and refusal is None)
        token = dev_token(Path(env["MERGE_HOLD_API_TOKENS_FILE"]), folder / "dev-token")
        if dry_run and refusal is None:  # the demo: a guard spec `merge-hold hook install --demo` registers
            from merge_hold.dev_hook import prepare

            prepare(folder, url, Path(env["MERGE_HOLD_API_TOKENS_FILE"]))
        children.append(Child("web", ["serve", "--host", args.host, "--port", str(args.port)], env,
                              sys.stdout, out_lock))
        children.append(Child("worker", ["worker"], env, sys.stdout, out_lock))
        pids = {c.name: c.process.pid for c in children}
        if redis is not None and redis.process is not None:
            pids["redis"] = redis.process.pid
        state = {"pid": os.getpid(), "url": url, "children": pids, "dry_run": dry_run}
        if redis is not None:
            state["redis_url"] = redis.url  # embedded: loopback, no password
        (folder / "dev.json").write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
        _wait_ready(url, children, stop)
        if stop.is_set():
            return 0
        redis_note = (f"{redis.url} (embedded, append-only file in {folder / 'redis'})" if redis
                      else "REDIS_URL (external)")
        with out_lock:
            sys.stdout.write(banner(url, token, redis_note, github_note(settings), folder, dry_run=dry_run,
                                    demo=True, demo_refusal=refusal))
            sys.stdout.flush()
        restarts: list[float] = []
        while not stop.wait(0.2):
            for index, child in enumerate(children):
                if child.process.poll() is None:
                    continue
                # A worker that exits (killed, out of memory) is started again, as a deployment's
                # restart policy would; its interrupted job is rescued by the new one's watchdog.
                restarts = [t for t in restarts if time.monotonic() - t < 60] + [time.monotonic()]
                if child.name == "worker" and len(restarts) <= WORKER_RESTARTS_PER_MINUTE:
                    print(f"merge-hold dev: `merge-hold worker` exited with {child.process.returncode}; "
                          f"starting it again", file=sys.stderr)
                    child.wait()
                    children[index] = Child("worker", ["worker"], env, sys.stdout, out_lock)
                    continue
                print(f"merge-hold dev: `merge-hold {child.name}` exited with {child.process.returncode}; "
                      f"stopping", file=sys.stderr)
                return 1
        return 0
    finally:
        print("merge-hold dev: stopping…", file=sys.stderr, flush=True)
        # Web and worker together, Redis last: a job in flight finishes while its Redis is still there.
        for child in children:
            child.terminate()
        for child in children:
            child.wait()
        if redis is not None:
            redis.stop()
        (folder / "dev.json").unlink(missing_ok=True)
        print("merge-hold dev: stopped", file=sys.stderr, flush=True)
