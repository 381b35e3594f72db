"""The HTTP plumbing the tests' loopback stand-ins share: a quiet request handler that answers with a body
and its length, a handler served from a thread while a block runs (`loopback`: the Slack stand-in, the
chat `response_url` and outgoing-webhook receivers), and the server each scripted model API
(tests/claude_stub.py, gemini_stub.py, openai_stub.py) runs in."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHandler(BaseHTTPRequestHandler):
    extra_headers: dict[str, str] = {}
    """Headers every answer carries besides type and length (an API's request id)."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures
        pass

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 from a thread while the block runs: its base URL,
    ``http://127.0.0.1:PORT``; shut down and closed after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class LoopbackStub:
    """A scripted model API on 127.0.0.1, served from a thread while the stub is entered. Subclasses
    give the request handler and the script; ``requests`` and ``paths`` record what the CLI sent."""

    url_suffix = ""
    """What the CLI's base URL adds after ``host:port`` (``/v1`` for the OpenAI-shaped APIs)."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.requests: list[dict[str, Any]] = []
        """Every JSON body posted, in arrival order."""
        self.paths: list[str] = []
        """Every ``METHOD path`` the CLI asked for (to see what else it reaches for)."""
        self._issued = False
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.url_suffix}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError
