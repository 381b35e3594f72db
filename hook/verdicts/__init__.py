"""Where the guard reads verdicts: the sources (sources.py) and the raw-socket Redis client
(redis_client.py). Imports nothing here (design §7)."""
