"""Evidence sources. Built-ins: ``corpus`` (BM25 over a local collection)."""
