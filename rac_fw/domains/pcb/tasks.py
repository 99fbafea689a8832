"""The PCB task suites: the quick suite of 98 generated boards in the RAC paper's proportions — routing
42, placement 31, combined 17, repair 8 — each with a reference relation bundle, and (through
:func:`every_task`) the real-board suite of :mod:`.board_tasks`.

Families vary board size, layer count, packages, edges and classes by index, deterministically (no
randomness at import). Routing tasks come placed (``fixed``); placement tasks are judged without
copper; combined tasks are placed and routed; repair tasks add an infeasible ``start`` bundle that an
agent must repair from the feedback.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from rac_fw.domain import UnknownTask
from rac_fw.domains.pcb.board import Board, Component, PcbTask, Placement, Region
from rac_fw.domains.pcb.footprints import rotate

CAP = {k: f"Capacitor_SMD:C_{k}_{m}Metric" for k, m in (("0402", "1005"), ("0603", "1608"), ("0805", "2012"))}
RES = {k: f"Resistor_SMD:R_{k}_{m}Metric" for k, m in (("0402", "1005"), ("0603", "1608"), ("0805", "2012"))}
LED = "LED_SMD:LED_0603_1608Metric"
QUADS = {32: "Package_DFN_QFN:QFN-32-1EP_5x5mm_P0.5mm_EP3.45x3.45mm", 48: "Package_QFP:TQFP-48_7x7mm_P0.5mm",
         49: "Package_DFN_QFN:QFN-48-1EP_7x7mm_P0.5mm_EP5.6x5.6mm", 64: "Package_QFP:TQFP-64_10x10mm_P0.5mm"}
SOT23 = "Package_TO_SOT_SMD:SOT-23"
SOIC8 = "Package_SO:SOIC-8_3.9x4.9mm_P1.27mm"
USB_C = "Connector_USB:USB_C_Receptacle_HRO_TYPE-C-31-M-12"
XTAL = "Crystal:Crystal_SMD_3225-4Pin_3.2x2.5mm"
HOLE = "MountingHole:MountingHole_2.2mm_M2"
#: USB-C receptacle (HRO TYPE-C-31-M-12) pins for power + USB 2.0 on the A row: both GND and VBUS pad
#: pairs, CC1/CC2, D+/D- (the B-row data pads B6/B7 stay unconnected: joining them needs a via crossing).
USB_PINS = {"A1": "GND", "B12": "GND", "A12": "GND", "B1": "GND", "A4": "VBUS", "B9": "VBUS", "A9": "VBUS",
            "B4": "VBUS", "A5": "CC1", "B5": "CC2", "A6": "DP", "A7": "DN"}
SIDES = ("left", "right", "top", "bottom")
OPP = {"left": "right", "right": "left", "top": "bottom", "bottom": "top"}


def _p(x: float, y: float, rot: int = 0) -> Placement:
    return Placement(x, y, rot)


def _quad_pins(n: int) -> tuple[int, dict[str, int]]:
    """Per-side pin count and named pins of an n-pin quad: VDD/GND mid-side, SWD on the top side."""
    side = n // 4
    return side, {"VDD0": side // 2, "GND0": side // 2 + 1, "VDD1": side + side // 2, "GND1": side + side // 2 + 1,
                  "VDD2": 2 * side + side // 2, "GND2": 2 * side + side // 2 + 1,
                  "VDD3": 3 * side + side // 2, "GND3": 3 * side + side // 2 + 1,
                  "SWDIO": 3 * side + 1, "SWCLK": 3 * side + 2, "LED": 2 * side + 1, "TX": side + 1, "RX": side + 2}


def _mcu(ref: str, n: int, value: str, pins: dict[str, str], fixed: Placement | None = None) -> Component:
    """An n-pin quad package; a QFN's exposed pad (pad n+1) joins GND when the part has a GND pin, as
    its datasheet asks (it stays unconnected, an obstacle, otherwise)."""
    pins = dict(pins)
    if n in (32, 49) and "GND" in pins.values():
        pins[str(32 + 1 if n == 32 else 49)] = "GND"
    return Component(ref, QUADS[n], value, pins, fixed)


def _rel(kind: str, **kw: object) -> dict:
    return {"kind": kind, **kw}


def _header(ref: str, n: int, nets: list[str], centre: Placement | None = None) -> Component:
    """A 1×n 2.54 mm header; ``centre`` places it by its middle (KiCad's origin is pin 1, pins run +y)."""
    fixed = None
    if centre is not None:
        dx, dy = rotate(0.0, (n - 1) * 1.27, centre.rot)
        fixed = Placement(round(centre.x - dx, 4), round(centre.y - dy, 4), centre.rot)
    return Component(ref, f"Connector_PinHeader_2.54mm:PinHeader_1x{n:02d}_P2.54mm_Vertical", f"{n}-pin header",
                     {str(i + 1): net for i, net in enumerate(nets) if net}, fixed)


def _usb(ref: str, value: str, pins: dict[str, str] | None = None, fixed: Placement | None = None) -> Component:
    return Component(ref, USB_C, value, dict(USB_PINS if pins is None else pins), fixed)


# --- placement (31) -----------------------------------------------------------------------------------
def decouple(i: int) -> PcbTask:
    w, h = [(26, 22), (28, 22), (30, 24), (28, 26)][i % 4]
    pins_n = (32, 48, 49, 32, 48, 32, 49, 32)[i]
    side, pn = _quad_pins(pins_n)
    k = 2 + i % 3
    pkg = ("0402", "0603", "0402", "0805")[i % 4]
    upins = {str(pn[f"VDD{j}"]): "VDD" for j in range(4)} | {str(pn[f"GND{j}"]): "GND" for j in range(4)}
    upins |= {str(pn["SWDIO"]): "SWDIO", str(pn["SWCLK"]): "SWCLK"}
    comps = [_mcu("U1", pins_n, "MCU", upins)]
    comps += [Component(f"C{j + 1}", CAP[pkg], "100nF", {"1": "VDD", "2": "GND"}) for j in range(k)]
    edge = SIDES[i % 4]
    comps.append(_header("J1", 4, ["VDD", "GND", "SWDIO", "SWCLK"]))
    rels = [_rel("decouple", cap=f"C{j + 1}", pin=f"U1.{pn[f'VDD{j}']}", distance="tight") for j in range(k)]
    rels.append(_rel("board_edge", ref="J1", side=edge, distance="close"))
    if i % 2 == 0:
        rels.append(_rel("place_relative", a="J1", b="U1", relation="near", distance="loose"))
    return PcbTask(f"place_decouple_{i:02d}", "placement", "decouple",
                   f"Decouple {k} VDD pins of a {pins_n}-pin MCU with {pkg} capacitors; SWD header at the {edge} "
                   "edge.", Board(w, h), tuple(comps), False, {"relations": rels})


def edges(i: int) -> PcbTask:
    w, h = [(30, 24), (34, 24), (32, 26)][i % 3]
    s1 = SIDES[i % 4]
    s2 = OPP[s1] if i < 3 else SIDES[(i + 2) % 4] if SIDES[(i + 2) % 4] != s1 else OPP[s1]
    comps = (
        _usb("J1", "USB-C"),
        _header("J2", 4, ["TX", "GND", "RX", "VBUS"]),
        Component("U1", SOIC8, "USB-UART",
                  {"2": "DP", "3": "DN", "4": "GND", "5": "TX", "6": "RX", "8": "VBUS", "1": "LED_K"}),
        Component("R1", RES["0603"], "1k", {"1": "VBUS", "2": "LED_A"}),
        Component("D1", LED, "green", {"1": "LED_K", "2": "LED_A"}),
        Component("R2", RES["0402"], "5k1", {"1": "CC1", "2": "GND"}),
        Component("R3", RES["0402"], "5k1", {"1": "CC2", "2": "GND"}),
    )
    rels = [_rel("board_edge", ref="J1", side=s1, distance="tight"),
            _rel("board_edge", ref="J2", side=s2, distance="tight"),
            _rel("place_relative", a="R2", b="J1.A5", relation="near", distance="close"),
            _rel("place_relative", a="R3", b="J1.B5", relation="near", distance="close"),
            _rel("place_relative", a="D1", b="R1", relation="near", distance="tight"),
            _rel("group", refs=["U1", "R1", "D1"], spread="loose")]
    return PcbTask(f"place_edge_{i:02d}", "placement", "edge",
                   f"USB-C at the {s1} edge, UART header at the {s2} edge, CC pull-downs at the connector.",
                   Board(w, h), comps, False, {"relations": rels})


def _mount_holes(w: float, h: float) -> tuple[tuple[Component, ...], tuple[Region, ...]]:
    """Four M2 mounting holes 3 mm in from the corners (KiCad's MountingHole footprint, fixed), each
    with a copper keepout over its screw head (the hole's courtyard already keeps parts away)."""
    c, r = 3.0, 2.45
    spots = ((c, c), (w - c, c), (c, h - c), (w - c, h - c))
    holes = tuple(Component(f"H{j + 1}", HOLE, "M2", {}, _p(x, y)) for j, (x, y) in enumerate(spots))
    regions = tuple(Region(f"MH{j + 1}", x - r, y - r, x + r, y + r, "keepout", "M2 screw head: no copper",
                           no_parts=False) for j, (x, y) in enumerate(spots))
    return holes, regions


def keepouts(i: int) -> PcbTask:
    w, h = [(36, 24), (38, 26), (36, 28)][i % 3]
    ant_right = i % 2 == 0
    ant = Region("antenna", w - 9 if ant_right else 0, 0, w if ant_right else 9, h, "zone",
                 "antenna clearance: no parts, no copper")
    pins_n = (32, 48)[i % 2]
    _, pn = _quad_pins(pins_n)
    upins = {str(pn["VDD0"]): "VDD", str(pn["GND0"]): "GND", str(pn["TX"]): "XIN", str(pn["RX"]): "XOUT",
             str(pn["SWDIO"]): "SWDIO", str(pn["SWCLK"]): "SWCLK", str(pn["GND1"]): "GND"}
    comps = (
        _mcu("U1", pins_n, "MCU", upins),
        Component("C1", CAP["0402"], "100nF", {"1": "VDD", "2": "GND"}),
        Component("Y1", XTAL, "16MHz", {"1": "XIN", "2": "GND", "3": "XOUT", "4": "GND"}),
        Component("C3", CAP["0402"], "12pF", {"1": "XIN", "2": "GND"}),
        Component("C4", CAP["0402"], "12pF", {"1": "XOUT", "2": "GND"}),
        _header("J1", 4, ["VDD", "GND", "SWDIO", "SWCLK"]),
    )
    refs = [c.ref for c in comps]
    holes, mh = _mount_holes(w, h)
    rels = [_rel("keepout", region="antenna", refs=refs),
            _rel("decouple", cap="C1", pin=f"U1.{pn['VDD0']}", distance="tight"),
            _rel("place_relative", a="Y1", b="U1", relation="near", distance="close"),
            _rel("place_relative", a="C3", b="Y1.1", relation="near", distance="tight"),
            _rel("place_relative", a="C4", b="Y1.3", relation="near", distance="tight"),
            _rel("board_edge", ref="J1", side="right" if not ant_right else "left", distance="close")]
    return PcbTask(f"place_keepout_{i:02d}", "placement", "keepout",
                   "MCU with crystal; keep every part out of the antenna zone; four mounting holes.",
                   Board(w, h, regions=(ant, *mh)), comps + holes, False, {"relations": rels})


def aligned(i: int) -> PcbTask:
    n = 3 + i % 2
    w, h = (30, 20) if i % 3 else (34, 22)
    axis = "horizontal" if i < 4 else "vertical"
    comps = [_header("J1", 4, ["VDD", "GND", "L1", "L2"]), _header("J2", 4, ["VDD", "GND", "L3", "L4"])]
    for j in range(n):
        comps.append(Component(f"D{j + 1}", LED, "red", {"1": "GND", "2": f"A{j + 1}"}))
        comps.append(Component(f"R{j + 1}", RES["0402"], "330", {"1": f"L{j + 1}", "2": f"A{j + 1}"}))
    rels = [_rel("align", refs=[f"D{j + 1}" for j in range(n)], axis=axis),
            _rel("align", refs=[f"R{j + 1}" for j in range(n)], axis=axis),
            _rel("symmetric", refs=["J1", "J2"], axis="vertical"),
            _rel("board_edge", ref="J1", side="left", distance="close")]
    rels += [_rel("place_relative", a=f"R{j + 1}", b=f"D{j + 1}", relation="above" if axis == "horizontal" else
                  "left_of", distance="tight") for j in range(n)]
    return PcbTask(f"place_align_{i:02d}", "placement", "align",
                   f"A row of {n} LEDs with series resistors, aligned {axis}ly; two headers mirrored.",
                   Board(w, h), tuple(comps), False, {"relations": rels})


def grouped(i: int) -> PcbTask:
    w, h = [(30, 24), (32, 26), (28, 24), (34, 24), (30, 26)][i]
    comps = (
        Component("U1", SOIC8, "MCU", {"8": "V33", "4": "GND", "5": "TX", "6": "RX"}),
        Component("C1", CAP["0603"], "100nF", {"1": "V33", "2": "GND"}),
        Component("U2", SOT23, "LDO", {"1": "GND", "2": "V33", "3": "VIN"}),
        Component("C5", CAP["0805"], "10uF", {"1": "VIN", "2": "GND"}),
        Component("C6", CAP["0805"], "10uF", {"1": "V33", "2": "GND"}),
        _header("J1", 4, ["VIN", "GND", "TX", "RX"]),
    )
    spread = ("tight", "close", "tight", "close", "tight")[i]
    rels = [_rel("group", refs=["U2", "C5", "C6"], spread=spread),
            _rel("group", refs=["U1", "C1"], spread="tight"),
            _rel("decouple", cap="C1", pin="U1.8", distance="tight"),
            _rel("board_edge", ref="J1", side=SIDES[i % 4], distance="tight"),
            _rel("place_relative", a="U2", b="J1", relation="near", distance="close")]
    return PcbTask(f"place_group_{i:02d}", "placement", "group",
                   "Regulator with its input/output capacitors kept together near the power header.",
                   Board(w, h), comps, False, {"relations": rels})


# --- routing (42) -------------------------------------------------------------------------------------
def fanout(i: int) -> PcbTask:
    kind = ("soic", "soic", "soic", "qfn", "qfn", "qfn", "tqfp", "tqfp", "qfn", "soic")[i]
    w, h = (30, 24) if i % 2 and kind != "qfn" else (32, 26)
    cx, cy = w / 2, h / 2
    nets: list[str] = []
    upins: dict[str, str] = {}
    if kind == "soic":
        left = [1, 2, 3, 4]
        right = [8, 7, 6, 5]
        fp = SOIC8
    else:
        n = 32 if kind == "qfn" else 48
        fp = QUADS[n]
        side = n // 4
        left = list(range(2, 2 + min(6, side - 2)))
        right = list(range(3 * side - 1, 3 * side - 1 - len(left), -1))
    ln = [f"A{j}" for j in range(len(left))]
    rn = [f"B{j}" for j in range(len(right))]
    for p, net in zip(left, ln, strict=True):
        upins[str(p)] = net
    for p, net in zip(right, rn, strict=True):
        upins[str(p)] = net
    nets = ln + rn
    comps = (Component("U1", fp, "MCU", upins, _p(cx, cy)),
             _header("J1", len(ln), ln, _p(2.5, cy)),
             _header("J2", len(rn), rn, _p(w - 2.5, cy)))
    rels: list[dict] = [_rel("route_priority", nets=[ln[0], rn[0]])]
    if i % 3 == 0:
        rels.append(_rel("via_limit", net=ln[1], max=0))
    if i % 3 == 1:
        rels.append(_rel("layer_preference", net=rn[1], layer="F.Cu"))
    if i % 4 == 3:
        rels.append(_rel("via_limit", net=nets[-1], max=2))
    return PcbTask(f"route_fanout_{i:02d}", "routing", "fanout",
                   f"Fan a {fp} out to two headers ({len(nets)} nets).", Board(w, h), comps, True,
                   {"relations": rels})


def crossing(i: int) -> PcbTask:
    n = (4, 4, 6, 6, 4, 6, 4, 6)[i]
    layers = 4 if i >= 5 else 2
    w, h = (24, 20) if n == 4 else (26, 22)
    cy = h / 2
    nets = [f"S{j}" for j in range(n)]
    comps = (_header("J1", n, nets, _p(3.5, cy)), _header("J2", n, nets[::-1], _p(w - 3.5, cy)))
    rels = [_rel("via_limit", net=net, max=4) for net in nets[: 2 + i % 3]]
    if i % 2:
        rels.append(_rel("route_priority", nets=[nets[0]]))
    return PcbTask(f"route_crossing_{i:02d}", "routing", "crossing",
                   f"Two {n}-pin headers wired in reverse order: every net crosses the others.",
                   Board(w, h, layers), comps, True, {"relations": rels})


def matched(i: int) -> PcbTask:
    w, h = (30, 24) if i % 2 else (32, 24)
    n = 3 + i % 2
    tol = ("loose", "close", "tight", "loose", "close", "close", "loose", "tight")[i]
    side, _ = _quad_pins(32)
    # every other right-side pin, top down (the exposed pad leaves no room to turn a 0.5 mm-pitch bus inward)
    pins = list(range(3 * side - 1, 3 * side - 1 - 2 * n, -2))
    nets = [f"D{j}" for j in range(n)]
    comps = (Component("U1", QUADS[32], "FPGA", {str(p): net for p, net in zip(pins, nets, strict=True)},
                       _p(10, h / 2)),
             _header("J1", n, nets[::-1], _p(w - 3, h / 2)))
    rels = [_rel("route_matched", nets=nets, tolerance=tol)]
    if i >= 4:
        rels.append(_rel("layer_preference", net=nets[0], layer="F.Cu"))
    return PcbTask(f"route_matched_{i:02d}", "routing", "matched",
                   f"A {n}-bit bus from a QFN to a header with lengths matched ({tol}).", Board(w, h), comps, True,
                   {"relations": rels})


def diffpair(i: int) -> PcbTask:
    w, h = (26, 30) if i % 2 else (28, 32)
    tol = ("loose", "close", "close", "loose", "tight", "close", "loose", "loose")[i]
    dy = 19 + (i % 3) * 2
    shift = (-0.5, -0.5, -1.5, 0.0, -0.5, -2.5, 0.5, -0.5)[i]  # -0.5: the MCU's D-/D+ pins right below the receptacle's
    cx = w / 2
    # the receptacle opens to the top edge (turned 180°); the MCU's top-side pins in the same left-to-right
    # order as the connector's pads (GND, VBUS, CC2, D-, D+, CC1), so the pair does not cross
    comps = (
        _usb("J1", "USB-C", fixed=_p(cx, 4.5, 180)),
        _mcu("U1", 32, "USB MCU", {"32": "GND", "31": "VBUS", "30": "CC2", "28": "DN", "27": "DP",
                                                "26": "CC1"}, _p(cx + shift, dy)),
    )
    rels = [_rel("diff_pair", p="DP", n="DN", tolerance=tol), _rel("route_priority", nets=["DP", "DN"])]
    if i % 2:
        rels.append(_rel("layer_preference", net="DP", layer="F.Cu"))
        rels.append(_rel("layer_preference", net="DN", layer="F.Cu"))
    return PcbTask(f"route_diffpair_{i:02d}", "routing", "diffpair",
                   "USB 2.0 D+/D- from the receptacle to the MCU as a coupled, length-matched pair.",
                   Board(w, h), comps, True, {"relations": rels})


def four_layer(i: int) -> PcbTask:
    w, h = (34, 30) if i % 2 else (36, 30)
    n = 4 + i % 3
    side = 16
    cx, cy = w / 2, h / 2
    left = list(range(3, 3 + n))
    bottom = list(range(side + 3, side + 3 + n))
    ln = [f"L{j}" for j in range(n)]
    bn = [f"M{j}" for j in range(n)]
    upins = {str(p): net for p, net in zip(left, ln, strict=True)} | {
        str(p): net for p, net in zip(bottom, bn, strict=True)}
    comps = (Component("U1", QUADS[64], "SoC", upins, _p(cx, cy - 2)),
             _header("J1", n, ln[::-1] if i % 2 else ln, _p(3, cy - 2)),
             _header("J2", n, bn, _p(cx, h - 3, 90)))
    rels = [_rel("layer_preference", net=ln[0], layer="F.Cu"),
            _rel("via_limit", net=bn[0], max=2), _rel("route_priority", nets=[bn[-1]])]
    return PcbTask(f"route_4layer_{i:02d}", "routing", "four_layer",
                   f"A TQFP-64 fanned out to two headers on a 4-layer board ({2 * n} nets).",
                   Board(w, h, 4), comps, True, {"relations": rels})


# --- combined (17) ------------------------------------------------------------------------------------
def combo_mcu(i: int) -> PcbTask:
    w, h = [(30, 25), (32, 26), (28, 24)][i % 3]
    layers = 4 if i % 3 == 2 else 2
    quad = i % 2 == 0
    if quad:
        _, pn = _quad_pins(32)
        upins = {str(pn["VDD0"]): "VDD", str(pn["GND0"]): "GND", str(pn["VDD2"]): "VDD", str(pn["GND2"]): "GND",
                 str(pn["SWDIO"]): "SWDIO", str(pn["SWCLK"]): "SWCLK", str(pn["LED"]): "LED"}
        mcu, vdd = _mcu("U1", 32, "MCU", upins), [pn["VDD0"], pn["VDD2"]]
    else:
        upins = {"8": "VDD", "4": "GND", "5": "SWDIO", "6": "SWCLK", "1": "LED"}
        mcu, vdd = Component("U1", SOIC8, "MCU", upins), [8, 8]
    comps = (
        mcu,
        Component("C1", CAP["0402"], "100nF", {"1": "VDD", "2": "GND"}),
        Component("C2", CAP["0603"], "1uF", {"1": "VDD", "2": "GND"}),
        _header("J1", 4, ["VDD", "GND", "SWDIO", "SWCLK"]),
        Component("R1", RES["0402"], "1k", {"1": "LED", "2": "LED_A"}),
        Component("D1", LED, "green", {"1": "GND", "2": "LED_A"}),
    )
    edge = SIDES[i % 4]
    rels = [_rel("decouple", cap="C1", pin=f"U1.{vdd[0]}", distance="tight"),
            _rel("decouple", cap="C2", pin=f"U1.{vdd[1]}", distance="close"),
            _rel("board_edge", ref="J1", side=edge, distance="close"),
            _rel("place_relative", a="R1", b="D1", relation="near", distance="tight"),
            _rel("place_relative", a="D1", b="U1", relation="near", distance="loose")]
    if i % 3 == 1:
        rels.append(_rel("via_limit", net="SWCLK", max=2))
    return PcbTask(f"combo_mcu_{i:02d}", "combined", "combo_mcu",
                   f"Place and route a minimal MCU board: decoupling, SWD header at the {edge} edge, status LED.",
                   Board(w, h, layers), comps, True, {"relations": rels})


def combo_usb(i: int) -> PcbTask:
    w, h = [(30, 26), (32, 29), (34, 26), (30, 29)][i % 4]
    comps = (
        _usb("J1", "USB-C"),
        Component("U2", SOT23, "LDO", {"1": "GND", "2": "V33", "3": "VBUS"}),
        Component("C1", CAP["0603"], "1uF", {"1": "VBUS", "2": "GND"}),
        Component("C2", CAP["0603"], "1uF", {"1": "V33", "2": "GND"}),
        Component("U1", SOIC8, "USB bridge", {"2": "DP", "3": "DN", "4": "GND", "8": "V33"}),
        Component("C3", CAP["0402"], "100nF", {"1": "V33", "2": "GND"}),
        Component("R1", RES["0402"], "5k1", {"1": "CC1", "2": "GND"}),
        Component("R2", RES["0402"], "5k1", {"1": "CC2", "2": "GND"}),
    )
    side = ("top", "left", "bottom", "right")[i % 4]
    rels = [_rel("board_edge", ref="J1", side=side, distance="tight"),
            _rel("decouple", cap="C1", pin="U2.3", distance="tight"),
            _rel("decouple", cap="C2", pin="U2.2", distance="tight"),
            _rel("decouple", cap="C3", pin="U1.8", distance="tight"),
            _rel("group", refs=["U2", "C1", "C2"], spread="close"),
            _rel("place_relative", a="R1", b="J1.A5", relation="near", distance="close"),
            _rel("place_relative", a="R2", b="J1.B5", relation="near", distance="close"),
            _rel("diff_pair", p="DP", n="DN", tolerance="loose")]
    if i >= 4:
        rels.append(_rel("place_relative", a="U1", b="J1", relation="near", distance="close"))
    return PcbTask(f"combo_usb_{i:02d}", "combined", "combo_usb",
                   f"USB-C powered bridge: receptacle at the {side} edge, LDO with capacitors, D+/D- as a pair.",
                   Board(w, h), comps, True, {"relations": rels})


# --- repair (8) ---------------------------------------------------------------------------------------
def repair_pin(i: int) -> PcbTask:
    """Two capacitors tight to one pin on a crowded board: only one fits within the tight gap."""
    w, h = 24, 20
    _, pn = _quad_pins(32)
    pin = pn["VDD0"]  # left side, just below the middle
    cx, cy = 12.0, 10.0
    ypin = cy + (pin - 1 - 3.5) * 0.5
    upins = {str(pin): "VDD", str(pn["GND0"]): "GND", str(pn["VDD2"]): "VDD"}
    pkg = ("0402", "0603", "0402", "0603")[i]
    comps = (
        _mcu("U1", 32, "MCU", upins, _p(cx, cy)),
        Component("R5", RES["0603"], "10k", {"1": "N1", "2": "N2"}, _p(cx - 4.75, ypin - 1.5, 0)),
        Component("R6", RES["0603"], "10k", {"1": "N3", "2": "N4"}, _p(cx - 4.75, ypin + 1.5, 0)),
        Component("C1", CAP[pkg], "100nF", {"1": "VDD", "2": "GND"}),
        Component("C2", CAP[pkg], "1uF", {"1": "VDD", "2": "GND"}),
    )
    start = {"relations": [_rel("decouple", cap="C1", pin=f"U1.{pin}", distance="tight"),
                           _rel("decouple", cap="C2", pin=f"U1.{pin}", distance="tight")]}
    ref = {"relations": [_rel("decouple", cap="C1", pin=f"U1.{pin}", distance="tight"),
                         _rel("decouple", cap="C2", pin=f"U1.{pin}", distance="loose")]}
    return PcbTask(f"repair_pin_{i:02d}", "repair", "repair_pin",
                   f"Two {pkg} capacitors both tight to U1.{pin}, hemmed in by R5 and R6.", Board(w, h), comps,
                   False, ref, start)


def repair_group(i: int) -> PcbTask:
    w, h = 34, 28
    comps = (Component("U1", QUADS[48], "MCU", {"1": "A", "2": "B", "3": "C", "4": "D"}),
             _header("J1", 6, ["A", "B", "", "", "", ""]), _header("J2", 6, ["C", "D", "", "", "", ""]),
             Component("C1", CAP["0805"], "10uF", {"1": "A", "2": "D"}))
    refs = ["U1", "J1", "J2", "C1"]
    start = {"relations": [_rel("group", refs=refs, spread="tight"),
                           _rel("board_edge", ref="J1", side=("left", "top")[i], distance="loose")]}
    ref = {"relations": [_rel("group", refs=refs, spread="loose"),
                         _rel("board_edge", ref="J1", side=("left", "top")[i], distance="loose")]}
    return PcbTask(f"repair_group_{i:02d}", "repair", "repair_group",
                   "A TQFP-48 and two 6-pin headers grouped tighter than their bodies allow.", Board(w, h), comps,
                   False, ref, start)


def repair_edge(i: int) -> PcbTask:
    """Two USB-C receptacles (each must face its edge) demanded at one edge narrower than both."""
    w, h = (16, 24) if i == 0 else (17, 22)
    usb = {p: n for p, n in USB_PINS.items() if n in ("VBUS", "GND")}
    comps = (_usb("J1", "USB-C data", usb), _usb("J2", "USB-C power", usb),
             Component("C1", CAP["0805"], "10uF", {"1": "VBUS", "2": "GND"}))
    start = {"relations": [_rel("board_edge", ref="J1", side="top", distance="tight"),
                           _rel("board_edge", ref="J2", side="top", distance="tight"),
                           _rel("place_relative", a="C1", b="J1", relation="near", distance="close")]}
    ref = {"relations": [_rel("board_edge", ref="J1", side="top", distance="tight"),
                         _rel("board_edge", ref="J2", side="bottom", distance="tight"),
                         _rel("place_relative", a="C1", b="J1", relation="near", distance="close")]}
    return PcbTask(f"repair_edge_{i:02d}", "repair", "repair_edge",
                   f"Two USB-C receptacles both demanded at the {w} mm top edge.", Board(w, h), comps,
                   False, ref, start)


FAMILIES: list[tuple[Callable[[int], PcbTask], int]] = [
    (fanout, 10), (crossing, 8), (matched, 8), (diffpair, 8), (four_layer, 8),
    (decouple, 8), (edges, 6), (keepouts, 6), (aligned, 6), (grouped, 5),
    (combo_mcu, 9), (combo_usb, 8),
    (repair_pin, 4), (repair_group, 2), (repair_edge, 2),
]


@cache
def all_tasks() -> dict[str, PcbTask]:
    """The quick suite: the 98 generated tasks."""
    out: dict[str, PcbTask] = {}
    for make, count in FAMILIES:
        for i in range(count):
            t = make(i)
            out[t.name] = t
    return out


def every_task() -> dict[str, PcbTask]:
    """The quick suite and the real-board suite (:mod:`.board_tasks`)."""
    from rac_fw.domains.pcb.board_tasks import board_tasks

    return all_tasks() | board_tasks()


def suite(name: str) -> dict[str, PcbTask]:
    """``quick`` (the 98 generated tasks), ``boards`` (derived from real layouts) or ``all``."""
    tasks = every_task()
    return tasks if name == "all" else {n: t for n, t in tasks.items() if t.suite == name}


def get_task(name: str) -> PcbTask:
    quick = all_tasks()
    if name in quick:
        return quick[name]
    tasks = every_task()
    if name not in tasks:
        raise UnknownTask("pcb", name, list(tasks))
    return tasks[name]
