"""The image's ``HEALTHCHECK``: one image runs web and worker, so the check is picked by the container's
command (PID 1's argument list), which ``docker exec`` and a Kubernetes exec probe see from inside:

- ``merge-hold worker …`` (bare, under an init such as tini, or inside ``sh -c``): `merge-hold worker
  --healthcheck` (registered, heartbeating, Redis reached);
- anything else is the web server (gunicorn, ``merge-hold serve``): ``GET /healthz`` on the port of its
  ``--bind``/``--port`` (8000 unless given).

    python -m merge_hold.healthcheck      # exit 0 healthy, 1 not (Docker's codes)
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from pathlib import Path

WEB_PORT = 8000


def container_command(proc: Path = Path("/proc/1/cmdline")) -> list[str]:
    try:
        raw = proc.read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def role(argv: list[str]) -> str:
    """``worker`` or ``web``, from a container command."""
    words = [word for arg in argv for word in arg.split()]
    for index, word in enumerate(words):
        if (word.rsplit("/", 1)[-1] == "merge-hold" or word == "merge_hold.cli") and "worker" in words[index + 1:]:
            return "worker"
    return "web"


def web_port(argv: list[str]) -> int:
    words = [word for arg in argv for word in arg.split()]
    for index, word in enumerate(words):
        option, _, inline = word.partition("=")
        value = inline or (words[index + 1] if index + 1 < len(words) else "")
        if option in ("--bind", "-b") and value.rpartition(":")[2].isdigit():
            return int(value.rpartition(":")[2])
        if option == "--port" and value.isdigit():
            return int(value)
    return WEB_PORT


def main(argv: list[str] | None = None) -> int:
    command = container_command() if argv is None else argv
    if role(command) == "worker":
        from workers.ops.health import run

        return run("full", None)
    url = f"http://127.0.0.1:{web_port(command)}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            healthy = answer.status == 200
    except (OSError, urllib.error.URLError) as exc:
        print(f"unhealthy (web): {url}: {exc}")
        return 1
    print(f"{'healthy' if healthy else 'unhealthy'} (web): {url}")
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
