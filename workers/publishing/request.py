"""Step 6 of a delivery's path (docs/architecture.md): a recompute asked for (design §4, invariants 4, 5).

`request_recompute` sets the PR's ``queued`` flag and queues its recompute job in one EXEC
(`state.recompute_requests.RecomputeRequest`, which a state write also carries in its own EXEC:
`state.store.update_pull`): there is never a flag without its job, nor a state change without its
recompute. The flag only coalesces bursts; the job clears it when it starts, under the PR's lock. Inside a
delivery the job is a backstop and the delivery runs it at once (`workers.publishing.in_delivery`).
"""

from __future__ import annotations

from redis import WatchError

from core import jobs
from state.recompute_requests import RecomputeRequest
from workers.runtime import Runtime

RECOMPUTE_JOB = jobs.RECOMPUTE.address


def request_recompute(rt: Runtime, repo: str, number: int) -> bool:
    """Ask for a recompute of ``repo#number``; False when one is already waiting (coalesced)."""
    request = rt.delivery.ask_in_place(rt.queue, repo, number) if rt.delivery is not None \
        else RecomputeRequest(rt.queue, repo, number)
    with rt.redis.pipeline() as pipe:
        while True:
            try:
                request.watch(pipe)
                if request.pending:
                    pipe.unwatch()
                    return False
                pipe.multi()
                request.add(pipe)
                pipe.execute()
                return True
            except WatchError:
                continue
