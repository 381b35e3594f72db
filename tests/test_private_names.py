"""No product module uses another module's private names (issue 17 item 4): a name with a leading
underscore is free to change with its module alone. Imports anywhere count (module level, inside
functions, under ``TYPE_CHECKING``), and so do attributes read through an imported module."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PRODUCT = ("core", "foundation", "state", "app", "workers", "hook", "merge_hold")


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def product_modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def uses(name: str, tree: ast.AST, modules: dict[str, Path]) -> list[str]:
    """``line: module.name`` for each private name of another product module that ``tree`` uses."""
    bound: dict[str, str] = {}  # local name -> the product module it stands for
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                target = f"{node.module}.{alias.name}"
                if node.module in modules and private(alias.name):
                    found.append(f"{node.lineno}: {target}")
                if target in modules:
                    bound[alias.asname or alias.name] = target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if any(private(part) for part in alias.name.split(".")) and alias.name in modules:
                    found.append(f"{node.lineno}: {alias.name}")
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            chain: list[str] = []
            value: ast.expr = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *reversed(chain)])
                if target in modules and target != name:
                    found.append(f"{node.lineno}: {target}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names() -> None:
    modules = product_modules()
    assert "workers.publishing.write" in modules and "hook.detect.gitrepo" in modules
    bad = [f"{path.relative_to(ROOT)}:{use}" for name, path in sorted(modules.items())
           for use in uses(name, ast.parse(path.read_text(encoding="utf-8")), modules)]
    assert not bad, bad


def test_the_reader_finds_each_kind_of_use() -> None:
    modules = {"pkg.a": Path("a.py"), "pkg.b": Path("b.py"), "pkg": Path("__init__.py")}
    source = ("from pkg.a import _x, y\n"
              "import pkg.a as a\n"
              "from pkg import b\n"
              "def f():\n"
              "    from pkg.a import _z\n"
              "    return a._w, b._v, b.public, a.__doc__, self._own\n")
    assert uses("pkg.c", ast.parse(source), modules) == ["1: pkg.a._x", "5: pkg.a._z", "6: pkg.a._w", "6: pkg.b._v"]
    assert uses("pkg.a", ast.parse("import pkg.a as me\nme._mine\n"), modules) == []
