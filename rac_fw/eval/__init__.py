"""The evaluation side: model clients, the metering bridge, interfaces, episodes, the store and reports.

``rac-fw eval`` poses a domain's tasks to a model through one *interface* (the tools the model may
call: a RAC action, or a baseline such as a Python program or hand-written C), judges every proposal
with the domain's verifier, and keeps every episode in a SQLite store. Every model call goes through
one :class:`~rac_fw.eval.bridge.MeteringBridge` (budget, tokens, wall time), whichever client speaks
to the model.
"""
