"""Windows, window assigners, triggers, evictors and the merging window set."""
