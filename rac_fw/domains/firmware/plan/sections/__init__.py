"""One module per plan-level block (``bootloader:``, ``config:``…), each defining ``SECTION``.

A block configures the whole application rather than adding an operation: its model is a ``Plan``
field, its obligations and per-framework realizations are declared in its ``SectionSpec`` here, and
``plan.registry.sections`` finds it by walking this package.
"""
