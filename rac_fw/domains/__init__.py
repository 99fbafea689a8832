"""Domain plugins shipped with rac-fw (each registered through the ``rac_fw.domains`` entry points)."""
