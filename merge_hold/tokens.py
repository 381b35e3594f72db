"""`merge-hold token`: create, list and revoke API tokens in the hashed tokens file.

A new token is printed once and never stored: the file keeps ``name:sha256hex(token):scope[:orgs]``,
so a leaked file grants nothing. The server notices changes to the file without a restart
(`app.token_store.TokenStore`; `app.auth` says what each scope may do).
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
import tempfile
from pathlib import Path

from app.token_store import SCOPES, Grant, parse_grants, token_hash
from foundation.cliargs import ArgumentParser

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}")
"""Token names: no colon (the file's separator), no spaces; shown on the dashboard and in audit events."""

TOKEN_PREFIX = "mhk_"
"""Marks merge-hold tokens so secret scanners and humans recognise one in a log or a paste."""


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


ORG = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}")
"""A GitHub user or organisation name."""


def _read(path: Path) -> dict[str, Grant]:
    try:
        return parse_grants(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def create(path: Path, name: str, scope: str = "read", orgs: tuple[str, ...] = ()) -> str:
    """Append a token for ``name`` and return it (the only time it exists in clear)."""
    if name in _read(path):
        raise ValueError(f"a token named {name!r} exists; revoke it first")
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r} (known: {', '.join(SCOPES)})")
    bad = [org for org in orgs if not ORG.fullmatch(org)]
    if bad:
        raise ValueError(f"not a GitHub organisation name: {bad[0]!r}")
    token = new_token()
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_bytes() if path.exists() else b""
    limited = f":{'+'.join(sorted({o.lower() for o in orgs}))}" if orgs else ""
    line = f"{name}:{token_hash(token)}:{scope}{limited}\n"
    if existing and not existing.endswith(b"\n"):
        line = "\n" + line  # a hand-edited file without a final newline must not swallow our line
    # 0600 at creation: the hashes are not secrets, but nobody else needs to read or extend the list.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        out.write(line)
    return token


def revoke(path: Path, name: str) -> bool:
    """Drop ``name``'s line; the file is replaced atomically so the server never reads half of it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except FileNotFoundError:
        return False
    kept = [line for line in lines if line.strip().split(":", 1)[0] != name]
    if len(kept) == len(lines):
        return False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(kept)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True




def _parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="merge-hold token",
        description="Manage API tokens (dashboard login, JSON API, hook records). "
        "The file defaults to MERGE_HOLD_API_TOKENS_FILE.",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    for action, summary in (("create", "create a token and print it once"), ("revoke", "remove a token")):
        cmd = sub.add_parser(action, help=summary)
        cmd.add_argument("name", help="who or what the token is for, e.g. ci-bot or alice")
        cmd.add_argument("--file", help="tokens file (default: MERGE_HOLD_API_TOKENS_FILE)")
        if action == "create":
            cmd.add_argument("--scope", choices=list(SCOPES), default="read",
                             help="read (default): verdicts, holds, events, the freeze API and the calendar "
                                  "feed; hook-events: also the hook's records; hold: also place and lift its own "
                                  "room holds and grant head-bound exemptions; admin: everything, sticky "
                                  "exemptions and the org's outgoing webhooks included")
            cmd.add_argument("--org", action="append", default=[], metavar="ORG",
                             help="limit the token to this org (repeat for more; default: every org)")
    cmd = sub.add_parser("list", help="list tokens: name, scope, orgs")
    cmd.add_argument("--file", help="tokens file (default: MERGE_HOLD_API_TOKENS_FILE)")
    return parser


def _tokens_file(given: str | None) -> Path:
    if given:
        return Path(given)
    from foundation.settings import from_env, require

    settings = from_env()
    require(settings, "MERGE_HOLD_API_TOKENS_FILE")
    assert settings.api_tokens_file is not None
    return Path(settings.api_tokens_file)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from foundation.settings import SettingsError

    try:
        path = _tokens_file(args.file)
    except SettingsError as exc:
        print(f"merge-hold token: {exc}", file=sys.stderr)
        return 78  # EX_CONFIG
    if args.action != "list" and not NAME.fullmatch(args.name):
        print(f"merge-hold token: invalid name {args.name!r} (letters, digits, _ . @ + -)", file=sys.stderr)
        return 64
    try:
        if args.action == "create":
            token = create(path, args.name, args.scope, tuple(args.org))
            print(token)
            print(f"Token {args.name!r} stored as a hash in {path}; it is shown only this once.",
                  file=sys.stderr)
        elif args.action == "revoke":
            if not revoke(path, args.name):
                print(f"merge-hold token: no token named {args.name!r} in {path}", file=sys.stderr)
                return 1
            print(f"Revoked {args.name!r}.", file=sys.stderr)
        else:
            for name, grant in sorted(_read(path).items()):
                print(f"{name}\t{grant.scope}\t{'+'.join(grant.orgs) or '*'}")
    except (ValueError, OSError) as exc:
        print(f"merge-hold token: {exc}", file=sys.stderr)
        return 1
    return 0
