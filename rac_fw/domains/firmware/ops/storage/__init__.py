"""Storage operations: key-value records and raw flash-area writes, checked against the flash facts."""
