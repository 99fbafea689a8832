"""ISR → thread handoff: how an interrupt-context event reaches a thread without blocking."""
