"""KiCad data in the PCB domain: the S-expression reader, KiCad's own land patterns (imported from Debian's
kicad-footprints and checked against KiCad's "update from library"), export of rule areas, mounting
holes, pours and net classes that KiCad 6 reads back, and KiCad's DRC agreeing with the project's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.domains.pcb import kicad
from rac_fw.domains.pcb.export import kicad_pcb
from rac_fw.domains.pcb.footprints import LIBRARY_FILE, library, placed_pads
from rac_fw.domains.pcb.kicad_lib import DEFAULT_LIBRARY, LibraryError, dumps, library_document, read_library_footprint
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.realize import realize_board
from rac_fw.domains.pcb.sexpr import SexprError, parse, quote
from rac_fw.domains.pcb.tasks import all_tasks, get_task
from rac_fw.domains.pcb.verify import check_board

IN_CI = os.environ.get("CI", "").lower() == "true"
RUNNER = CliRunner()

# KiCad 6's pcbnew: each footprint against the library it names (pads, attributes, drawings, by layer).
LIBRARY_CHECK = """
import sys, json, pcbnew
board, lib_dir = pcbnew.LoadBoard(sys.argv[1]), sys.argv[2]
def pads(f):
    return sorted((p.GetName(), p.GetPosition().x, p.GetPosition().y, p.GetSize().x, p.GetSize().y, p.GetShape(),
                   p.GetDrillSize().x, p.GetDrillSize().y, round(p.GetOrientationDegrees(), 3) % 360,
                   p.GetAttribute()) for p in f.Pads())
def drawings(f, flip):
    out = {}
    for g in f.GraphicalItems():
        key = g.GetLayerName().replace("F.", "B.") if flip else g.GetLayerName()
        out[key] = out.get(key, 0) + 1
    return out
report = []
for fp in board.GetFootprints():
    fid = fp.GetFPID()
    lib = pcbnew.FootprintLoad(lib_dir + "/" + fid.GetLibNickname().wx_str() + ".pretty", fid.GetLibItemName().wx_str())
    lib.SetPosition(fp.GetPosition())
    lib.SetOrientation(fp.GetOrientation())
    flip = fp.GetLayer() == pcbnew.B_Cu
    if flip:
        lib.Flip(lib.GetPosition(), False)
    report.append([fp.GetReference(), pads(fp) == pads(lib), fp.GetAttributes() == lib.GetAttributes(),
                   drawings(fp, False) == drawings(lib, flip), len(fp.Pads())])
print(json.dumps(report))
"""

# KiCad 6's pcbnew: what a board holds besides footprints and copper.
BOARD_FACTS = """
import sys, json, pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
zones = [{"rule_area": z.GetIsRuleArea(), "net": z.GetNetname(), "no_tracks": z.GetDoNotAllowTracks(),
          "no_vias": z.GetDoNotAllowVias(), "no_footprints": z.GetDoNotAllowFootprints(),
          "layers": z.GetLayerSet().CuStack().size()} for z in board.Zones()]
holes = [fp.GetReference() for fp in board.GetFootprints() if fp.GetFPID().GetLibNickname().wx_str() == "MountingHole"]
classes = {n: (c.GetTrackWidth(), c.GetClearance()) for n, c in board.GetNetClasses().NetClasses().items()}
print(json.dumps({"zones": zones, "holes": holes, "classes": {str(k): v for k, v in classes.items()},
                  "copper": board.GetCopperLayerCount()}))
"""


def _need(ok: bool, message: str) -> None:
    if not ok:
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def kicad_library() -> Path:
    _need(DEFAULT_LIBRARY.is_dir(), f"{DEFAULT_LIBRARY} missing (.ci/setup installs Debian's kicad-footprints)")
    return DEFAULT_LIBRARY


@pytest.fixture(scope="module")
def pcbnew_python() -> str:
    exe = kicad.interpreter()
    _need(exe is not None, "KiCad's pcbnew is not importable (.ci/setup installs Debian's kicad)")
    assert exe is not None
    return exe


def _realized(task: str) -> tuple[dict, bool]:
    t = get_task(task)
    action = PcbAction.model_validate(t.reference)
    art = realize_board(t, action, 0)[0].model_dump(mode="json")
    return art, check_board(t, action, art).evidence == []


def _export(task: str, art: dict, folder: Path) -> Path:
    t = get_task(task)
    board = folder / f"{task}.kicad_pcb"
    board.write_text(kicad_pcb(t, art), encoding="utf-8")
    project = kicad.project(t.board.rules, task, t.smallest_hole)
    (folder / f"{task}.kicad_pro").write_text(project, encoding="utf-8")
    return board


# --- the reader --------------------------------------------------------------------------------------------
def test_sexpr_reads_kicad_strings_and_flags_of_every_version():
    node = parse('(footprint "Lib:A \\"quoted\\"" (layer "F.Cu") (at 1.5 -2 90) locked (hide yes)\n'
                 '  (pad "1" smd roundrect (at 0 0) (size 0.5 0.6) (layers "F.Cu" "F.Paste")))')
    assert node.atom(0) == 'Lib:A "quoted"' and node.value("layer") == "F.Cu"
    assert node.xy("at") == (1.5, -2.0) and node.first("at").atom(2) == "90"  # type: ignore[union-attr]
    assert node.flag("locked") and node.flag("hide") and not node.flag("placed")
    pad = node.first("pad")
    assert pad is not None and pad.first("layers").atoms() == ["F.Cu", "F.Paste"]  # type: ignore[union-attr]
    name = '/a\\b "c"'
    assert parse(f"(net 1 {quote(name)})").atom(1) == name


@pytest.mark.parametrize("text, where", [("(a (b c)", 8), ("(a))", 3), ('(a "open)', 2), ("()", 1), ("", 0)])
def test_sexpr_rejects_malformed_text_with_the_offset(text, where):
    with pytest.raises(SexprError) as err:
        parse(text)
    assert err.value.offset == where and "at byte" in str(err.value)


# --- KiCad's land patterns --------------------------------------------------------------------------------
def test_land_patterns_are_kicads_with_exposed_pads_and_pin1_origins():
    lib = library()
    sot = lib["Package_TO_SOT_SMD:SOT-23"]
    assert {(p.name, p.dx, p.w, p.h) for p in sot.pads} == {("1", -0.9375, 1.475, 0.6), ("2", -0.9375, 1.475, 0.6),
                                                             ("3", 0.9375, 1.475, 0.6)}
    qfn = lib["Package_DFN_QFN:QFN-32-1EP_5x5mm_P0.5mm_EP3.45x3.45mm"]
    ep = qfn.pad("33")
    assert ep is not None and (ep.w, ep.h, ep.dx, ep.dy) == (3.45, 3.45, 0.0, 0.0) and len(qfn.apertures) == 9
    usb = lib["Connector_USB:USB_C_Receptacle_HRO_TYPE-C-31-M-12"]
    assert len([p for p in usb.pads if p.kind == "smd"]) == 16 and {p.kind for p in usb.pads} == {
        "smd", "thru_hole", "np_thru_hole"}
    header = lib["Connector_PinHeader_2.54mm:PinHeader_1x04_P2.54mm_Vertical"]
    assert header.pad("1").dx == header.pad("1").dy == 0.0 and header.attr == "through_hole"  # type: ignore[union-attr]
    assert sot.attr == "smd" and all(fp.graphics for fp in lib.values())


def test_a_bottom_side_part_is_the_top_pattern_mirrored():
    sot = library()["Package_TO_SOT_SMD:SOT-23"]
    top = {p.pin: p for p in placed_pads("Q1", sot, 10.0, 10.0, 90, {}, "top")}
    # KiCad's flip mirrors top-to-bottom about the part's origin and negates its angle (90 → 270)
    bottom = {p.pin: p for p in placed_pads("Q1", sot, 10.0, 10.0, 270, {}, "bottom")}
    for pin in ("1", "2", "3"):
        assert (bottom[pin].cx, bottom[pin].cy) == (pytest.approx(top[pin].cx), pytest.approx(20.0 - top[pin].cy))
        assert (top[pin].layers, bottom[pin].layers) == ("F", "B")


def test_the_library_file_is_what_the_importer_reads_from_kicad(kicad_library):
    ids = list(json.loads(LIBRARY_FILE.read_text(encoding="utf-8"))["footprints"])
    assert dumps(library_document(ids, kicad_library)) == LIBRARY_FILE.read_text(encoding="utf-8")
    with pytest.raises(LibraryError, match="does not exist"):
        read_library_footprint("Package_SO:SOIC-9_Imaginary", kicad_library)
    result = RUNNER.invoke(app, ["pcb", "import-footprints", "--library", "/nonexistent"])
    assert result.exit_code == 2 and "E_LIBRARY" in result.output


def test_exported_footprints_equal_the_library_so_update_from_library_is_a_no_op(tmp_path, kicad_library,
                                                                                 pcbnew_python):
    names = ["combo_usb_00", "place_keepout_00", "route_4layer_01"]
    ids = {c.footprint for n in names for c in get_task(n).components}
    assert len(ids) >= 9
    for name in names:
        board = _export(name, _realized(name)[0], tmp_path)
        done = subprocess.run([pcbnew_python, "-c", LIBRARY_CHECK, str(board), str(kicad_library)],
                              capture_output=True, text=True, timeout=300, check=True)
        rows = json.loads(done.stdout.strip().splitlines()[-1])
        assert len(rows) == len(get_task(name).components)
        assert all(pads and attr and drawings for _, pads, attr, drawings, _ in rows), rows


# --- export of board facts and KiCad's DRC ----------------------------------------------------------------
def test_rule_areas_mounting_holes_pours_and_net_classes_reach_kicad(tmp_path, pcbnew_python):
    art, ok = _realized("place_keepout_00")
    assert ok
    board = _export("place_keepout_00", art, tmp_path)
    facts = json.loads(subprocess.run([pcbnew_python, "-c", BOARD_FACTS, str(board)], capture_output=True, text=True,
                                      timeout=120, check=True).stdout.strip().splitlines()[-1])
    rule_areas = [z for z in facts["zones"] if z["rule_area"]]
    assert len(rule_areas) == 4 and all(z["no_tracks"] and z["no_vias"] and not z["no_footprints"] for z in rule_areas)
    assert sorted(facts["holes"]) == ["H1", "H2", "H3", "H4"]
    # a real board: its pours, rule areas and derived net classes, on 4 layers
    real = get_task("pico_ice_rev2_route")
    empty = {"placements": {c.ref: {"x": c.fixed.x, "y": c.fixed.y, "rot": c.fixed.rot}  # type: ignore[union-attr]
                            for c in real.components}}
    board = _export("pico_ice_rev2_route", empty, tmp_path)
    facts = json.loads(subprocess.run([pcbnew_python, "-c", BOARD_FACTS, str(board)], capture_output=True, text=True,
                                      timeout=300, check=True).stdout.strip().splitlines()[-1])
    pours = [z for z in facts["zones"] if not z["rule_area"]]
    assert facts["copper"] == 4 and len(pours) == len(real.board.zones) and {z["net"] for z in pours} >= {"GND"}
    wide = real.board.rules.net_classes[-1]
    assert facts["classes"][wide.name][0] == round(wide.track_width * 1e6)


def test_kicad_drc_agrees_on_every_routed_quick_board_and_counts_unrouted_by_design_apart(tmp_path, pcbnew_python):
    routed = [n for n, t in all_tasks().items() if t.route]
    assert len(routed) == 59
    boards = []
    for name in routed:
        art, ok = _realized(name)
        assert ok, name  # the project's DRC and every relation: clean
        boards.append(_export(name, art, tmp_path))
    reports = kicad.run_drc_many(boards)
    bad = {b.stem: (r.violations, r.unconnected, r.details[:2]) for b, r in zip(boards, reports, strict=True)
           if r.violations or r.unconnected}
    assert not bad
    # a placement board: KiCad lists its connections as unconnected; they are unrouted by design
    placement = _export("place_edge_00", _realized("place_edge_00")[0], tmp_path)
    report = kicad.run_drc(placement, routed=False)
    assert (report.violations, report.unconnected) == (0, 0) and report.unrouted_by_design > 0
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps(get_task("place_edge_00").reference), encoding="utf-8")
    out = tmp_path / "cli"
    result = RUNNER.invoke(app, ["pcb", "export", "place_edge_00", str(bundle), "--out", str(out), "--kicad-drc"])
    assert result.exit_code == 0, result.output
    assert "0 violation(s), 0 unconnected item(s)" in result.output and "unrouted by design" in result.output
