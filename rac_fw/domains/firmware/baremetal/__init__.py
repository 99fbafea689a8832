"""Bare-metal generators: device header, startup/vector table and linker script, all from target facts.

Nothing here is copied from a vendor SDK: the device header comes from the SVD-derived ``svd.json``,
the vector table from the SVD interrupt list, the linker script from the memory facts and
``obligations.placement``. ``lower/baremetal.py`` assembles them with the per-operation templates.
"""
