"""The typed semantic plan an agent submits: named resources plus a list of typed operations.

A plan states intent (``blink led0 every 500 ms``, ``sample ADC1 into rx_buf by DMA``) over named
objects. It never carries C code, addresses or register values; every field has a unit in its name
and a bounded range, identifiers match a strict pattern and the few free-text fields are short
printable ASCII, emitted into C only through the escaping layer (:mod:`~rac_fw.domains.firmware.plan.escape`).
"""
