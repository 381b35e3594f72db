"""The state layer: Redis reads and writes shared by the web tier and the workers (design §2).

Imports redis-py and `core` only — never Flask, PyGithub or the workers — so both sides may use it;
PyYAML too, for the one reader of the repo config file (`state.config_file`); and rq for the queue of the
jobs table (`state.queueing`, with `state.outgoing` and `state.subscriptions` enqueueing through it), so
the web tier queues a job by its address without importing the function (`tests/test_layers.py` checks it).
"""
