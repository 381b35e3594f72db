"""The foundation every process shares: the settings (`settings.py`, read once in `main` or a factory),
the one Redis connection factory (`redis_conn.py`), the argument parser of every command (`cliargs.py`)
and the logging set-up (`logs.py`).

It imports `core`, the standard library and redis-py only; `state/`, `app/`, `workers/` and the command
line (`merge_hold/`) stand on it, and the agent hook's tools use `cliargs` alone (which is why this
package body imports nothing).
"""
