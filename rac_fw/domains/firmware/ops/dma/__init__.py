"""DMA operations: memory-to-memory copy and peripheral-to-memory reception."""
