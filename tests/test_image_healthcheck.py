"""The image's HEALTHCHECK picks the check by the container's command (merge_hold/healthcheck.py): a worker
is asked `merge-hold worker --healthcheck`, anything else is the web server on its bound port. The image
used to probe :8000/healthz in every container, so a worker without a web server beside it was always
unhealthy."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from merge_hold.healthcheck import main, role, web_port


@pytest.mark.parametrize(("argv", "expected"), [
    (["merge-hold", "worker"], "worker"),
    (["/opt/merge-hold/bin/merge-hold", "worker", "--name", "w0"], "worker"),
    (["tini", "--", "merge-hold", "worker"], "worker"),
    (["/bin/sh", "-c", "exec merge-hold worker --fork"], "worker"),
    (["python", "-m", "merge_hold.cli", "worker"], "worker"),
    (["gunicorn", "--config", "python:merge_hold.gunicorn_conf", "app:create_app()"], "web"),
    (["merge-hold", "serve", "--host", "0.0.0.0"], "web"),
    (["gunicorn", "--name", "worker", "app:create_app()"], "web"),  # "worker", but not merge-hold's command
    (["merge-hold", "reconcile", "--repo", "acme/worker-tools"], "web"),
    ([], "web"),  # no /proc: the image's default command
])
def test_role(argv: list[str], expected: str) -> None:
    assert role(argv) == expected


@pytest.mark.parametrize(("argv", "port"), [
    (["gunicorn", "--config", "python:merge_hold.gunicorn_conf", "app:create_app()"], 8000),
    (["gunicorn", "--bind", "127.0.0.1:9000", "app:create_app()"], 9000),
    (["gunicorn", "--bind=0.0.0.0:7000", "app:create_app()"], 7000),
    (["gunicorn", "-b", "[::]:8081", "app:create_app()"], 8081),
    (["merge-hold", "serve", "--port", "8100"], 8100),
    (["gunicorn", "--bind", "unix:/tmp/g.sock"], 8000),
])
def test_web_port(argv: list[str], port: int) -> None:
    assert web_port(argv) == port


class Healthz(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # http.server's name
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def web() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Healthz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def test_a_web_container_is_healthy_while_healthz_answers(web: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gunicorn", "--bind", f"127.0.0.1:{web}", "app:create_app()"]) == 0
    assert capsys.readouterr().out.startswith("healthy (web)")


def test_a_web_container_without_its_server_is_unhealthy(capsys: pytest.CaptureFixture[str]) -> None:
    from merge_hold.redis_server import free_port

    assert main(["gunicorn", "--bind", f"127.0.0.1:{free_port()}", "app:create_app()"]) == 1
    assert capsys.readouterr().out.startswith("unhealthy (web)")
