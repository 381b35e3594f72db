"""The agent guard: a Claude Code PreToolUse hook. Imports only the standard library and `core.keys`:
never Flask, PyGithub, redis-py or rq (start-up budget, design §7). A test proves it."""
