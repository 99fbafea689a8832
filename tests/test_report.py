"""`rac-fw report`: pages checked in a real browser. Headless Chromium renders each page; the page's own
script records every figure's box, and the screenshot must show each figure sized and drawn (enough
non-background pixels inside its box), not a blank page."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from rac_fw.cli import app
from tests.conftest import REPO, require_tool

WIDTH = 1280
#: A figure whose box holds fewer non-background pixels than this share counts as blank.
MIN_INK = 0.03


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    chromium = require_tool("chromium")
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
         *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def figure_boxes(page: Path) -> dict[str, tuple[float, float, float, float]]:
    """Each figure's box (x, y, width, height) as laid out by Chromium (the page's script records it)."""
    dom = _chromium(f"--window-size={WIDTH},1000", "--dump-dom", page.as_uri()).stdout
    boxes = {}
    for match in re.finditer(r'<figure class="svgfig" id="([^"]+)" data-box="([^"]+)"', dom):
        boxes[match.group(1)] = tuple(json.loads(match.group(2).replace("&quot;", '"')))
    return boxes  # type: ignore[return-value]


def screenshot(page: Path, png: Path, height: int) -> Image.Image:
    _chromium(f"--window-size={WIDTH},{height}", f"--screenshot={png}", page.as_uri())
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
    boxes = figure_boxes(page)
    assert list(boxes) == expected
    bottom = max(y + h for _, y, _, h in boxes.values())
    image = screenshot(page, tmp_path / f"{page.parent.name}.png", int(bottom) + 40)
    shares = {}
    for name, (x, y, w, h) in boxes.items():
        assert w >= 300 and h >= 100, f"figure {name} is only {w:.0f}×{h:.0f} px"
        assert x + w <= image.width + 1 and y + h <= image.height + 1, f"figure {name} lies outside the page"
        shares[name] = ink(image, (x, y, w, h))
        assert shares[name] >= MIN_INK, f"figure {name} is blank ({shares[name]:.1%} ink)"
    return shares


def report(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["report", *args])
    return result.exit_code, result.output


def test_dma_plan_page_has_its_four_figures_drawn(tmp_path: Path) -> None:
    code, output = report(str(REPO / "examples" / "dma_h7_cache.yaml"), "--out", str(tmp_path / "dma"))
    assert code == 0, output
    page = tmp_path / "dma" / "report.html"
    text = page.read_text()
    assert not re.search(r"<link|<img|(src|href)=\"(https?:|//)|url\((?!#)", text), "self-contained: nothing fetched"
    memory = text[text.index('id="memory-map"') : text.index('id="dma-reach"')]
    assert "copy_src 1 KiB" in memory and "copy_dst 1 KiB" in memory and "AXI_SRAM" in memory
    assert "clean/invalidate" in text and "dma_cache_maintenance" in text
    check_page(page, tmp_path, ["memory-map", "dma-reach", "pinout", "dma-routes"])


def test_pin_conflict_is_red_with_its_evidence(tmp_path: Path) -> None:
    plan = tmp_path / "conflict.yaml"
    plan.write_text(
        "target: stm32f407\nframework: baremetal\noperations:\n"
        "  - {op: uart_print, message: hi, baud: 115200}\n  - {op: adc_read, channel: {pin: PA2}}\n"
    )
    code, output = report(str(plan), "--out", str(tmp_path / "conflict"))
    assert code == 2, output
    text = (tmp_path / "conflict" / "report.html").read_text()
    pinout = text[text.index('id="pinout"') : text.index("Verification summary")]
    assert "#d62728" in pinout, "the conflicting pin is drawn red"
    assert "E_PIN_CONFLICT" in text and "PA2 is used by console (USART2_TX)" in text
    assert "none: the plan moves no data by DMA" in text
    check_page(tmp_path / "conflict" / "report.html", tmp_path, ["memory-map", "dma-reach", "pinout"])


def test_scheduling_page_draws_the_verified_schedule(tmp_path: Path) -> None:
    code, output = report("la01", "--domain", "scheduling", "--out", str(tmp_path / "la01"))
    assert code == 0, output
    text = (tmp_path / "la01" / "report.html").read_text()
    assert "Realized schedule: makespan" in text and "machine_capacity" in text
    assert len(re.findall(r">J\d<", text)) >= 10, "job labels on the bars"
    check_page(tmp_path / "la01" / "report.html", tmp_path, ["gantt"])


def test_artifact_page_runs_the_independent_verifier(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["plan", str(REPO / "examples" / "uart_hello.yaml"), "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    code, output = report(str(tmp_path / "a"), "--out", str(tmp_path / "rep"), "--json")
    assert code == 0, output
    assert json.loads(output)["figures"] == ["memory-map", "dma-reach", "pinout"]
    assert "c_parses" in (tmp_path / "rep" / "report.html").read_text()


def test_bad_inputs_are_located_errors_and_no_page_is_overwritten(tmp_path: Path) -> None:
    code, output = report("la99", "--domain", "scheduling", "--out", str(tmp_path))
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
