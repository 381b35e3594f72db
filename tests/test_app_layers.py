"""The web tier's layering (issue #7 item 11, issue 17 item 4): it never imports the worker stack
(PyGithub comes in through it), `app.services` is a leaf every blueprint may import, and app/ has no
import cycle of any kind (function-local and ``TYPE_CHECKING`` imports count: `tests.import_graph`)."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import ROOT
from tests.import_graph import find_cycle, graph, imported

WEB_MODULES = ["app", "app.chat", "app.api", "app.auth", "app.dashboard", "app.health", "app.reads",
               "app.services", "app.webhooks", "app.token_store"]


def test_the_web_tier_loads_no_worker_stack() -> None:
    probe = (f"import sys\nfor m in {WEB_MODULES!r}: __import__(m)\n"
             "import app\napp.create_app\n"
             "bad = sorted(m for m in sys.modules\n"
             "             if m in ('github', 'workers') or m.startswith(('github.', 'workers.')))\n"
             "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


LEAVES = {"app.metrics", "app.token_store"}
"""The `app` modules `app.services` names for its types; they import no `app` module themselves."""


def test_services_is_a_leaf() -> None:
    edges = graph("app")
    # Every import counts, `if TYPE_CHECKING:` blocks included: a type-level cycle is a cycle too.
    assert edges["app.services"] <= LEAVES, edges["app.services"]
    assert all(not edges[leaf] for leaf in LEAVES), {leaf: edges[leaf] for leaf in LEAVES}
    named: list[str] = []
    for node in ast.walk(ast.parse((ROOT / "app" / "services.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            named.append(node.module)
        elif isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
    # foundation.redis_conn is a leaf too (redis-py and core only): the one Redis connection factory;
    # foundation.settings is named for the checker only (a dataclass of settings).
    leaves = {"foundation.redis_conn", "foundation.settings"}
    ours = ("app", "workers", "foundation", "merge_hold")
    assert not [m for m in named if m not in leaves | LEAVES and m.startswith(ours)]


def test_the_web_tier_has_no_import_cycle() -> None:
    edges = graph("app")
    # The reader sees a function-local import (the factory's blueprints) and a TYPE_CHECKING one.
    assert "app.api" in edges["app"] and "app.metrics" in edges["app.webhooks"]
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_the_reader_counts_every_kind_of_import() -> None:
    modules = {"pkg", "pkg.a", "pkg.b"}
    read = [imported(node, modules) for node in ast.walk(ast.parse(
        "from pkg import a\nfrom pkg.b import name\nimport pkg.a\nfrom pkg import a, factory\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import T\n"
        "def f():\n    import pkg.b\n")) if isinstance(node, ast.Import | ast.ImportFrom)]
    assert read == [{"pkg.a"}, {"pkg.b"}, {"pkg.a"}, {"pkg.a", "pkg"}, set(), {"pkg.b"}, {"pkg.b"}]
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
