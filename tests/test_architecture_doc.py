"""`docs/architecture.md` names only what exists (issue 31 item 6): every file or folder it spells as a
path (``core/keys/``, ``workers/events/handler_support.py``), every dotted name of the product
(``core.verdict.compute_verdict``, ``core.keys.freeze_owed``), and every name it gives right after a file
(`` `core/deployments.py` `covering_holds` ``) is there, so a move or a rename that forgets the page fails."""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "architecture.md"
PACKAGES = ("core", "foundation", "state", "app", "workers", "merge_hold", "hook", "tests", "bench")
PATH = re.compile(r"`((?:[\w.-]+/)+(?:[\w.-]+\.\w+)?)`")
"""A file or a folder: at least one slash (a bare ``outbox.py`` names a module of the bullet's folder)."""
DOTTED = re.compile(rf"`((?:{'|'.join(PACKAGES[:7])})(?:\.\w+)+)`")
NAMED = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.py)` `(\w+)`")


def _where(path: str) -> Path | None:
    """The path from the repository's root, from docs/ (links), or inside a package (``static/live.js``
    in the web tier's bullet)."""
    for base in (ROOT, PAGE.parent, *(ROOT / p for p in PACKAGES)):
        if (base / path).exists():
            return base / path
    return None


@cache
def _top_level(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def _resolves(dotted: str) -> bool:
    """The longest importable module of ``dotted``, then its attributes (as rq resolves a job)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def missing(text: str) -> list[str]:
    """What ``text`` names that the repository does not have."""
    gone = [f"`{p}`" for p in dict.fromkeys(PATH.findall(text)) if _where(p) is None]
    gone += [f"`{d}`" for d in dict.fromkeys(DOTTED.findall(text)) if not _resolves(d)]
    for path, name in dict.fromkeys(NAMED.findall(text)):
        file = _where(path)
        if file is not None and name not in _top_level(file):
            gone.append(f"`{path}` `{name}`")
    return gone


@pytest.mark.parametrize(("text", "gone"), [
    ("the verdict (`core/verdict.py`, `core.verdict.compute_verdict`)", []),
    ("the keys (`core/keys/`, `core.keys.freeze_owed`), the table `tests/fixtures/github/write-operations.tsv`", []),
    ("`workers/events/handler_support.py` `apply_change`; `live.py` with `static/live.js`", []),
    ("a module that is not there: `core/nothing.py`", ["`core/nothing.py`"]),
    ("a folder that is not there: `workers/nowhere/`", ["`workers/nowhere/`"]),
    ("a table beside the checkout: `../shared/write-operations.tsv`", ["`../shared/write-operations.tsv`"]),
    ("a function renamed away: `core.verdict.compute_the_verdict`", ["`core.verdict.compute_the_verdict`"]),
    ("a module renamed away: `core.verdict_records`", ["`core.verdict_records`"]),
    ("a name not in its file: `workers/events/handler_support.py` `apply_changes`",
     ["`workers/events/handler_support.py` `apply_changes`"]),
    ("a name only imported there: `workers/events/handler_support.py` `annotations`",
     ["`workers/events/handler_support.py` `annotations`"]),
])
def test_the_checker(text: str, gone: list[str]) -> None:
    assert missing(text) == gone


def test_the_architecture_page_names_only_what_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert len(PATH.findall(text)) > 40 and len(DOTTED.findall(text)) >= 5 and NAMED.findall(text)
    assert missing(text) == []


STEP_ITEM = re.compile(r"^(\d+)\. \*\*.*?(?=^\d+\. \*\*|^\S|\Z)", re.M | re.S)
"""One numbered step of "One delivery" on the page: from ``N. **`` to the next step or paragraph."""
DOCSTRING_STEP = re.compile(r"Step (\d+) of a delivery's path")


def misnumbered(page: str, docstrings: dict[str, str]) -> list[str]:
    """The modules (path: docstring) whose "Step N of a delivery's path" is a step of the page that does
    not name them (by path, or by file name within its folder's step)."""
    steps = {int(m.group(1)): m.group(0) for m in STEP_ITEM.finditer(page)}
    wrong = []
    for path, doc in docstrings.items():
        for number in DOCSTRING_STEP.findall(doc):
            item = steps.get(int(number), "")
            if f"`{path}`" not in item and f"`{path.rsplit('/', 1)[-1]}`" not in item:
                wrong.append(f"{path}: step {number}")
    return wrong


PAGE_STEPS = """1. **Receiver** — `app/webhooks.py`: the POST.
2. **Intake** — `app/intake_writer.py`: one LPUSH,
   then the 202.
3. **Pump** — `workers/intake/pump.py`; beside it `comments.py`.

After the steps.
"""


@pytest.mark.parametrize(("docstrings", "wrong"), [
    ({"app/intake_writer.py": "Step 2 of a delivery's path: the LPUSH."}, []),
    ({"workers/intake/pump.py": "Step 3 of a delivery's path (docs/architecture.md)"}, []),
    ({"workers/events/comments.py": "Step 3 of a delivery's path"}, []),  # named by file within the step
    ({"workers/intake/pump.py": "Step 2 of a delivery's path"}, ["workers/intake/pump.py: step 2"]),
    ({"workers/publishing/drain.py": "Step 4 of a delivery's path"}, ["workers/publishing/drain.py: step 4"]),
    ({"workers/publishing/drain.py": "Step 4 of the publishing path"}, []),  # another numbering: not this check's
])
def test_the_step_checker(docstrings: dict[str, str], wrong: list[str]) -> None:
    assert misnumbered(PAGE_STEPS, docstrings) == wrong


def test_module_docstrings_number_the_steps_as_the_page_does() -> None:
    docstrings = {}
    for package in ("app", "workers", "state", "core"):
        for path in sorted((ROOT / package).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            if DOCSTRING_STEP.search(doc):
                docstrings[path.relative_to(ROOT).as_posix()] = doc
    assert len(docstrings) >= 8  # the page's steps 2 to 9 each have a module saying so
    assert misnumbered(PAGE.read_text(encoding="utf-8"), docstrings) == []
