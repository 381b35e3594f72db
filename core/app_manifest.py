"""The GitHub App manifest (GitHub's "register an App from a manifest" flow), filled for one server.

`deploy/github-app-manifest.json` is this with the example URL (a test keeps them equal); `/setup`
posts it with the server's own public URL. Permissions and events are the ones `merge-hold doctor`
requires (`core.readiness`), so what the flow registers is what the doctor then finds complete.
"""

from __future__ import annotations

from typing import Any

from core.readiness import REQUIRED_EVENTS, required_permissions

EXAMPLE_URL = "https://merge-hold.example.com"
SETUP_PATH = "/setup"
WEBHOOK_PATH = "/webhooks/github"
LOGIN_CALLBACK_PATH = "/login/github/callback"  # app/github_login.py
DESCRIPTION = ("Holds pull requests from merging: posts the merge-hold commit status from /hold comments, "
               "reviews, labels, chat holds and freeze windows.")


OPTIONAL_PERMISSIONS = {"organization_administration": (
    "write", "an org freeze as one organisation ruleset (GitHub Enterprise Cloud); without it, or on a plan "
             "without org rulesets, one ruleset per repository")}
"""Asked for in ruleset mode but not required: `merge-hold doctor` reports the mode either way, and an org
that would rather not grant it removes it from the App's permissions (freezes then use per-repo rulesets)."""


def manifest(public_url: str, *, name: str = "merge-hold", freeze_mode: str = "statuses") -> dict[str, Any]:
    """The manifest for a server reachable at `public_url` (no trailing slash needed). Administration:
    write is asked for only for ``freeze_mode`` ``ruleset`` (MERGE_HOLD_FREEZE_MODE), and with it the
    optional Organization administration: write (`OPTIONAL_PERMISSIONS`)."""
    permissions = {name: level for name, (level, _why) in required_permissions(freeze_mode).items()}
    if freeze_mode == "ruleset":
        permissions.update({name: level for name, (level, _why) in OPTIONAL_PERMISSIONS.items()})
    base = public_url.rstrip("/")
    return {
        "name": name,
        "url": base,
        "description": DESCRIPTION,
        "hook_attributes": {"url": f"{base}{WEBHOOK_PATH}", "active": True},
        # GitHub sends the browser back here with `code` (and our `state`) once the App exists.
        "redirect_url": f"{base}{SETUP_PATH}",
        # "Sign in with GitHub" for the dashboard uses the App's OAuth client.
        "callback_urls": [f"{base}{LOGIN_CALLBACK_PATH}"],
        "public": False,
        "default_permissions": permissions,
        "default_events": list(REQUIRED_EVENTS),
    }
