"""Hardware counters: alarms on a counter device (Zephyr counter API), from the chip's timer facts.

A kernel timer (``timer_oneshot``) is scheduled by the system tick; a counter alarm is programmed into a
compare channel of a hardware counter, so its resolution and range are the counter's: one tick of its
clock, up to its top value. Both come from ``Target.timers`` (``bits``, ``clock``, ``channels``,
``zephyr_counter``), so the obligations can refuse a delay the counter cannot hold before anything is built.
"""
