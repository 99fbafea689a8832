"""The PCB domain end to end: typed relation actions, seeded realization, the independent verifier
(DRC + relation oracles), repair evidence, forged artifacts, CLI submit/replay and KiCad export."""

from __future__ import annotations

import ast
import copy
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
import yaml
from shapely import LineString, Point, Polygon
from shapely.ops import nearest_points
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.contract import Action, Receipt, Status, sha256_of
from rac_fw.domain import load_domain
from rac_fw.domains.pcb import kicad
from rac_fw.domains.pcb.domain import PcbDomain
from rac_fw.domains.pcb.export import kicad_pcb, svg
from rac_fw.domains.pcb.footprints import library, placed_pads
from rac_fw.domains.pcb.tasks import all_tasks, get_task
from rac_fw.runtime import Episode

IN_CI = os.environ.get("CI", "").lower() == "true"
PCB_DIR = Path(__file__).resolve().parents[1] / "rac_fw" / "domains" / "pcb"
RUNNER = CliRunner()


def _cli(*args: str):
    """The real ``rac-fw`` Typer app, in process (one subprocess smoke test below covers the entry point)."""
    return RUNNER.invoke(app, list(args))


@pytest.fixture(scope="module")
def domain() -> PcbDomain:
    dom = load_domain("pcb")
    assert isinstance(dom, PcbDomain)
    return dom


def _submit(domain: PcbDomain, task: str, payload: dict, seed: int = 0):
    return Episode(domain, task, seed=seed).submit(Action(domain="pcb", task=task, payload=payload))


def _realized(domain: PcbDomain, task: str):
    validation = domain.validate(task, Action(domain="pcb", task=task, payload=get_task(task).reference))
    assert validation.ok, validation.evidence
    return validation.action, domain.realize(task, validation.action, seed=0)


def _forge(realization, artifact: dict):
    """The artifact replaced, its hash recomputed, and a receipt that claims success."""
    return realization.model_copy(update={"artifact": artifact, "artifact_hash": sha256_of(artifact),
                                          "receipt": Receipt(realized=["everything"], claims_success=True,
                                                             notes=["all relations hold, DRC clean"])})


def test_suite_has_the_papers_proportions():
    tasks = all_tasks()
    assert len(tasks) == 98
    assert Counter(t.category for t in tasks.values()) == {"routing": 42, "placement": 31, "combined": 17,
                                                           "repair": 8}
    assert all(t.reference["relations"] for t in tasks.values())
    assert all(t.start is not None for t in tasks.values() if t.category == "repair")
    kinds = {r["kind"] for t in tasks.values() for r in t.reference["relations"]}
    assert kinds == {"board_edge", "place_relative", "align", "symmetric", "group", "keepout", "decouple",
                     "route_matched", "diff_pair", "layer_preference", "via_limit", "route_priority"}
    assert {t.board.layers for t in tasks.values()} == {2, 4}


def test_footprints_cover_the_common_packages():
    names = " ".join(library())
    for pkg in ("0402", "0603", "0805", "SOT-23", "SOIC-8", "QFN-32", "QFN-48", "TQFP-48", "TQFP-64", "PinHeader",
                "USB_C", "Crystal", "MountingHole"):
        assert pkg in names
    qfn = library()["Package_DFN_QFN:QFN-32-1EP_5x5mm_P0.5mm_EP3.45x3.45mm"]
    pads = placed_pads("U1", qfn, 10.0, 10.0, 90, {})
    assert len(pads) == 33 and len({(p.cx, p.cy) for p in pads}) == 33  # 32 pins and the exposed pad


def test_observation_names_everything_and_states_no_answer(domain):
    obs = domain.observe("combo_usb_00")
    data = obs.data
    assert {p["ref"] for p in data["parts"]} == {"J1", "U2", "C1", "C2", "U1", "C3", "R1", "R2"}
    assert all(p["placed"] is None for p in data["parts"])
    assert data["board"]["rules"]["clearance_mm"] == 0.15 and data["classes_mm"]["decouple"]["tight"] == 1.0
    assert "relations" not in json.dumps(data["parts"])
    detail = domain.observe("combo_usb_00", "J1")
    assert {p["pin"] for p in detail.data["pads"]} >= {"A6", "A7", "B6", "B7"}
    assert {p["net"] for p in detail.data["pads"] if p["pin"] in ("A6", "A7")} == {"DP", "DN"}
    with pytest.raises(LookupError, match="names no part"):
        domain.observe("combo_usb_00", "Q99")


@pytest.mark.parametrize("relation, location", [
    ({"kind": "board_edge", "ref": "J1", "side": "left", "x": 3.0}, "payload.relations[0].board_edge.x"),
    ({"kind": "place_relative", "a": "R1", "b": "D1", "distance": 0.5}, "payload.relations[0].place_relative.distance"),
    ({"kind": "group", "refs": ["U1"], "spread": "close"}, "payload.relations[0].group.refs"),
])
def test_coordinates_and_numbers_are_rejected_with_a_location(domain, relation, location):
    fb = _submit(domain, "combo_mcu_00", {"relations": [relation]})
    assert fb.status is Status.INVALID
    assert [e.location for e in fb.evidence] == [location]
    assert all(e.code == "E_SCHEMA" for e in fb.evidence)


def test_an_empty_bundle_fails_on_the_tasks_requirements(domain):
    obs = domain.observe("place_decouple_01")
    assert any("decouples pin U1." in r and "1.0 mm" in r for r in obs.data["requirements"])
    fb = _submit(domain, "place_decouple_01", {"relations": []})
    assert fb.status is Status.FAIL
    unmet = [e for e in fb.evidence if e.code == "E_REQUIREMENT"]
    assert unmet and unmet[0].location.startswith("task.requirements[")
    fixed = {"relations": []}
    for e in unmet:
        fixed = e.relaxations[0].apply(fixed)
    assert _submit(domain, "place_decouple_01", fixed).status is Status.PASS


def test_unknown_names_are_located_with_a_repair(domain):
    payload = {"relations": [{"kind": "decouple", "cap": "C1", "pin": "U2.9"},
                             {"kind": "board_edge", "ref": "J11", "side": "top"},
                             {"kind": "layer_preference", "net": "DP", "layer": "In1.Cu"}]}
    fb = _submit(domain, "combo_usb_00", payload)
    assert fb.status is Status.INVALID
    by_code = {e.code: e for e in fb.evidence}
    assert by_code["E_UNKNOWN_PIN"].location == "payload.relations[0].pin"
    assert by_code["E_UNKNOWN_PART"].location == "payload.relations[1].ref"
    assert by_code["E_UNKNOWN_LAYER"].location == "payload.relations[2].layer"
    fix = by_code["E_UNKNOWN_PART"].relaxations[0]
    assert fix.apply(payload)["relations"][1]["ref"] == "J1"


def test_realization_is_deterministic_per_seed_and_passes(domain):
    for task in ("route_crossing_05", "place_keepout_00"):
        action, first = _realized(domain, task)
        _, again = _realized(domain, task)
        assert first.artifact_hash == again.artifact_hash
        assert domain.verify(task, action, first).ok
    crossing = _realized(domain, "route_crossing_05")[1].artifact
    assert crossing["vias"] and {t["layer"] for t in crossing["tracks"]} >= {"F.Cu", "B.Cu"}
    assert any(t["x1"] != t["x2"] and t["y1"] != t["y2"] for t in crossing["tracks"])  # 45° segments


def test_two_caps_tight_to_one_pin_return_conflict_magnitude_and_a_passing_relaxation(domain):
    task = get_task("repair_pin_00")
    assert task.start is not None
    episode = Episode(domain, task.name, budget=2)
    first = episode.submit(Action(domain="pcb", task=task.name, payload=task.start))
    assert first.status is Status.FAIL
    conflict = next(e for e in first.evidence if e.code == "E_RELATION_CONFLICT")
    assert len(conflict.objects) == 2 and all("decouple" in o and "U1.4" in o for o in conflict.objects)
    assert conflict.magnitudes and conflict.magnitudes[0].unit == "mm" and conflict.magnitudes[0].value > 0
    passing = [r for r in conflict.relaxations if r.description.endswith("(re-solved: passes)")]
    assert passing
    second = episode.submit(Action(domain="pcb", task=task.name, payload=passing[0].apply(task.start)))
    assert second.status is Status.PASS


def test_forged_track_into_clearance_is_caught_despite_the_receipt(domain):
    task = "route_fanout_03"
    action, honest = _realized(domain, task)
    assert domain.verify(task, action, honest).ok
    art = copy.deepcopy(honest.artifact)
    t = get_task(task)
    clearance = t.board.rules.clearance
    pads = t.pads_at({ref: t.parts[ref].fixed for ref in t.parts})  # type: ignore[misc]
    # the track closest to a pad of another net, moved straight toward it to 0.05 mm inside the clearance
    best = None
    for i, tr in enumerate(art["tracks"]):
        copper = LineString([(tr["x1"], tr["y1"]), (tr["x2"], tr["y2"])]).buffer(tr["width"] / 2)
        for p in pads:
            if p.net != tr["net"] and tr["layer"] in p.on(t.board.layer_names) and not p.hole_only:
                pad = Point(p.cx, p.cy).buffer(p.w / 2) if p.round else Polygon(p.outline())
                d = copper.distance(pad)
                if best is None or d < best[0]:
                    best = (d, i, p, nearest_points(copper, pad))
    assert best is not None
    d, i, p, (a, b) = best
    shift = d - (clearance - 0.05)
    ux, uy = (b.x - a.x) / d, (b.y - a.y) / d
    tr = art["tracks"][i]
    for end in ("1", "2"):
        tr["x" + end] += ux * shift
        tr["y" + end] += uy * shift
    verification = domain.verify(task, action, _forge(honest, art))
    assert not verification.ok
    assert not next(v for v in verification.verdicts if v.predicate == "drc_clearance").passed
    pair = [e for e in verification.evidence if e.code == "E_DRC_CLEARANCE"
            and set(e.objects) == {f"pad {p.ref}.{p.pin}", f"track {i} ({tr['net']})"}]
    assert len(pair) == 1 and math.isclose(pair[0].magnitudes[0].value, 0.05, abs_tol=1e-3)


def test_forged_part_moved_off_its_edge_is_caught_despite_the_receipt(domain):
    task = "place_edge_00"
    action, honest = _realized(domain, task)
    assert domain.verify(task, action, honest).ok
    art = copy.deepcopy(honest.artifact)
    side = next(r.side for r in action.relations if r.kind == "board_edge" and r.ref == "J1")
    delta = {"left": (3, 0), "right": (-3, 0), "top": (0, 3), "bottom": (0, -3)}[side]
    art["placements"]["J1"]["x"] += delta[0]
    art["placements"]["J1"]["y"] += delta[1]
    verification = domain.verify(task, action, _forge(honest, art))
    failed = {v.predicate for v in verification.verdicts if not v.passed}
    assert "relations[0] board_edge" in failed
    edge = next(e for e in verification.evidence if e.location == "payload.relations[0]")
    assert edge.magnitudes[0].value > 2.0 and edge.magnitudes[0].unit == "mm"


def test_malformed_artifact_is_evidence_not_a_crash(domain):
    action, honest = _realized(domain, "route_fanout_01")
    for art in ({"placements": {"U1": {"x": "far"}}}, {"placements": {}, "tracks": [{"net": "A0"}]},
                {"placements": {"ZZ": {"x": 1, "y": 1}}}):
        verification = domain.verify("route_fanout_01", action, _forge(honest, art))
        assert not verification.ok
        assert {e.code for e in verification.evidence} == {"E_ARTIFACT"}


def test_verifier_imports_neither_the_realizer_nor_the_receipt():
    forbidden = {"rac_fw.domains.pcb.realize", "rac_fw.domains.pcb.place", "rac_fw.domains.pcb.route",
                 "rac_fw.domains.pcb.kernels", "rac_fw.domains.pcb.domain"}
    files = sorted((PCB_DIR / "verify").glob("*.py"))
    assert len(files) >= 4
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                names = []
            assert not any(n in forbidden or n.startswith(tuple(f + "." for f in forbidden)) for n in names), path
            if isinstance(node, ast.Attribute):
                assert node.attr != "receipt", f"{path} reads a receipt"
            if isinstance(node, ast.Name):
                assert node.id != "Receipt", f"{path} names Receipt"


def test_cli_submit_and_replay(tmp_path):
    bundle = tmp_path / "bundle.yaml"
    bundle.write_text(yaml.safe_dump(get_task("route_matched_02").reference), encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    # the installed entry point, once, in its own process
    done = subprocess.run([sys.executable, "-m", "rac_fw.cli", "submit", "pcb", "route_matched_02", str(bundle),
                           "--trace", str(trace), "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "pass"
    bad = tmp_path / "bad.yaml"
    bad.write_text("relations:\n  - {kind: route_matched, nets: [D0, D9]}\n", encoding="utf-8")
    # A passed episode is closed (docs/PROTOCOL.md), so the invalid bundle opens an episode of its own.
    second = tmp_path / "second.jsonl"
    result = _cli("submit", "pcb", "route_matched_02", str(bad), "--trace", str(second), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["evidence"][0]["location"].endswith("payload.relations[0].nets[1]")
    result = _cli("replay", str(trace))
    assert result.exit_code == 0, result.stdout
    assert "replayed 1 turn(s): 0 divergence(s)" in result.stdout


def test_export_writes_kicad_and_svg_and_never_overwrites(tmp_path):
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps(get_task("combo_mcu_01").reference), encoding="utf-8")
    args = ("pcb", "export", "combo_mcu_01", str(bundle), "--out", str(tmp_path))
    result = _cli(*args)
    assert result.exit_code == 0, result.stdout
    text = (tmp_path / "combo_mcu_01.kicad_pcb").read_text(encoding="utf-8")
    assert text.startswith("(kicad_pcb (version 20211014)") and text.count("(footprint ") == 6
    assert text.count("(") == text.count(")")
    assert json.loads((tmp_path / "combo_mcu_01.kicad_pro").read_text())["net_settings"]["classes"][0][
        "clearance"] == 0.15
    root = ET.fromstring((tmp_path / "combo_mcu_01.svg").read_text(encoding="utf-8"))
    assert root.tag.endswith("svg") and len(root) > 20
    before = (tmp_path / "combo_mcu_01.svg").stat().st_mtime_ns
    again = _cli(*args)
    assert again.exit_code == 2 and "E_FILE_EXISTS" in again.output
    assert (tmp_path / "combo_mcu_01.svg").stat().st_mtime_ns == before


def test_kicad_drc_agrees_with_the_project_drc(domain, tmp_path):
    if not kicad.available():
        if IN_CI:
            pytest.fail("KiCad's pcbnew is not importable (.ci/setup installs Debian's kicad)")
        pytest.skip("KiCad's pcbnew is not importable")
    for task in ("route_fanout_03", "route_crossing_05", "combo_mcu_01"):
        action, real = _realized(domain, task)
        assert domain.verify(task, action, real).ok
        t = get_task(task)
        board = tmp_path / f"{task}.kicad_pcb"
        board.write_text(kicad_pcb(t, real.artifact), encoding="utf-8")
        (tmp_path / f"{task}.kicad_pro").write_text(kicad.project(t.board.rules, task), encoding="utf-8")
        report = kicad.run_drc(board)
        assert (report.violations, report.unconnected) == (0, 0), report.details
    # a short between two nets: KiCad sees it too
    action, real = _realized(domain, "route_fanout_03")
    art = copy.deepcopy(real.artifact)
    victim = next(tr for tr in art["tracks"] if tr["net"] != art["tracks"][0]["net"])
    art["tracks"].append({**art["tracks"][0], "x2": victim["x1"], "y2": victim["y1"]})
    assert not domain.verify("route_fanout_03", action, _forge(real, art)).ok
    board = tmp_path / "forged.kicad_pcb"
    board.write_text(kicad_pcb(get_task("route_fanout_03"), art), encoding="utf-8")
    (tmp_path / "forged.kicad_pro").write_text(kicad.project(get_task("route_fanout_03").board.rules, "forged"),
                                               encoding="utf-8")
    assert kicad.run_drc(board).violations > 0


def test_svg_of_every_category_renders(domain):
    for task in ("route_diffpair_01", "place_align_00", "combo_usb_00", "route_4layer_01"):
        _, real = _realized(domain, task)
        root = ET.fromstring(svg(get_task(task), real.artifact))
        assert root.find("{http://www.w3.org/2000/svg}title").text == task
