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

    def count_webhook(self, event: str | None, outcome: str) -> None:
        # Labels come from the event table, so a sender cannot grow the label set.
        self.webhooks.labels(event=metric_label(event), outcome=outcome).inc()
