"""ADC operations: one conversion, periodic sampling, and a multi-channel scan."""
