"""GPIO operations: blink an LED, react to a button edge, poll a button."""
