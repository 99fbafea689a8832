"""The firmware domain's ``rac-fw`` commands: ``plan``, ``build``, ``verify``, ``targets``, ``hil``,
``doctor`` and ``calibrate firmware``, one module each (listed by :meth:`FirmwareDomain.commands`, which
names them so the CLI imports a command module only when that command runs)."""
