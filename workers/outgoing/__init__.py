"""Outgoing webhooks: the delivery job (`deliver`, one org endpoint's pending messages with its own backoff), the
signed and address-checked POST (`post`), and the freeze clock (`clock`) that records what begins and ends
by the clock alone. They import `workers.runtime` only; what is sent is decided in `core.outgoing`."""
