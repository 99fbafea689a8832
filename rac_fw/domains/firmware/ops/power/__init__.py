"""Power operations: system sleep with wake sources, PM policy locks, device runtime power management."""
