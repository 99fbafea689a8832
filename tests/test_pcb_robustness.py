"""The robustness study on one family member: perturbations are what they claim, and re-solving the
relations survives them where reused coordinates do not."""

from __future__ import annotations

import math

from rac_fw.domains.pcb.robustness import METHODS, PERTURBATIONS, Case, bootstrap, perturb, study
from rac_fw.domains.pcb.tasks import get_task


def test_perturbations_change_the_geometry_they_name():
    base = get_task("place_keepout_00")
    small = perturb(base, "board_shrink_20")
    assert (small.board.width, small.board.height) == (round(base.board.width * 0.8 / 0.25) * 0.25,
                                                       round(base.board.height * 0.8 / 0.25) * 0.25)
    assert math.isclose(small.regions["antenna"].x0, base.regions["antenna"].x0 * 0.8)
    shrunk = perturb(base, "footprint_shrink_25")
    assert shrunk.board == base.board
    u1, u1s = base.parts["U1"].fp.pads[0], shrunk.parts["U1"].fp.pads[0]
    assert math.isclose(u1s.w, u1.w * 0.75) and math.isclose(u1s.dx, u1.dx * 0.75)


def test_relational_resolve_survives_where_frozen_coordinates_fail():
    cases = study(["place_group_03"], seeds=[0])
    assert len(cases) == len(PERTURBATIONS) * len(METHODS)
    by = {(c.perturbation, c.method): c for c in cases}
    assert all(by[(p, "relational")].clean for p in PERTURBATIONS)
    assert not by[("board_shrink_20", "frozen")].clean  # parts now hang over the smaller board
    for p in PERTURBATIONS:
        best = by[(p, "best_of_3")]
        assert best.held == max(by[(p, m)].held for m in ("frozen", "affine", "preserve_legal"))


def test_family_bootstrap_interval_brackets_the_rate():
    cases = [Case(f"t{i}", f"f{i % 3}", "board_shrink_20", "frozen", 0, i % 2 == 0, 1, 2) for i in range(12)]
    rate, lo, hi = bootstrap(cases, resamples=200)
    assert rate == 0.5 and lo <= rate <= hi
