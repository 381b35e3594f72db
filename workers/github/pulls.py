"""Reading GitHub's pull-request objects (webhook payloads and REST answers alike) into `core` facts."""

from __future__ import annotations

from typing import Any

from core.holds import from_iso
from core.prstate import EPOCH, Facts


def facts_from_pull(pr: dict[str, Any]) -> Facts:
    head = pr.get("head") or {}
    base = pr.get("base") or {}
    head_repo = (head.get("repo") or {}).get("full_name") or (base.get("repo") or {}).get("full_name", "")
    return Facts(
        at=from_iso(pr.get("updated_at")) or EPOCH,
        head_sha=str(head.get("sha", "")),
        head_ref=str(head.get("ref", "")),
        head_repo=str(head_repo),
        base=str(base.get("ref", "")),
        author=str((pr.get("user") or {}).get("login", "")),
        open=pr.get("state", "open") == "open",
        draft=bool(pr.get("draft", False)),
        labels=tuple(sorted(str(label.get("name", "")) for label in pr.get("labels") or [])),
    )
