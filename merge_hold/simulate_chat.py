"""`merge-hold simulate chat '/hold acme/widgets release freeze'`: a slash command, signed like Slack.

For `merge-hold dev`'s demo: the dev server binds a demo workspace (`core.demo_users.DEMO_SLACK_TEAM`,
bound to ``acme``, its user a chat admin) and keeps the signing secret in its data folder. This posts
the command to ``/chat/slack`` with Slack's ``v0`` signature (`X-Slack-Signature` over
``v0:TIMESTAMP:BODY``) and prints the immediate (ephemeral) answer: the whole answer for what the server
answers at once (a link, a subscription, usage, a refusal). For a command the server queued (it says so
in a header) it also prints what the worker reports through the command's ``response_url``: a small
HTTP listener on loopback stands in for Slack there, so a fan-out's outcome ("@alice held acme/widgets
(1 open PR): …") shows in this terminal, and every further reply until the channel goes quiet.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import queue
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

from core.demo_users import DEMO_SLACK_TEAM, DEMO_SLACK_USER

FOLLOWS = "X-Merge-Hold-Follows"
"""Set by the server (`app.chat.FOLLOWS`) when the command was queued and a reply will follow."""
COMMANDS = ("/hold", "/unhold", "/holds")
"""The slash commands of `deploy/slack-app.yml`."""
QUIET_S = 2.0
"""After a reply, how long the listener waits for another (a fan-out's progress) before it is done."""


def signing_secret(folder: Path) -> str | None:
    given = os.environ.get("SLACK_SIGNING_SECRET")
    if given:
        return given
    try:
        return (folder / "slack-signing-secret").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def form(command: str, text: str, *, user: str, response_url: str) -> bytes:
    """A slash-command body with Slack's field names (its documented example's order)."""
    return urlencode({
        "token": "demo-verification-token-unused", "team_id": DEMO_SLACK_TEAM, "team_domain": "demo",
        "channel_id": "CDEMO", "channel_name": "releases", "user_id": DEMO_SLACK_USER, "user_name": user,
        "command": command, "text": text, "response_url": response_url,
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**9)}.{secrets.token_hex(16)}",
        "api_app_id": "ADEMO",
    }).encode()


class _Replies:
    """A loopback `response_url`: every JSON body posted to its one secret path, in order."""

    def __init__(self) -> None:
        self.received: queue.Queue[dict[str, object]] = queue.Queue()
        path = f"/response/{secrets.token_urlsafe(16)}"
        replies = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, 64 * 1024))
                ok = self.path == path
                if ok:
                    try:
                        replies.put(json.loads(body))
                    except ValueError:
                        ok = False
                self.send_response(200 if ok else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Replies:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def run(url: str, folder: Path, line: str, *, user: str, wait: float) -> int:
    command, _, text = line.strip().partition(" ")
    if command not in COMMANDS:
        print(f"merge-hold simulate chat: start with one of {', '.join(COMMANDS)}, e.g. "
              f"'/hold acme/widgets release freeze'", file=sys.stderr)
        return 64
    secret = signing_secret(folder)
    if secret is None:
        print(f"merge-hold simulate chat: no Slack signing secret: set SLACK_SIGNING_SECRET, or start "
              f"`merge-hold dev` (a dry run on loopback keeps one in {folder / 'slack-signing-secret'})",
              file=sys.stderr)
        return 78
    with _Replies() as replies:
        body = form(command, text.strip(), user=user, response_url=replies.url)
        stamp = str(int(time.time()))
        request = urllib.request.Request(f"{url}/chat/slack", data=body, method="POST", headers={
            "Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": sign(secret, stamp, body)})
        try:
            with urllib.request.urlopen(request, timeout=15) as answer:
                status, raw, follows = answer.status, answer.read(), answer.headers.get(FOLLOWS)
        except urllib.error.HTTPError as exc:
            status, raw, follows = exc.code, exc.read(), None
        except OSError as exc:
            print(f"merge-hold simulate chat: cannot reach {url} ({exc}); is `merge-hold dev` running?",
                  file=sys.stderr)
            return 69
        print(f"-> {command} {text.strip()}  (Slack workspace {DEMO_SLACK_TEAM}, @{user})\n   {status} "
              f"{_text(raw)}")
        if status != 200:
            return 1
        if not follows or wait <= 0:
            return 0  # answered at once (a link, a subscription, a usage or refusal): that is the answer
        deadline = time.monotonic() + wait
        seen = 0
        while True:
            # The first reply may take the fan-out's time; a fan-out that reports its progress posts
            # more than one (Slack allows five per response_url), so listen on until it goes quiet.
            left = deadline - time.monotonic()
            try:
                reply = replies.received.get(timeout=max(0.0, min(left, QUIET_S) if seen else left))
            except queue.Empty:
                break
            seen += 1
            where = "in the channel" if reply.get("response_type") == "in_channel" else "only to you"
            print(f"<- {where}: {reply.get('text')}", flush=True)
        if not seen:
            print(f"merge-hold simulate chat: no reply on the response_url within {wait:g} s; "
                  f"is `merge-hold worker` running?", file=sys.stderr)
            return 1
    return 0


def _text(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace").strip()
    return str(data.get("text") or data.get("error") or data) if isinstance(data, dict) else str(data)
