"""Job-shop scheduling on the contract runtime.

The agent states *relations* (a soft job priority and up to eight hard end-before-start pairs between
named operations); a backend (``bounded`` search or ``cpsat``) constructs the timetable; an independent
verifier (:mod:`.verify`) judges it and computes the makespan itself.
"""
