"""Threading operations: bounded producer/consumer, mutex-protected shared state, fixed lock order."""

#: Period of the shared-state and lock-order demonstration threads (ms).
LOCK_PERIOD_MS = 100
#: How long a thread waits for a lock before backing off (ms): finite, so a bug shows as a count.
LOCK_TIMEOUT_MS = 50
