"""``python -m rac_fw.cli`` runs the command line (same as the ``rac-fw`` script)."""

from rac_fw.cli import main

main()
