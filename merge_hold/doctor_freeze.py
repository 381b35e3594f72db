"""Ruleset freezes in `merge-hold doctor`, as the workers recorded them in Redis: each org's mode (one
organisation ruleset, or per-repo rulesets and why), and repos whose ruleset waits for GitHub's hourly
write window (an org larger than what is left of the hour binds in parts: how many now, when the rest)."""

from __future__ import annotations

import json
from typing import Any

from redis import Redis

from core import keys
from merge_hold.doctor_github import Check
from state.decoding import as_text

ORG_FIX = ("grant the App Organization administration: read & write (on GitHub Enterprise Cloud) for one "
           "write per org freeze and thaw")


def _tag(key: str) -> str:
    return key[key.index("{") + 1:key.index("}")]


def freeze_checks(conn: Redis) -> list[Check]:
    checks: list[Check] = []
    orgs: dict[str, tuple[Any, Any]] = {}
    for kind, pattern in (("org-freeze-ruleset", keys.ORG_FREEZE_RULESETS),
                          ("org-freeze-fallback", keys.ORG_FREEZE_FALLBACKS)):
        for key in conn.scan_iter(match=pattern, count=500):
            name = as_text(key)
            found = orgs.get(_tag(name), (None, None))
            value = json.loads(as_text(conn.get(name) or "null"))
            orgs[_tag(name)] = (value, found[1]) if kind == "org-freeze-ruleset" else (found[0], value)
    for org, (record, fallback) in sorted(orgs.items()):
        if fallback:
            checks.append(Check(f"{org}: freeze mode", True, f"per-repo rulesets: {fallback.get('reason')} "
                                "(an org freeze writes one ruleset per repository)", ORG_FIX))
        elif record:
            checks.append(Check(f"{org}: freeze mode", True, f"org ruleset '{record.get('id')}' "
                                f"{record.get('enforcement')} over {len(record.get('repos') or ())} repos "
                                "(one write per org freeze and thaw)"))
    later = sorted((_tag(as_text(k)), json.loads(as_text(conn.get(k) or "null")) or {})
                   for k in conn.scan_iter(match=keys.FREEZES_DEFERRED, count=500))
    active: dict[str, int] = {}
    for key in conn.scan_iter(match=keys.REPO_FREEZE_RULESETS, count=500):
        record = json.loads(as_text(conn.get(key) or "null")) or {}
        if record.get("enforcement") == "active":
            owner = _tag(as_text(key)).split("/", 1)[0]
            active[owner] = active.get(owner, 0) + 1
    for owner in sorted({name.split("/", 1)[0] for name, _v in later}):
        mine = [(name, v) for name, v in later if name.split("/", 1)[0] == owner]
        until = max(str(v.get("until", "")) for _name, v in mine)
        names = ", ".join(name for name, _v in mine[:5]) + ("…" if len(mine) > 5 else "")
        now = active.get(owner, 0)
        checks.append(Check(f"{owner}: freeze rulesets waiting", True,
                            f"{now} of {now + len(mine)} ruleset(s) bind now; the other {len(mine)} by about "
                            f"{until[11:16]} UTC as GitHub's hourly write window frees ({names}); each freeze "
                            "keeps its thaw's write; until then their PRs are held only as far as their statuses "
                            "reach GitHub"))
    return checks
