"""Independent verification of generated firmware: judged from the artifact itself, never the receipt.

``artifact.verify_sources`` runs the static checks (``static``: tree-sitter analysis of the C against the
SDK catalogs in ``sdk/``; ``config``: Kconfig, devicetree and HAL-configuration consistency). The ELF and
console verifiers live beside them (``elf``, ``console``). None of these modules imports the lowering.
"""
