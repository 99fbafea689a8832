"""PCB placement and routing on the contract runtime.

The agent states *relations* over named parts, pins, nets and regions (``board_edge``, ``decouple``,
``group``, ``route_matched`` …) — never a coordinate. A seeded realizer places (simulated annealing plus
legalization) and routes (grid A* with rip-up and reroute, vias, 45° segments); an independent verifier
(:mod:`.verify`) runs a shapely DRC and one geometric oracle per relation on the artifact alone.
"""
