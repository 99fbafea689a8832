"""Core clock requests (``core_clock``), validated against the chip's PLL and limit facts."""
