"""The behaviour layer: what the application *does* with the operations a plan sets up.

A plan's ``behaviour:`` block (``model.Behaviour``) states typed variables, triggers (boot, every
PERIOD, an operation's event, a condition becoming true), steps (print, set, if, repeat, while, wait,
wait_until, call/start a script, stop, exit, goto a state, act on an operation) and an optional state
machine, with expressions written in a small language (``expr``) that the tool parses, types and
unit-checks itself. ``compile`` turns the block into one typed IR (``ir``); the obligations (``checks``)
judge it; ``predict`` runs the IR in Python to derive the console trace the application must print
(``trace``); ``render`` writes the IR as C through each framework's templates. Plan text never reaches
C except through the escaping of its C context.

Steps are registered like op specs (``steps/<kind>.py`` defines ``STEP``): adding one is one module
plus its template macro, and no lowering branches on a step kind.
"""
