"""Change events (insert/update/delete, wal2json-like) and their resolution into current state."""
