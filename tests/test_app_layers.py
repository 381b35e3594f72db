"""The web tier's layering (issue #7 item 11): it never imports the worker stack (PyGithub comes in
through it), and `app.services` is a leaf every blueprint may import without a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import ROOT

WEB_MODULES = ["app", "app.chat", "app.api", "app.auth", "app.dashboard", "app.health", "app.reads",
               "app.services", "app.webhooks", "app.tokens"]


def test_the_web_tier_loads_no_worker_stack() -> None:
    probe = (f"import sys\nfor m in {WEB_MODULES!r}: __import__(m)\n"
             "import app\napp.create_app\n"
             "bad = sorted(m for m in sys.modules if m == 'github' or m.startswith('github.')"
             " or m in ('workers.rooms', 'workers.runtime', 'workers.fanout', 'workers.publish'))\n"
             "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_services_is_a_leaf() -> None:
    tree = ast.parse((ROOT / "app" / "services.py").read_text())
    runtime_imports = []
    for node in tree.body:  # module level only: `if TYPE_CHECKING:` blocks are for the checker
        if isinstance(node, ast.ImportFrom) and node.module:
            runtime_imports.append(node.module)
        elif isinstance(node, ast.Import):
            runtime_imports += [alias.name for alias in node.names]
    # merge_hold.redis_conn is a leaf too (redis-py and core only): the one Redis connection factory.
    leaves = {"merge_hold.redis_conn"}
    assert not [m for m in runtime_imports
                if m not in leaves and (m == "app" or m.startswith(("app.", "workers", "merge_hold")))]
