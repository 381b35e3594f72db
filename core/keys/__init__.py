"""Redis key names: the one place they are spelled.

Every key of a repository shares the hash tag ``{owner/repo}`` so that the state could move to a
Redis Cluster without a migration (multi-key transactions stay within one slot). Org-wide keys use
``{owner}``. The agent hook reads only ``verdict``, ``managed``, ``head``, ``held``, ``held-heads`` and
``branch-freezes`` keys; its Redis ACL user is restricted to exactly those patterns (see
``hook/tools/acl.py``).

The keys are grouped by who owns them, one module each; import them from here (``keys.verdict(...)``).
"""

from __future__ import annotations

from core.keys.base import *  # noqa: F403
from core.keys.check_runs import *  # noqa: F403
from core.keys.incidents import *  # noqa: F403
from core.keys.org_freeze import *  # noqa: F403
from core.keys.outgoing import *  # noqa: F403
from core.keys.processes import *  # noqa: F403
from core.keys.repos import *  # noqa: F403
from core.keys.web import *  # noqa: F403
