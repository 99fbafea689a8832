"""ISR → thread handoff: how an interrupt-context event reaches a thread without blocking."""

#: How often a lock-free ring consumer polls when the ring is empty (ms).
RING_POLL_MS = 10
