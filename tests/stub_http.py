"""The HTTP plumbing the scripted model APIs (tests/claude_stub.py, gemini_stub.py, openai_stub.py)
share: a quiet request handler that answers with a body and its length, and the loopback server each
stub runs in a thread."""

from __future__ import annotations

import threading
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
