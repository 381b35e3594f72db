"""From "this PR may have changed" to its status on GitHub, one way: outbox <- request <- write <- drain <-
recompute (`outbox.py` says how), with pacing, locks, merge groups and the freeze ruleset and marks."""
