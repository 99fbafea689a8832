"""Independent verification of generated firmware: judged from the artifact itself, never the receipt.

``artifact.verify_sources`` runs the registered checks (``static``: tree-sitter analysis of the C against
the SDK catalogs and header models in ``sdk/``; ``config``: Kconfig, devicetree and HAL-configuration
consistency). The ELF and console verifiers live beside them (``elf``, ``console``). None of these modules
imports the lowering or the obligations.
"""
