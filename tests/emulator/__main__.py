"""`python -m tests.emulator [--host H] [--port P] [--seed FILE] [--write-key FILE]`: the emulator on its
own, for manual runs of `merge-hold serve`/`worker` with GITHUB_API_URL pointed at it.

The seed file is JSON: {"installations": [{"id", "account", "account_type"?}],
"repos": [{"full_name", "installation_id", "default_branch"?, "private"?, "files"?: {path: text},
"permissions"?: {login: role}}], "pulls": [{"repo", "number", "head_sha", "head_ref", ...add_pull keywords}]}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from tests.emulator.identity import APP_ID, private_key_pem
from tests.emulator.server import GitHubEmulator
from tests.emulator.world import World


def seed(world: World, data: dict[str, Any]) -> None:
    for inst in data.get("installations", []):
        world.add_installation(int(inst["id"]), inst["account"],
                               account_type=inst.get("account_type", "Organization"))
    for repo in data.get("repos", []):
        world.add_repo(repo["full_name"], installation_id=int(repo["installation_id"]),
                       default_branch=repo.get("default_branch", "main"), private=bool(repo.get("private")))
        for path, text in repo.get("files", {}).items():
            world.set_file(repo["full_name"], path, text)
        for login, role in repo.get("permissions", {}).items():
            world.set_permission(repo["full_name"], login, role)
    for pull in data.get("pulls", []):
        fields = dict(pull)
        world.add_pull(fields.pop("repo"), int(fields.pop("number")), **fields)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.emulator", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=Path, help="JSON file of installations, repos and pulls")
    parser.add_argument("--write-key", type=Path, help="write the App's private key here (0600)")
    args = parser.parse_args(argv)
    emulator = GitHubEmulator(host=args.host, port=args.port)
    if args.seed is not None:
        seed(emulator, json.loads(args.seed.read_text(encoding="utf-8")))
    if args.write_key is not None:
        args.write_key.write_text(private_key_pem(), encoding="utf-8")
        os.chmod(args.write_key, 0o600)
    emulator.start()
    print(emulator.url, flush=True)
    print(f"GITHUB_API_URL={emulator.url} GITHUB_APP_ID={APP_ID}"
          + (f" GITHUB_PRIVATE_KEY_PATH={args.write_key}" if args.write_key else ""), file=sys.stderr, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
