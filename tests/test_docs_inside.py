"""The docs a clone gets are complete and stay inside it (issue 28 item 5, design §8): no path outside the
repository (a design file beside the checkout, a developer's tool), every relative link resolves, and
the configuration table lists every variable the settings read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foundation.settings import FIELDS
from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "deploy").rglob("*.md")),
        *sorted((ROOT / "deploy").rglob("*.y*ml")), ROOT / "Dockerfile", ROOT / "Makefile"]
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])/(?:work|home|Users|root)/|~/(?:src|work|projects)/")
"""Paths on a developer's machine or beside the checkout, which a clone does not have."""


def outside(text: str) -> list[str]:
    return [match.group(0) for match in OUTSIDE.finditer(text)]


@pytest.mark.parametrize(("text", "found"), [
    ("The design is `../shared/design.md`.", ["../shared"]),
    ("run /work/shared/tools/local-docker.sh first", ["/work/"]),
    ("see /home/alice/merge-hold", ["/home/"]),
    ("mounted at /var/lib/merge-hold and /etc/merge-hold/tokens", []),
    ("https://example.com/work/x and docs/design.md", []),
])
def test_the_outside_pattern(text: str, found: list[str]) -> None:
    assert outside(text) == found


@pytest.mark.parametrize("path", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_no_doc_points_outside_the_repository(path: Path) -> None:
    assert outside(path.read_text()) == []


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("path", [p for p in DOCS if p.suffix == ".md"],
                         ids=[str(p.relative_to(ROOT)) for p in DOCS if p.suffix == ".md"])
def test_relative_links_resolve(path: Path) -> None:
    broken = [target for target in LINK.findall(path.read_text())
              if "://" not in target and not target.startswith("mailto:")
              and not (path.parent / target).exists()]
    assert broken == []


def test_the_configuration_table_lists_every_variable() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("\n## Configuration\n"):]
    table = table[:table.index("\n## ", 1)]
    rows = "\n".join(line for line in table.splitlines() if line.startswith("|"))
    missing = [name for name in FIELDS if f"`{name}`" not in rows]
    assert missing == []
