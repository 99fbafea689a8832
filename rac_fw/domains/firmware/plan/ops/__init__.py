"""One typed model per plan operation, grouped by family (one module per family)."""
