"""A GitHub REST API emulator for the tests: one real HTTP server that PyGithub talks to.

    with GitHubEmulator() as gh:
        gh.add_installation(1, "acme"); gh.add_repo("acme/widgets", installation_id=1)
        Github(base_url=gh.url, auth=AppAuth(APP_ID, PRIVATE_KEY_PEM).get_installation_auth(1))
"""

from __future__ import annotations

from tests.emulator.identity import APP_ID, DEFAULT_SLUG, private_key_pem
from tests.emulator.server import GitHubEmulator

__all__ = ["APP_ID", "DEFAULT_SLUG", "PRIVATE_KEY_PEM", "GitHubEmulator", "private_key_pem"]


def __getattr__(name: str) -> str:
    # PRIVATE_KEY_PEM is read from the fixture on first use, not at import.
    if name == "PRIVATE_KEY_PEM":
        return private_key_pem()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
