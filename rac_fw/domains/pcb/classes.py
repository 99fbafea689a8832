"""Ordered classes → metric limits: the only place where a relation's word becomes millimetres.

Agents never state a distance; they say ``tight``/``close``/``loose`` and the solver and the verifier
both read the limit from here (docs/PCB.md reproduces this table). Distances are edge-to-edge gaps
(courtyard to board edge, courtyard to courtyard, pad to pad) unless said otherwise.
"""

from __future__ import annotations

CLASSES = ("tight", "close", "loose")

#: Largest gap (mm) between a part's courtyard and the named board edge.
EDGE_GAP = {"tight": 0.75, "close": 2.0, "loose": 4.0}
#: Largest gap (mm) between part a's courtyard and part b's courtyard (or b's pin pad).
NEAR_GAP = {"tight": 0.75, "close": 2.5, "loose": 5.0}
#: Largest gap (mm) between a decoupling capacitor's pad and the IC pin's pad on the same net.
DECOUPLE_GAP = {"tight": 1.0, "close": 2.5, "loose": 5.0}
#: Largest distance (mm) of a group member's centre from the group's centroid.
GROUP_SPREAD = {"tight": 3.0, "close": 6.0, "loose": 10.0}
#: Largest routed-length mismatch (mm) between matched nets or the two halves of a pair.
LENGTH_TOLERANCE = {"tight": 0.5, "close": 1.0, "loose": 2.0}
#: Fraction of a differential pair's length that must run coupled (within 2 track pitches).
PAIR_COUPLING = {"tight": 0.8, "close": 0.6, "loose": 0.4}

#: Residuals (mm) below which alignment and mirror symmetry count as exact (placement grid is 0.25 mm).
ALIGN_RESIDUAL = 0.05
SYMMETRY_RESIDUAL = 0.05

TABLES = {"board_edge": EDGE_GAP, "place_relative": NEAR_GAP, "decouple": DECOUPLE_GAP, "group": GROUP_SPREAD,
          "route_matched": LENGTH_TOLERANCE, "diff_pair": LENGTH_TOLERANCE}


def looser(cls: str) -> str | None:
    """The next looser class, or None for ``loose``."""
    i = CLASSES.index(cls)
    return CLASSES[i + 1] if i + 1 < len(CLASSES) else None
