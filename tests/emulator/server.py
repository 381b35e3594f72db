"""The emulated GitHub on loopback: a stdlib ThreadingHTTPServer in a daemon thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from tests.emulator.identity import DEFAULT_SLUG, bot_login
from tests.emulator.pipeline import dispatch
from tests.emulator.world import World


class GitHubEmulator(World):
    """GitHub's REST API as PyGithub sees it, for tests: seed it, point `GITHUB_API_URL` (or PyGithub's
    `base_url`) at `.url`, then inspect what was asked of it."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, app_slug: str = DEFAULT_SLUG,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(app_slug=app_slug, clock=clock)
        self.host, self.port = host, port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """http://HOST:PORT, no trailing slash (the value for GITHUB_API_URL)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running: call start() first")
        return f"http://{self.host}:{self._server.server_address[1]}"

    @property
    def bot_login(self) -> str:
        return bot_login(self.app_slug)

    def start(self) -> GitHubEmulator:
        if self._server is not None:
            return self
        server = _Server((self.host, self.port), _handler_for(self))
        self._server = server
        # A short poll: stop() waits for the serve loop to notice, once per test.
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name=f"github-emulator:{server.server_address[1]}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> GitHubEmulator:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.open: set[socket.socket] = set()
        self.open_lock = threading.Lock()

    def close_connections(self) -> None:
        # Clients keep connections alive (PyGithub pools them); closing them lets the per-connection
        # threads end now instead of idling until their timeout.
        with self.open_lock:
            sockets, self.open = list(self.open), set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _handler_for(emulator: GitHubEmulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30
        # Headers and body go out in separate writes; with Nagle on, the second waits for the client's
        # delayed ACK (~40 ms) on every keep-alive request.
        disable_nagle_algorithm = True
        server: _Server

        def setup(self) -> None:
            super().setup()
            with self.server.open_lock:
                self.server.open.add(self.connection)

        def finish(self) -> None:
            with self.server.open_lock:
                self.server.open.discard(self.connection)
            super().finish()

        def serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            host = self.headers.get("host") or f"{emulator.host}:{self.server.server_address[1]}"
            status, headers, payload = dispatch(emulator, self.command, self.path,
                                                {k.lower(): v for k, v in self.headers.items()}, raw,
                                                f"http://{host}")
            # send_response_only: the Date header comes from the emulator's clock (in `headers`).
            self.send_response_only(status)
            self.send_header("Server", "GitHub.com")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = serve

        def log_message(self, format: str, *args: object) -> None:
            pass  # the request log (emulator.requests) is the record; stderr noise is not

    return Handler
