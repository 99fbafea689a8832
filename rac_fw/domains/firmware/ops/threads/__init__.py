"""Threading operations: bounded producer/consumer, mutex-protected shared state, fixed lock order."""
