"""`merge-hold simulate`: post signed sample webhooks to a running server and show what came of them.

The default scenario is the one a newcomer tries first: a ``pull_request`` ``opened`` delivery (so the
server knows the PR's head commit), then an ``issue_comment`` with ``/hold waiting for DB migration`` by
``alice``. When it can read the result (Redis of `merge-hold dev`, ``REDIS_URL``, or the API with the
dev token) it waits for the worker and prints the ``merge-hold`` status the PR ended with.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from foundation.cliargs import ArgumentParser
from merge_hold import samples
from merge_hold.dev import data_dir, read_state

DEFAULT_URL = "http://127.0.0.1:8000"
Reader = Callable[[str, int], "Result | None"]


class Result:
    """The PR's verdict record and, when known, the status last posted (or recorded in dry run)."""

    def __init__(self, verdict: dict[str, Any], posted: dict[str, Any] | None, dry_run: bool) -> None:
        self.verdict = verdict
        self.posted = posted
        self.dry_run = dry_run

    def holders(self) -> set[str]:
        return {str(h.get("holder", "")).lower() for h in self.verdict.get("holds", [])
                if h.get("source") == "comment"}

    @property
    def status(self) -> tuple[str, str]:
        source = self.posted if self.posted is not None else self.verdict
        return str(source.get("state")), str(source.get("description"))

    @property
    def settled(self) -> bool:
        """The posted status says what the verdict says (the worker posts right after recording it)."""
        return self.posted is None or self.status == (self.verdict.get("state"), self.verdict.get("description"))


def parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="merge-hold simulate",
        description="Post signed sample GitHub webhooks to a running merge-hold (by default the one "
        "`merge-hold dev` runs) and print the resulting `merge-hold` status. The secret is "
        "GITHUB_WEBHOOK_SECRET or the one `merge-hold dev` keeps in its data folder. `simulate chat "
        "'/hold acme/widgets why'` sends a Slack slash command instead, signed with SLACK_SIGNING_SECRET or "
        "the demo workspace's secret `merge-hold dev` keeps, and prints the reply to its response_url.",
    )
    parser.add_argument("action", nargs="?", choices=("hold", "unhold", "chat"), default="hold",
                        help="hold (default): comment `/hold REASON`; unhold: comment `/unhold`; chat: send "
                        "COMMAND as a Slack slash command (merge-hold dev's demo workspace)")
    parser.add_argument("command", nargs="?", metavar="COMMAND",
                        help="with chat: the slash command, e.g. '/hold acme/widgets release freeze'")
    parser.add_argument("--url", help=f"server base URL (default: the running dev server, else {DEFAULT_URL})")
    parser.add_argument("--repo", default="acme/widgets", help="owner/repo (default: %(default)s)")
    parser.add_argument("--pr", type=int, default=42, help="pull request number (default: %(default)s)")
    parser.add_argument("--user", default="alice", help="who comments (default: %(default)s)")
    parser.add_argument("--association", default="MEMBER",
                        help="the commenter's author_association (default: %(default)s)")
    parser.add_argument("--reason", default="waiting for DB migration", help="hold reason (default: %(default)s)")
    parser.add_argument("--no-open", action="store_true",
                        help="skip the `pull_request opened` delivery (the server already knows the PR)")
    parser.add_argument("--data-dir", help="merge-hold dev's folder (default: MERGE_HOLD_DATA_DIR or .merge-hold)")
    parser.add_argument("--wait", type=float, default=10.0,
                        help="seconds to wait for the resulting status (0: do not wait; default: %(default)s)")
    return parser


def _secret(folder: Path) -> str | None:
    given = os.environ.get("GITHUB_WEBHOOK_SECRET")
    if given:
        return given
    try:
        return (folder / "webhook-secret").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def scenario(args: argparse.Namespace, now: datetime) -> list[samples.Delivery]:
    deliveries = []
    if not args.no_open:
        deliveries.append(samples.delivery("pull_request", samples.pull_request_event(
            args.repo, args.pr, author="octocat", at=now)))
    body = f"/hold {args.reason}".rstrip() if args.action == "hold" else "/unhold"
    # Dated now, as GitHub dates a comment: to the second. Comment ids grow with time on GitHub, and the
    # workers order one second's commands by id (design §4), so runs pasted in one go apply in the order
    # they ran — never dated ahead, where a later run's command would arrive "before" an earlier one's.
    comment_id = int(now.timestamp() * 1000)
    deliveries.append(samples.delivery("issue_comment", samples.issue_comment_event(
        args.repo, args.pr, body=body, commenter=args.user, association=args.association, at=now,
        comment_id=comment_id)))
    return deliveries


def post(url: str, delivery: samples.Delivery, secret: str) -> tuple[int, str, str]:
    """POST one delivery; returns (status, reason, body). Raises OSError when nothing answers."""
    parts = urlsplit(url)
    conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_type(parts.hostname or "127.0.0.1", parts.port, timeout=15)
    try:
        conn.request("POST", parts.path.rstrip("/") + "/webhooks/github", body=delivery.body,
                     headers=delivery.headers(secret))
        answer = conn.getresponse()
        return answer.status, answer.reason, answer.read().decode("utf-8", errors="replace").strip()
    finally:
        conn.close()


def _describe(delivery: samples.Delivery) -> str:
    payload = json.loads(delivery.body)
    repo, action = payload["repository"]["full_name"], payload.get("action")
    if delivery.event == "issue_comment":
        comment = payload["comment"]
        return (f"issue_comment ({action}) on {repo}#{payload['issue']['number']} by @{comment['user']['login']}: "
                f"{comment['body']!r}")
    pull = payload["pull_request"]
    return f"pull_request ({action}) {repo}#{pull['number']}, head {pull['head']['sha'][:7]}"


def redis_reader(url: str) -> Reader:
    from core import keys
    from foundation.redis_conn import connect
    from state import verdicts

    client = connect(url, "web")
    client.ping()

    def read(repo: str, number: int) -> Result | None:
        verdict = verdicts.load(client, repo, number)
        if verdict is None:
            return None
        posted_raw = client.get(keys.posted(repo, number))
        posted = json.loads(posted_raw) if posted_raw else None
        if posted is not None and posted.get("sha") != verdict.get("head_sha"):
            posted = None
        dry = False
        for entry in client.lrange(keys.DRY_RUN_STATUSES, 0, 49):
            item = json.loads(entry)
            if item.get("repo") == repo and item.get("sha") == verdict.get("head_sha"):
                dry = True
                break
        return Result(verdict, posted, dry)

    return read


def api_reader(url: str, token: str) -> Reader:
    def read(repo: str, number: int) -> Result | None:
        request = urllib.request.Request(f"{url}/api/v1/verdicts/{repo}/{number}",
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:
                return Result(json.loads(answer.read()), None, False)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise

    return read


def _reader(folder: Path, url: str) -> tuple[Reader | None, str]:
    """How to see the outcome: Redis directly when reachable, else the API with the dev token."""
    candidates = [os.environ.get("REDIS_URL"), read_state(folder).get("redis_url")]
    for redis_url in filter(None, candidates):
        try:
            return redis_reader(str(redis_url)), "redis"
        except Exception:  # unreachable or refused: try the next way
            continue
    try:
        token = (folder / "dev-token").read_text(encoding="utf-8").strip()
    except OSError:
        token = ""
    if token:
        return api_reader(url, token), "api"
    return None, ""


def wait_for(read: Reader, repo: str, number: int, wanted: Callable[[Result], bool], timeout: float) -> Result | None:
    """Poll until the verdict is what the scenario asked for and its status is posted (or time is up);
    returns the last result seen."""
    deadline = time.monotonic() + timeout
    last: Result | None = None
    while True:
        last = read(repo, number)
        if last is not None and wanted(last) and last.settled:
            return last
        if time.monotonic() >= deadline:
            return last
        time.sleep(0.1)


def main(argv: list[str]) -> int:
    args = parser().parse_intermixed_args(argv)
    if args.repo.count("/") != 1 or args.pr < 1:
        print("merge-hold simulate: --repo must be owner/repo and --pr a positive number", file=sys.stderr)
        return 64
    folder = data_dir(args.data_dir)
    url = (args.url or read_state(folder).get("url") or DEFAULT_URL).rstrip("/")
    if (args.action == "chat") != (args.command is not None):
        print("merge-hold simulate: COMMAND goes with `chat` only: simulate chat '/hold acme/widgets why'",
              file=sys.stderr)
        return 64
    if args.action == "chat":
        from merge_hold.simulate_chat import run

        return run(url, folder, args.command, user=args.user, wait=args.wait)
    secret = _secret(folder)
    if secret is None:
        print(f"merge-hold simulate: no webhook secret: set GITHUB_WEBHOOK_SECRET, or start `merge-hold dev` "
              f"(it keeps one in {folder / 'webhook-secret'})", file=sys.stderr)
        return 78  # EX_CONFIG
    for delivery in scenario(args, datetime.now(UTC)):
        try:
            status, reason, body = post(url, delivery, secret)
        except OSError as exc:
            print(f"merge-hold simulate: cannot reach {url} ({exc}); is `merge-hold dev` running?", file=sys.stderr)
            return 69  # EX_UNAVAILABLE
        print(f"-> {_describe(delivery)}\n   {status} {reason} {body}")
        if not 200 <= status < 300:
            print("merge-hold simulate: the server refused the delivery; stopping", file=sys.stderr)
            return 1
    if args.wait <= 0:
        return 0
    return _report(args, folder, url)


def _report(args: argparse.Namespace, folder: Path, url: str) -> int:
    read, how = _reader(folder, url)
    if read is None:
        print(f"(cannot read the outcome here: no REDIS_URL and no dev token in {folder}; see {url}/dry-run)")
        return 0
    user: str = args.user.lower()
    placing: bool = args.action == "hold"

    def wanted(result: Result) -> bool:
        return (user in result.holders()) == placing

    try:
        result = wait_for(read, args.repo, args.pr, wanted, args.wait)
    except Exception as exc:  # the outcome is a convenience; the deliveries were accepted
        print(f"(could not read the outcome through {how}: {exc})")
        return 0
    if result is None or not wanted(result):
        seen = f"it says {result.status[0]}: {result.status[1]}" if result else "no verdict yet"
        print(f"merge-hold simulate: no matching verdict within {args.wait:g} s ({seen}); "
              f"is `merge-hold worker` running?", file=sys.stderr)
        return 1
    state, description = result.status
    where = f"{args.repo}@{str(result.verdict.get('head_sha'))[:7]}"
    note = " (dry run: recorded, not posted to GitHub)" if result.dry_run else ""
    print(f"merge-hold: {state} — {description}\n   on {where}{note}; dashboard: {url}/{args.repo}/pull/{args.pr}")
    return 0
