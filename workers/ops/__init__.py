"""Running it: the worker process and its CLI, the scheduler, the watchdog, the reconcile."""
