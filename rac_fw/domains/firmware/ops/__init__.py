"""One module per plan operation, grouped by family: ``ops/<family>/<op>.py``.

Each module declares the operation's model and its ``SPEC`` (``plan.spec.OpSpec``): flags, the
fields naming board items, and one realization per framework with the view function it renders
through. ``plan.registry`` finds them by walking this package; nothing else lists them.
"""
