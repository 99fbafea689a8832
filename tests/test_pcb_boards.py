"""The real-board suite: tasks derived from the 13 open-hardware KiCad boards in ../shared/pcb_boards.

The committed documents must be exactly what the importer derives from the boards; the land patterns it
reads must sit where KiCad's own pcbnew puts them; the relations it derives must hold on the designer's
layout (measured by the project's oracles); and the data records each board's source and licence."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.contract import Action
from rac_fw.domains.pcb import kicad
from rac_fw.domains.pcb.board_derive import derive, dumps_board, human_artifact
from rac_fw.domains.pcb.board_tasks import BOARDS_DIR, board_documents, board_tasks
from rac_fw.domains.pcb.domain import PcbDomain
from rac_fw.domains.pcb.export import kicad_pcb
from rac_fw.domains.pcb.footprints import placed_pads
from rac_fw.domains.pcb.kicad_board import net_ids, read_board
from rac_fw.domains.pcb.model import PcbAction
from rac_fw.domains.pcb.tasks import get_task
from rac_fw.domains.pcb.verify import check_board

IN_CI = os.environ.get("CI", "").lower() == "true"
RUNNER = CliRunner()
PADS = """
import sys, json, pcbnew
board = pcbnew.LoadBoard(sys.argv[1])
print(json.dumps([[fp.GetReference(), p.GetName(), p.GetPosition().x / 1e6, p.GetPosition().y / 1e6,
                   *(v / 1e6 for v in (p.GetBoundingBox().GetX(), p.GetBoundingBox().GetY(),
                                       p.GetBoundingBox().GetRight(), p.GetBoundingBox().GetBottom()))]
                  for fp in board.GetFootprints() for p in fp.Pads() if p.IsOnCopperLayer()]))
"""


@pytest.fixture(scope="module")
def boards(shared_dir: Path) -> Path:
    folder = shared_dir / "pcb_boards"
    assert folder.is_dir()
    return folder


def test_the_suite_has_at_least_30_real_board_tasks_with_sizes_and_sources():
    tasks = board_tasks()
    assert len(board_documents()) == 13 and len(tasks) >= 30
    assert Counter(t.category for t in tasks.values()).keys() == {"routing", "placement", "combined", "repair"}
    for t in tasks.values():
        assert t.suite == "boards" and t.source and t.baseline
        assert re.match(r"https://github.com/", t.source["repository"]) and len(t.source["commit"]) == 40
        assert t.source["licence"] and t.source["sha256"]
    sizes = sorted(len(t.components) for t in tasks.values() if t.category == "routing")
    assert sizes[0] >= 30 and sizes[-1] >= 200
    assert {t.board.layers for t in tasks.values()} == {2, 4, 6}
    assert any(t.board.zones for t in tasks.values()) and any(t.board.regions for t in tasks.values())
    assert any(t.board.rules.net_classes for t in tasks.values())
    assert any(c.side == "bottom" for t in tasks.values() for c in t.components)
    # compact: derived facts, not the boards (the 13 .kicad_pcb files are 17 MB)
    assert sum(p.stat().st_size for p in BOARDS_DIR.glob("*.json")) < 1_000_000
    assert not list(BOARDS_DIR.glob("*.kicad_pcb"))


def test_tasks_lists_real_boards_with_part_and_net_counts_beside_the_quick_suite():
    result = RUNNER.invoke(app, ["tasks", "pcb"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    quick = [ln for ln in lines if " quick " in ln]
    real = [ln for ln in lines if " boards " in ln]
    assert len(quick) == 98 and len(real) == len(board_tasks())
    row = next(ln for ln in real if ln.startswith("libresolar_bms_c1_route "))
    assert re.search(r"204 parts\s+138 nets 4 layers, 0 to place", row), row


def test_net_names_become_identifiers_without_clashes():
    ids = net_ids(["/GPIO8\\USER_LED", "Net-(Q12-Pad2)", "+3V3", "/~{USB_BOOT}", "/Power Supply/SW", "3V3", "+3V3 "])
    assert ids["/GPIO8\\USER_LED"] == "GPIO8_USER_LED" and ids["Net-(Q12-Pad2)"] == "Net-_Q12-Pad2"
    assert ids["+3V3"] == "+3V3" and ids["/~{USB_BOOT}"] == "nUSB_BOOT" and ids["3V3"] == "N3V3"
    assert len(set(ids.values())) == len(ids)
    PcbAction.model_validate({"relations": [{"kind": "via_limit", "net": n, "max": 1} for n in ids.values()]})


@pytest.mark.parametrize("name", sorted(board_documents()))
def test_committed_documents_are_what_the_importer_derives(boards, name):
    doc = derive(boards / name)
    assert dumps_board(doc) == (BOARDS_DIR / f"{name}.json").read_text(encoding="utf-8")
    source = (boards / name / "SOURCE.md").read_text(encoding="utf-8")
    assert doc["source"]["commit"] in source and doc["source"]["licence"] in source


@pytest.mark.parametrize("name", ["makerverse_nano_power_shield", "tkey_mta1_usb_dev", "pico_ice_rev2",
                                  "libresolar_bms_c1"])
def test_land_patterns_sit_where_kicad_puts_them(boards, name):
    """KiCad 6 boards (pcbnew 6.0 reads them): every copper pad's centre and bounding box agree."""
    exe = kicad.interpreter()
    if exe is None:
        if IN_CI:
            pytest.fail("KiCad's pcbnew is not importable (.ci/setup installs Debian's kicad)")
        pytest.skip("KiCad's pcbnew is not importable")
    path = boards / name / "board.kicad_pcb"
    theirs = json.loads(subprocess.run([exe, "-c", PADS, str(path)], capture_output=True, text=True, timeout=300,
                                       check=True).stdout.strip().splitlines()[-1])
    kb = read_board(path)
    ours: dict[tuple[str, str], list] = {}
    for p in kb.parts:
        for pad in placed_pads(p.ref, p.land, p.x, p.y, p.rot, p.pins, p.side):
            ours.setdefault((p.ref, pad.pin), []).append(pad)
    ref, pin, x, y, *_ = theirs[0]
    first = ours[(ref, pin)][0]
    dx, dy = x - first.cx, y - first.cy  # the reader moves the outline's corner to (0, 0)
    for ref, pin, x, y, x0, y0, x1, y1 in theirs:
        best = min(max(abs(p.cx + dx - x), abs(p.cy + dy - y), *(abs(a - b) for a, b in zip(
            (p.bbox()[0] + dx, p.bbox()[1] + dy, p.bbox()[2] + dx, p.bbox()[3] + dy), (x0, y0, x1, y1), strict=True)))
            for p in ours[(ref, pin)])
        assert best < 2e-4, (ref, pin)


@pytest.mark.parametrize("name", ["olimex_esp32c3_devkit_lipo", "moteus_c1"])
def test_derived_relations_hold_on_the_designers_layout(boards, name):
    kb = read_board(boards / name / "board.kicad_pcb")
    for task in (get_task(f"{name}_route"), get_task(f"{name}_combo")):
        action = PcbAction.model_validate(task.reference)
        art = human_artifact(kb, task.nets).model_dump(mode="json")
        check = check_board(task, action, art)
        assert check.relations and all(r.passed for r in check.relations)
        assert all(v.passed for v in check.verdicts if v.predicate.startswith("requirements"))
    human = board_documents()[name]["human"]
    assert human["drc"]["drc_unrouted"] == 0  # the designer's copper (pours filled) connects every net


def test_a_real_board_task_observes_and_validates():
    dom = PcbDomain()
    obs = dom.observe("pico_ice_rev2_place")
    assert obs.data["board"]["outline_mm"] and obs.data["board"]["pours"]
    assert any(p.get("side") == "bottom" for p in obs.data["parts"])
    placed = [p for p in obs.data["parts"] if p["placed"] is not None]
    assert 0 < len(placed) < len(obs.data["parts"])
    assert "Real board pico_ice_rev2" in obs.summary and "MIT" in obs.summary
    v = dom.validate("pico_ice_rev2_place", Action(domain="pcb", task="pico_ice_rev2_place",
                                                   payload=get_task("pico_ice_rev2_place").reference))
    assert v.ok, v.evidence


def test_import_board_refuses_what_is_not_a_board(tmp_path):
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "board.kicad_pcb").write_text("(kicad_sch (version 20211014))\n", encoding="utf-8")
    result = RUNNER.invoke(app, ["pcb", "import-board", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "E_BOARD" in result.output and "not a KiCad board" in result.output
    (folder / "board.kicad_pcb").write_text("(kicad_pcb (version 20211014) (layers (0 \"F.Cu\" signal)", "utf-8")
    result = RUNNER.invoke(app, ["pcb", "import-board", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "E_BOARD" in result.output and "at byte" in result.output
    assert not (tmp_path / "out").exists()


def test_kicad_and_the_project_drc_agree_on_the_designers_layouts(boards, tmp_path):
    """The human layout exported (pours as their designer's KiCad filled them) and judged by KiCad 6
    under the derived rules: the same verdicts as the project's DRC; violations among the parts the
    task placed (courtyards the designer let overlap, pads at the edge) are counted apart as given."""
    exe = kicad.interpreter()
    if exe is None:
        if IN_CI:
            pytest.fail("KiCad's pcbnew is not importable (.ci/setup installs Debian's kicad)")
        pytest.skip("KiCad's pcbnew is not importable")
    for name, expect in (("pico_ice_rev2", 0), ("olimex_esp32s3_devkit_lipo", 0), ("moteus_c1", 15)):
        task = get_task(f"{name}_route")
        kb = read_board(boards / name / "board.kicad_pcb")
        art = human_artifact(kb, task.nets).model_dump(mode="json")
        # the DFM counts judge what the realizer makes (KiCad has no such rule; a designer plugs thermal vias)
        ours = [e for e in check_board(task, PcbAction(relations=[]), art).evidence if not e.code.startswith("E_DFM_")]
        board = tmp_path / f"{name}.kicad_pcb"
        board.write_text(kicad_pcb(task, art), encoding="utf-8")
        project = kicad.project(task.board.rules, name, task.smallest_hole)
        (tmp_path / f"{name}.kicad_pro").write_text(project, encoding="utf-8")
        report = kicad.run_drc(board, placed=set(task.parts))
        assert len(ours) == report.violations == expect and report.unconnected == 0, (name, report.details[:3])
        assert all(e.code == "E_DRC_CLEARANCE" for e in ours) and report.given > 0
