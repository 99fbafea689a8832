"""Memory operations: fixed-block slabs and stack-usage reporting."""
