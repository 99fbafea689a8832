"""One module per behaviour step kind (``STEP = StepSpec(…)``); the registry walks this package."""
