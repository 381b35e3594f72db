"""A webhook receiver on loopback for the outgoing webhook tests: it records every request (headers and raw
body) and answers with the statuses it is told to, in order (the last one repeats)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tests.stub_http import QuietHandler, loopback


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    answers: list[int] = field(default_factory=lambda: [204])
    requests: list[Received] = field(default_factory=list)
    extra_headers: dict[str, str] = field(default_factory=dict)

    def answer(self, *statuses: int) -> None:
        self.answers[:] = list(statuses)


@contextmanager
def receiver(path: str = "/hooks/merge-hold") -> Iterator[Receiver]:
    found = Receiver("")
    lock = threading.Lock()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with lock:
                found.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status = found.answers.pop(0) if len(found.answers) > 1 else found.answers[0]
            self.send_response(status)
            for name, value in found.extra_headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    with loopback(Handler) as base:
        found.url = base + path
        yield found
