"""The web tier's Prometheus metrics: one `CollectorRegistry` per app.

Two apps in one process (tests, `merge-hold dev`) keep separate counts, and nothing registers at import.
A module of its own, with no `app` import, so that `app.services` (which names the type) and the
receiver (`app.webhooks`) need not import the health blueprint, which imports the services.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from core.events import metric_label


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.webhooks = Counter(
            "merge_hold_webhooks",
            "Webhook deliveries by event and outcome (queued, ignored, ping, rejected, unavailable...)",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.webhook_seconds = Histogram(
            "merge_hold_webhook_seconds",
            "Time to acknowledge a webhook delivery",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=self.registry,
        )
        # The labelled counters by (event label, outcome): `labels()` takes a lock and builds a key on
        # every call, a cost per delivery (design §7's acknowledgement budget). Keyed by the table's
        # label, never the raw header, so it stays as small as the label set.
        self._webhook_counts: dict[tuple[str, str], Counter] = {}

    def count_webhook(self, event: str | None, outcome: str) -> None:
        # Labels come from the event table, so a sender cannot grow the label set.
        key = (metric_label(event), outcome)
        counter = self._webhook_counts.get(key)
        if counter is None:  # two threads may both get here: labels() hands both the same child
            counter = self._webhook_counts[key] = self.webhooks.labels(event=key[0], outcome=outcome)
        counter.inc()
