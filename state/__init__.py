"""The state layer: Redis reads and writes shared by the web tier and the workers (design §2).

Imports redis-py and `core` only — never Flask, rq, PyGithub or the workers — so both sides may use it;
PyYAML too, for the one reader of the repo config file (`state.config_file`).
"""
