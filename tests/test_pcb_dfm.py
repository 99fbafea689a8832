"""DFM on realized boards (issue 30): no via in an SMD pad, none under an exposed pad's land pattern,
no same-net slot narrower than the clearance (meander legs). The counts come from the independent
verifier (``verify/dfm.py``); the first test shows each check catches a seeded violation, the second
realizes reference bundles and requires every count to be 0."""

from __future__ import annotations

from rac_fw.domains.pcb.artifact import BoardArtifact, Track, Via
from rac_fw.domains.pcb.board_tasks import board_tasks
from rac_fw.domains.pcb.dfm import exposed_pads, meander_pitch
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.realize import realize_board
from rac_fw.domains.pcb.tasks import all_tasks, get_task
from rac_fw.domains.pcb.verify import check_board
from rac_fw.domains.pcb.verify.dfm import dfm_checks
from rac_fw.domains.pcb.verify.geometry import BoardGeometry

#: real-board routing tasks that realize in a few seconds here (the 200-part BMS takes minutes)
QUICK_BOARDS = ("geiger_muller_counter_route", "makerverse_motor_driver_2ch_route",
                "makerverse_nano_power_shield_route", "osro_reflow_controller_route",
                "olimex_esp32c3_devkit_lipo_route", "tkey_mta1_usb_v1_route")


def _counts(task, art: BoardArtifact) -> dict[str, int]:
    geo, problems = BoardGeometry.build(task, art)
    assert not problems
    return {name: len(found) for name, found, _ in dfm_checks(task, geo, art)}


def test_each_dfm_check_catches_a_seeded_violation():
    task = get_task("route_matched_01")  # a QFN with an exposed pad, matched nets that need bumps
    action = PcbAction.model_validate(task.reference)
    art, _ = realize_board(task, action, 0)
    assert _counts(task, art) == {"dfm_via_in_pad": 0, "dfm_via_under_exposed_pad": 0, "dfm_same_net_gap": 0}
    qfn = next(c for c in task.components if exposed_pads(c.fp))
    ep = next(p for p in task.pads_at({}) if p.ref == qfn.ref and p.pin == "33")
    side = next(p for p in task.pads_at({}) if p.net and p.ref == qfn.ref and p.pin != "33")  # a ring pin
    r = task.board.rules
    w = r.track_width
    pitch = 0.25  # the old trombone: legs one grid step apart
    legs = [Track(net=side.net, layer="F.Cu", x1=1.0, y1=1.0, x2=1.0, y2=2.0, width=w),
            Track(net=side.net, layer="F.Cu", x1=1.0 + pitch, y1=2.0, x2=1.0 + pitch, y2=1.0, width=w)]
    seeded = art.model_copy(update={
        "vias": [*art.vias, Via(net=side.net, x=side.cx, y=side.cy, drill=r.via_drill, diameter=r.via_diameter),
                 Via(net=side.net, x=ep.cx, y=ep.cy, drill=r.via_drill, diameter=r.via_diameter)],
        "tracks": [*art.tracks, *legs]})
    counts = _counts(task, seeded)
    assert counts["dfm_via_in_pad"] == 2  # a ring pin's own net, and the exposed pad (an SMD pad too)
    assert counts["dfm_via_under_exposed_pad"] == 2  # both lie in the pad ring
    assert counts["dfm_same_net_gap"] == 1
    check = check_board(task, action, seeded.model_dump(mode="json"))
    codes = {e.code for e in check.evidence}
    assert {"E_DFM_VIA_IN_PAD", "E_DFM_VIA_UNDER_EXPOSED_PAD", "E_DFM_SAME_NET_GAP"} <= codes
    assert {v.predicate for v in check.verdicts if not v.passed} >= {
        "dfm_via_in_pad", "dfm_via_under_exposed_pad", "dfm_same_net_gap"}
    wide = [legs[0], legs[1].model_copy(update={"x1": 1.0 + meander_pitch(w, r.clearance),
                                                "x2": 1.0 + meander_pitch(w, r.clearance)})]
    assert _counts(task, art.model_copy(update={"tracks": [*art.tracks, *wide]}))["dfm_same_net_gap"] == 0


def test_realized_reference_boards_have_no_via_in_pad_no_via_under_exposed_pads_no_narrow_meanders():
    tasks = {n: t for n, t in all_tasks().items() if t.route and t.start is None}
    boards = board_tasks()
    tasks.update({n: boards[n] for n in QUICK_BOARDS})
    totals = {"dfm_via_in_pad": 0, "dfm_via_under_exposed_pad": 0, "dfm_same_net_gap": 0}
    vias = tuned = 0
    offenders: list[str] = []
    for name, task in sorted(tasks.items()):
        art, out = realize_board(task, PcbAction.model_validate(task.reference), 0)
        counts = _counts(task, art)
        if any(counts.values()):
            offenders.append(f"{name}: {counts}")
        for k, v in counts.items():
            totals[k] += v
        vias += len(art.vias)
        tuned += len(out.lengths)
    assert totals == {"dfm_via_in_pad": 0, "dfm_via_under_exposed_pad": 0, "dfm_same_net_gap": 0}, offenders
    assert len(tasks) == 59 + len(QUICK_BOARDS)
    assert vias > 100 and tuned > 20  # the boards do use vias and length tuning: the zeros mean something
