"""The dashboard's jobs: holds and lifts made on a PR's page (`commands.py`), queued by the web tier,
which never imports the workers."""
