"""The trajectory store: record types, the SQLite database, JSONL export/import, statistics."""
