"""Target facts: the typed model, loading fact packs, and importers (SVD, ST pin data)."""
