"""Redis keys are spelled in `core/keys/` only (issue 17 item 3): a key built elsewhere — a literal
``"mh:…"``, the prefix imported, or a key of the table extended by hand (``f"{keys.x(repo)}:lock"``)
— is a key no one can find, rename or restrict by the hook's ACL."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PRODUCT = ("core", "foundation", "state", "app", "workers", "merge_hold", "hook")
TABLE = ROOT / "core" / "keys"


def _is_keys_call(node: ast.AST) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "keys"


def spelled(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("mh:"):
            found.append(f"{node.lineno}: literal {node.value!r}")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("core.keys") \
                and any(alias.name == "PREFIX" for alias in node.names):
            found.append(f"{node.lineno}: imports the prefix")
        elif isinstance(node, ast.JoinedStr) and len(node.values) > 1:
            first, then = node.values[0], node.values[1]
            if isinstance(first, ast.FormattedValue) and _is_keys_call(first.value) \
                    and isinstance(then, ast.Constant) and str(then.value).startswith(":"):
                found.append(f"{node.lineno}: a key of the table extended by hand")
    return found


def product_files() -> list[Path]:
    return [path for package in PRODUCT for path in sorted((ROOT / package).rglob("*.py"))
            if TABLE not in path.parents]


def test_no_key_is_spelled_outside_the_table() -> None:
    files = product_files()
    assert any(p.name == "subscriptions.py" for p in files)
    bad = [f"{path.relative_to(ROOT)}:{use}" for path in files
           for use in spelled(ast.parse(path.read_text(encoding="utf-8")))]
    assert not bad, bad


def test_the_reader_finds_each_way_of_spelling_one() -> None:
    code = ('from core.keys import PREFIX\nx = "mh:notify:subs:acme"\n'
            'y = f"{keys.room_holds(repo)}:tree:{branch}"\nz = f"{keys.AUDIT}:extra"\nok = f"{keys.verdict(r, 1)}"\n')
    assert [line.split(":")[0] for line in spelled(ast.parse(code))] == ["1", "2", "3", "4"]
