"""A stand-in for Slack's Web API on loopback: records each ``chat.postMessage`` call as Slack receives
it (the bot token, the channel, the text) and answers the way Slack does. ``fail_next`` makes the
next calls fail with an HTTP 500 and ``{"ok": false}``, as Slack does in an outage."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from tests.stub_http import QuietHandler, loopback


@dataclass
class SlackStandIn:
    api_url: str = ""
    """What SLACK_API_URL is set to (``http://127.0.0.1:PORT/api``)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Every chat.postMessage received, failed ones included (``failed`` says which)."""
    fail_next: int = 0

    @property
    def posted(self) -> list[dict[str, Any]]:
        return [c for c in self.calls if not c["failed"]]

    def texts(self) -> list[str]:
        return [str(c["text"]) for c in self.posted]

    def wait(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.posted) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.posted


@contextmanager
def slack_standin() -> Iterator[SlackStandIn]:
    standin = SlackStandIn()
    lock = threading.Lock()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path != "/api/chat.postMessage":
                self._answer(404, {"ok": False, "error": "unknown_method"})
                return
            if "json" in (self.headers.get("Content-Type") or ""):
                args = json.loads(raw or b"{}")
            else:
                args = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            with lock:
                failed = standin.fail_next > 0
                standin.fail_next -= 1 if failed else 0
                standin.calls.append({"token": token, "channel": args.get("channel"), "text": args.get("text"),
                                      "failed": failed})
            if failed:
                self._answer(500, {"ok": False, "error": "internal_error"})
            elif not token:
                self._answer(200, {"ok": False, "error": "not_authed"})
            else:
                self._answer(200, {"ok": True, "channel": args.get("channel"), "ts": f"{time.time():.6f}",
                                   "message": {"text": args.get("text")}})

        def _answer(self, code: int, body: dict[str, Any]) -> None:
            self._send(code, "application/json; charset=utf-8", json.dumps(body).encode())

    with loopback(Handler) as base:
        standin.api_url = f"{base}/api"
        yield standin
