"""The watchdog: installed once with a timeout, fed from a thread, never disabled."""
