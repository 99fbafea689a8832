"""Imported by the workers' fork server (:mod:`.worker`): every registered domain loaded and warmed
(``Domain.warm``), so a worker forked for a turn starts with what the turn needs already in memory."""

import gc

from rac_fw.domain import domain_names, load_domain

for _name in domain_names():
    try:
        load_domain(_name).warm()
    except Exception:  # a broken plugin is reported by the turn that uses it, not by the fork server
        continue

# Keep the warmed objects out of the collector's reach, so a forked worker does not copy every page
# they live on when it collects (the copy-on-write pages stay shared).
gc.freeze()
