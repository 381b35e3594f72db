"""Who the emulated GitHub App is, and the documented examples its answers are shaped after."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

REST_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github" / "rest"

APP_ID = 424242
DEFAULT_SLUG = "merge-hold-test"
BOT_USER_ID = 9_000_001
API_DOCS = "https://docs.github.com/rest"


@cache
def rest_fixture(name: str) -> Any:
    """A documented REST example from tests/fixtures/github/rest (read once, on first use)."""
    return json.loads((REST_FIXTURES / name).read_text(encoding="utf-8"))


@cache
def private_key_pem() -> str:
    """The publicly documented example App key (app-manifest conversion example); test use only."""
    pem: str = rest_fixture("app-manifest-conversion.201.json")["pem"]
    return pem


def bot_login(slug: str) -> str:
    return f"{slug}[bot]"
