"""What every ``rac-fw`` command shares, whichever package defines it: rendering and exit codes
(:mod:`.output`), progress on stderr (:mod:`.progress`) and the common options (:mod:`.options`).

It sits below the CLI and the domains, so a domain's command module imports it without reaching
the app that assembles every domain's commands."""
