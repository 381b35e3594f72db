"""Benchmarks against the budgets of design §7: `make bench` runs `python -m bench`."""
