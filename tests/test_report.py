"""`rac-fw report`: pages checked in a real browser and on their SVG content.

Headless Chromium (a fresh profile, no network services) renders each page; the page's own script
records every figure's box, and the screenshot must show each figure sized and drawn (enough
non-background pixels inside its box), not a blank page. The SVG itself is parsed: the memory map is
to scale (each buffer's width is its share of its region's bar, or the visible minimum, dashed), every
pin label is whole, DMA routes name direction, controller, channel and request, the Gantt legend names
the makespan, the optimum and the hard pairs, and the PCB board has its layers, scale bar and markers.
"""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from rac_fw.cli import app
from rac_fw.contract import apply_patch
from rac_fw.report.figures import MIN_BUFFER_PX
from tests.conftest import REPO, require_tool

WIDTH = 1280
#: A figure whose box holds fewer non-background pixels than this share counts as blank.
MIN_INK = 0.03
SVG = "{http://www.w3.org/2000/svg}"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--force-device-scale-factor=1")


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    chromium = require_tool("chromium")
    return subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


def figure_boxes(page: Path, profile: Path) -> dict[str, tuple[float, float, float, float]]:
    """Each figure's box (x, y, width, height) as laid out by Chromium (the page's script records it)."""
    dom = _chromium(profile, f"--window-size={WIDTH},1000", "--dump-dom", page.as_uri()).stdout
    boxes = {}
    for match in re.finditer(r'<figure class="svgfig" id="([^"]+)" data-box="([^"]+)"', dom):
        boxes[match.group(1)] = tuple(json.loads(match.group(2).replace("&quot;", '"')))
    return boxes  # type: ignore[return-value]


def screenshot(page: Path, png: Path, height: int, profile: Path) -> Image.Image:
    _chromium(profile, f"--window-size={WIDTH},{height}", f"--screenshot={png}", page.as_uri())
    assert png.is_file(), f"chromium wrote no screenshot of {page}"
    return Image.open(png).convert("RGB")


def ink(image: Image.Image, box: tuple[float, float, float, float]) -> float:
    """Share of pixels in ``box`` that differ from the white background."""
    x, y, w, h = (int(v) for v in box)
    crop = image.crop((x, y, x + w, y + h)).convert("L")
    histogram = crop.histogram()
    background = sum(histogram[245:])
    return 1 - background / max(1, w * h)


def check_page(page: Path, tmp_path: Path, expected: list[str]) -> dict[str, float]:
    profile = tmp_path / f"profile-{page.parent.name}"
    boxes = figure_boxes(page, profile)
    assert list(boxes) == expected
    bottom = max(y + h for _, y, _, h in boxes.values())
    image = screenshot(page, tmp_path / f"{page.parent.name}.png", int(bottom) + 40, profile)
    shares = {}
    for name, (x, y, w, h) in boxes.items():
        assert w >= 300 and h >= 100, f"figure {name} is only {w:.0f}×{h:.0f} px"
        assert x + w <= image.width + 1 and y + h <= image.height + 1, f"figure {name} lies outside the page"
        shares[name] = ink(image, (x, y, w, h))
        assert shares[name] >= MIN_INK, f"figure {name} is blank ({shares[name]:.1%} ink)"
    return shares


def svg_of(page: Path, figure: str) -> ET.Element:
    """The parsed ``<svg>`` of one figure of a page."""
    text = page.read_text()
    start = text.index("<svg", text.index(f'id="{figure}"'))
    return ET.fromstring(text[start: text.index("</svg>", start) + len("</svg>")])


def texts(svg: ET.Element) -> list[str]:
    """Every visible text element's lines joined (tooltips excluded)."""
    return [" ".join("".join(span.itertext()) for span in t.iter(f"{SVG}tspan")) for t in svg.iter(f"{SVG}text")]


def report(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["report", *args])
    return result.exit_code, result.output


# --- firmware ------------------------------------------------------------------------------------


def test_dma_plan_page_has_its_four_figures_drawn_and_to_scale(tmp_path: Path) -> None:
    code, output = report(str(REPO / "examples" / "dma_h7_cache.yaml"), "--out", str(tmp_path / "dma"))
    assert code == 0, output
    page = tmp_path / "dma" / "report.html"
    text = page.read_text()
    assert not re.search(r"<link|<img|(src|href)=\"(https?:|//)|url\((?!#)", text), "self-contained: nothing fetched"
    memory = svg_of(page, "memory-map")
    labels = texts(memory)
    assert {"copy_src 1 KiB (0.2%)", "copy_dst 1 KiB (0.2%)", "AXI_SRAM"} <= set(labels)
    assert any("log₂ scale" in t for t in labels) and {"2 KiB", "2 MiB"} <= set(labels), "a labelled size axis"
    bars = {r.get("data-region"): r for r in memory.iter(f"{SVG}rect") if r.get("data-region")}
    buffers = [r for r in memory.iter(f"{SVG}rect") if r.get("data-buffer")]
    assert len(buffers) == 2
    for rect in buffers:  # 1 KiB of 512 KiB: narrower than the minimum, so drawn at it and dashed
        assert float(rect.get("width", 0)) == MIN_BUFFER_PX and rect.get("stroke-dasharray")
    sizes = {name: int(r.get("data-bytes", 0)) for name, r in bars.items()}
    longer = sorted(bars, key=lambda n: float(bars[n].get("width", 0)))
    assert longer == sorted(sizes, key=lambda n: (sizes[n], longer.index(n))), "bar length grows with region size"
    assert "clean/invalidate" in text and "dma_cache_maintenance" in text
    check_page(page, tmp_path, ["memory-map", "dma-reach", "pinout", "dma-routes"])


def test_buffers_are_drawn_at_their_share_of_the_region(tmp_path: Path) -> None:
    plan = tmp_path / "big.yaml"
    plan.write_text("target: stm32h743\nresources:\n  buffers:\n"
                    "    - {name: big_src, size_bytes: 32768, role: dma_mem}\n"
                    "    - {name: big_dst, size_bytes: 49152, role: dma_mem}\n"
                    "operations:\n  - {op: dma_mem2mem, name: copy, src: big_src, dst: big_dst}\n")
    code, output = report(str(plan), "--out", str(tmp_path / "big"))
    assert code == 0, output
    memory = svg_of(tmp_path / "big" / "report.html", "memory-map")
    bars = {r.get("data-region"): r for r in memory.iter(f"{SVG}rect") if r.get("data-region")}
    for rect in (r for r in memory.iter(f"{SVG}rect") if r.get("data-buffer")):
        region = next(b for b in bars.values() if b.get("data-bytes") == rect.get("data-region-bytes"))
        expected = float(region.get("width", 0)) * int(rect.get("data-bytes", 0)) / int(region.get("data-bytes", 1))
        assert abs(float(rect.get("width", 0)) - expected) < 0.02, (rect.get("data-buffer"), expected)
        assert not rect.get("stroke-dasharray")
    assert {"big_src 32 KiB (6.2%)", "big_dst 48 KiB (9.4%)"} <= set(texts(memory))


def test_dma_route_names_direction_controller_channel_and_request(tmp_path: Path) -> None:
    code, output = report(str(REPO / "examples" / "dma_uart_rx.yaml"), "--out", str(tmp_path / "rx"))
    assert code == 0, output
    routes = svg_of(tmp_path / "rx" / "report.html", "dma-routes")
    lines = {line for t in routes.iter(f"{SVG}text") for line in ("".join(s.itertext()) for s in t)}
    assert {"USART2_RX", "(peripheral)", "DMA1", "stream 5 · channel 4", "request USART2_RX", "rx_buf",
            "(memory)", "peripheral → memory"} <= lines
    assert len([p for p in routes.iter(f"{SVG}path")]) >= 2, "arrow heads show the direction"
    check_page(tmp_path / "rx" / "report.html", tmp_path, ["memory-map", "dma-reach", "pinout", "dma-routes"])


def test_pin_labels_are_whole(tmp_path: Path) -> None:
    code, output = report(str(REPO / "examples" / "uart_hello.yaml"), "--target", "stm32h743",
                          "--out", str(tmp_path / "pins"))
    assert code == 0, output
    pinout = svg_of(tmp_path / "pins" / "report.html", "pinout")
    cells = {r.get("data-pin"): r for r in pinout.iter(f"{SVG}rect") if r.get("data-pin")}
    labelled = {pin: r.get("data-label") for pin, r in cells.items() if r.get("data-label")}
    assert len(cells) > 100 and len(labelled) > 20
    visible = "\n".join(" ".join("".join(s.itertext()) for s in t) for t in pinout.iter(f"{SVG}text"))
    assert "…" not in visible, "every label fits its cell in full"
    squashed = re.sub(r"\s+", "", visible)
    for pin, label in labelled.items():
        assert re.sub(r"\s+", "", label) in squashed, f"{pin}: {label!r} not shown whole"
        assert f"{pin}: " in (cells[pin].findtext(f"{SVG}title") or ""), "the tooltip repeats it"
    assert "USB_OTG_FS_DM" in squashed


def test_invalid_plan_names_the_claims_in_conflict_and_lists_the_violations(tmp_path: Path) -> None:
    plan = tmp_path / "conflict.yaml"
    plan.write_text(
        "target: stm32f407\nframework: baremetal\noperations:\n"
        "  - {op: uart_print, message: hi, baud: 115200}\n  - {op: adc_read, channel: {pin: PA2}}\n"
    )
    code, output = report(str(plan), "--out", str(tmp_path / "conflict"))
    assert code == 2, output
    page = tmp_path / "conflict" / "report.html"
    text = page.read_text()
    pinout = svg_of(page, "pinout")
    pa2 = next(r for r in pinout.iter(f"{SVG}rect") if r.get("data-pin") == "PA2")
    assert pa2.get("data-state") == "conflict" and pa2.get("fill") == "#d62728"
    assert "console: USART2_TX" in (pa2.get("data-label") or "") and "ANALOG" in (pa2.get("data-label") or "")
    assert "PA2 is used by console (USART2_TX)" in text
    summary = text[text.index("Verification summary"): text.index("<h2>Evidence")]
    assert "plan valid: E_PIN_CONFLICT" in summary and "independent verification" in summary
    assert "none: the plan moves no data by DMA" in text
    check_page(page, tmp_path, ["memory-map", "dma-reach", "pinout"])


def test_repairs_of_two_conflicting_pins_do_not_collide(tmp_path: Path) -> None:
    """Two declared pins on the console's pins: each is offered other free pins, and taking the first
    repair of every violation gives a plan that passes."""
    plan = {"target": "stm32f407", "framework": "zephyr",
            "resources": {"pins": [{"name": "a_pin", "pin": "PA2", "function": "GPIO"},
                                   {"name": "b_pin", "pin": "PA3", "function": "GPIO"}]},
            "operations": [{"op": "uart_print", "message": "hi"},
                           {"op": "gpio_blink", "led": "a_pin", "period_ms": 500},
                           {"op": "gpio_blink", "led": "b_pin", "period_ms": 300}]}
    path = tmp_path / "two.yaml"
    path.write_text(json.dumps(plan))
    code, output = report(str(path), "--out", str(tmp_path / "two"))
    assert code == 2, output
    result = CliRunner().invoke(app, ["plan", str(path), "--json"])
    evidence = json.loads(result.output)["evidence"]
    offered = {e["objects"][-1] if e["code"] == "E_PIN_CONFLICT" else e["objects"][1]:
               {r["patch"][0]["value"] for r in e["relaxations"]} for e in evidence}
    assert offered["a_pin"] and offered["b_pin"] and not offered["a_pin"] & offered["b_pin"]
    repaired = plan
    for e in evidence:
        repaired = apply_patch(repaired, e["relaxations"][0]["patch"])
    path.write_text(json.dumps(repaired))
    again = CliRunner().invoke(app, ["plan", str(path)])
    assert again.exit_code == 0, again.output


def test_artifact_page_runs_the_independent_verifier(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["plan", str(REPO / "examples" / "uart_hello.yaml"), "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    code, output = report(str(tmp_path / "a"), "--out", str(tmp_path / "rep"), "--json")
    assert code == 0, output
    assert json.loads(output)["figures"] == ["memory-map", "dma-reach", "pinout"]
    assert "c_parses" in (tmp_path / "rep" / "report.html").read_text()


# --- scheduling ----------------------------------------------------------------------------------


def test_scheduling_page_draws_the_verified_schedule_with_its_legend(tmp_path: Path) -> None:
    code, output = report("la01", "--domain", "scheduling", "--out", str(tmp_path / "la01"))
    assert code == 0, output
    page = tmp_path / "la01" / "report.html"
    gantt = svg_of(page, "gantt")
    labels = texts(gantt)
    assert len([t for t in labels if re.fullmatch(r"J\d", t)]) >= 10, "job labels on the bars"
    assert "makespan 666 (verified)" in labels and "published optimum 666" in labels
    assert "hard pair (end → start): none" in labels and "job J9" in labels
    assert "machine_capacity" in page.read_text()
    check_page(page, tmp_path, ["gantt"])


def test_hard_pairs_are_drawn(tmp_path: Path) -> None:
    action = tmp_path / "pairs.yaml"
    action.write_text("priority: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\nbefore: [[j0o1, j1o2], [j3o0, j2o4]]\n")
    code, output = report("la01", "--domain", "scheduling", "--action", str(action), "--out", str(tmp_path / "p"))
    assert code == 0, output
    gantt = svg_of(tmp_path / "p" / "report.html", "gantt")
    assert {line.get("data-pair") for line in gantt.iter(f"{SVG}line")} >= {"j0o1>j1o2", "j3o0>j2o4"}
    assert "hard pair (end → start): j0o1 → j1o2; j3o0 → j2o4" in texts(gantt)


# --- PCB -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("task", "layers"), [("repair_pin_01", 2), ("route_4layer_00", 4)])
def test_pcb_page_draws_the_board_to_scale_with_layers_markers_and_relations(
        tmp_path: Path, task: str, layers: int) -> None:
    code, output = report(task, "--domain", "pcb", "--out", str(tmp_path / task))
    page = tmp_path / task / "report.html"
    assert code in (0, 1), output
    board = svg_of(page, "board")
    legend = {t.get("data-legend") for t in board.iter(f"{SVG}text") if t.get("data-legend")}
    assert len({entry for entry in legend if entry.startswith("copper ")}) == layers
    assert {"pad", "via", "keepout", "DRC finding / unmet relation"} <= legend
    scale = next(t for t in board.iter(f"{SVG}text") if t.get("data-scale-mm"))
    assert "".join(scale.itertext()).endswith(" mm")
    outline = next(r for r in board.iter(f"{SVG}rect") if "board outline" in (r.findtext(f"{SVG}title") or ""))
    bar = next(line for line in board.iter(f"{SVG}line") if line.get("stroke-width") == "3")
    mm_per_px = float(scale.get("data-scale-mm", 0)) / (float(bar.get("x2", 0)) - float(bar.get("x1", 0)))
    width_mm = float(re.search(r"([\d.]+) × ", outline.findtext(f"{SVG}title") or "").group(1))  # type: ignore[union-attr]
    assert abs(float(outline.get("width", 0)) * mm_per_px - width_mm) < 0.05, "the scale bar measures the board"
    text = page.read_text()
    assert 'id="relations"' in text and "relations[0]" in text
    markers = [c for c in board.iter(f"{SVG}circle") if c.get("data-marker")]
    if code == 1:
        codes = {c.get("data-code") for c in markers}  # the repair tasks' seeded fault is an unmet relation
        assert "E_RELATION" in codes and all(code and code.startswith("E_") for code in codes), codes
        assert "re-solved: passes" in text, "the evidence carries the domain's re-solved repairs"
    else:
        assert markers == []
    check_page(page, tmp_path, ["board"])


# --- bad input -----------------------------------------------------------------------------------


def test_bad_inputs_are_located_errors_and_no_page_is_overwritten(tmp_path: Path) -> None:
    code, output = report("la99", "--domain", "scheduling", "--out", str(tmp_path))
    assert code == 2 and "E_UNKNOWN_TASK" in output and "Traceback" not in output
    code, output = report("board_99", "--domain", "pcb", "--out", str(tmp_path))
    assert code == 2 and "E_UNKNOWN_TASK" in output and "Traceback" not in output
    code, output = report(str(tmp_path / "absent.yaml"), "--out", str(tmp_path))
    assert code == 2 and "E_FILE" in output
    (tmp_path / "report.html").write_text("mine")
    code, output = report(str(REPO / "examples" / "uart_hello.yaml"), "--out", str(tmp_path))
    assert code == 2 and "E_FILE_EXISTS" in output
    assert (tmp_path / "report.html").read_text() == "mine"
    code, output = report(str(REPO / "examples" / "uart_hello.yaml"), "--out", str(tmp_path), "--force")
    assert code == 0 and (tmp_path / "report.html").read_text() != "mine"


@pytest.mark.parametrize("bad", ["not: [a, plan", "operations: 5\n"])
def test_a_malformed_plan_gets_evidence_not_a_traceback(tmp_path: Path, bad: str) -> None:
    plan = tmp_path / "bad.yaml"
    plan.write_text(bad)
    code, output = report(str(plan), "--out", str(tmp_path / "out"))
    assert code == 2 and "error E_" in output and "Traceback" not in output
    assert not (tmp_path / "out" / "report.html").exists()
