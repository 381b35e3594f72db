"""The pump from the intake list to rq, and the sweep that asks GitHub to redeliver what failed."""
