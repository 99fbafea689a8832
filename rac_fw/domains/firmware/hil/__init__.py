"""The bench: a hardware map of boards (and QEMU "boards"), the runner that flashes and judges them, and
the pytest plugin that lets on-board tests be written as ordinary pytest tests."""
