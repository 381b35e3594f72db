"""The GitHub client (App auth, installation tokens, the dry-run gateway) and PR facts from its payloads."""
