"""Export a realized board: a KiCad 6 ``.kicad_pcb`` (the project's own S-expression writer) and an SVG.

Both are written from the artifact and the task's facts only, so what KiCad or a browser shows is what
the verifier judged. Footprints keep their KiCad library id, attribute, pads (shapes, exposed pads,
holes), courtyard, drawings and side, so KiCad's "update footprint from library" changes nothing; the
board's outline (any polygon, with cut-outs), copper pours (the artifact's fills when it has them,
else the outlines for KiCad to fill), keepouts (as rule areas) and mounting holes (footprints of the
task) are written too; the rules and net classes go to the ``.kicad_pro`` (:func:`.kicad.project`).
Strings are quoted with KiCad's escaping; no file is overwritten unless the caller says so.
"""

from __future__ import annotations

import html
from typing import Any

from rac_fw.domains.pcb.artifact import BoardArtifact, PartPlacement
from rac_fw.domains.pcb.board import Component, PcbTask, Region, Zone
from rac_fw.domains.pcb.footprints import Graphic, PadDef, Point, courtyard_polygon, pad_shape, placed_pads
from rac_fw.domains.pcb.sexpr import quote as _q

KICAD_VERSION = 20211014  # the file-format version KiCad 6.0 writes
LAYER_IDS = {"F.Cu": 0, "In1.Cu": 1, "In2.Cu": 2, "In3.Cu": 3, "In4.Cu": 4, "B.Cu": 31}
USER_LAYERS = ((32, "B.Adhes", "B.Adhesive"), (33, "F.Adhes", "F.Adhesive"), (34, "B.Paste", None),
               (35, "F.Paste", None), (36, "B.SilkS", "B.Silkscreen"), (37, "F.SilkS", "F.Silkscreen"),
               (38, "B.Mask", None), (39, "F.Mask", None), (40, "Dwgs.User", "User.Drawings"),
               (41, "Cmts.User", "User.Comments"), (44, "Edge.Cuts", None), (45, "Margin", None),
               (46, "B.CrtYd", "B.Courtyard"), (47, "F.CrtYd", "F.Courtyard"), (48, "B.Fab", None),
               (49, "F.Fab", None))
LAYER_COLOURS = {"F.Cu": "#c83434", "In1.Cu": "#c2c200", "In2.Cu": "#c200c2", "In3.Cu": "#00c2c2",
                 "In4.Cu": "#7f7fff", "B.Cu": "#4d7fc4"}
KICAD6_ATTRIBUTES = ("through_hole", "smd", "virtual", "board_only", "exclude_from_pos_files", "exclude_from_bom")
CONNECT = {"thermal": "", "solid": "yes ", "thru_hole_only": "thru_hole_only ", "none": "no "}


def _n(v: float) -> str:
    text = f"{v:.5f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _pts(points: tuple[Point, ...] | list[Point]) -> str:
    return "(pts " + " ".join(f"(xy {_n(x)} {_n(y)})" for x, y in points) + ")"


def _pad(pad: PadDef, rot: float, bottom: bool, net: str | None, code: dict[str, int]) -> str:
    """One pad as KiCad stores it in a board: local position mirrored on the bottom, absolute angle."""
    dy = -pad.dy if bottom else pad.dy
    angle = (rot - pad.angle if bottom else rot + pad.angle) % 360
    side = ("B" if pad.side == "F" else "F") if bottom else pad.side
    layers = {"smd": f'"{side}.Cu" "{side}.Paste" "{side}.Mask"', "connect": f'"{side}.Cu" "{side}.Mask"'}.get(
        pad.kind, '"*.Cu" "*.Mask"')
    shape = "rect" if pad.shape == "trapezoid" else pad.shape
    out = f"    (pad {_q(pad.name)} {pad.kind} {shape} (at {_n(pad.dx)} {_n(dy)} {_n(angle)}) " \
          f"(size {_n(pad.w)} {_n(pad.h)})"
    if pad.drill > 0:
        out += (f" (drill oval {_n(pad.drill)} {_n(pad.drill_h)})" if pad.drill_h > 0 else f" (drill {_n(pad.drill)})")
    out += f" (layers {layers})"
    if pad.shape == "roundrect":
        out += f" (roundrect_rratio {_n(pad.rratio)})"
    if net:
        out += f" (net {code[net]} {_q(net)})"
    if pad.shape == "custom":
        outline = [(u, -v) if bottom else (u, v) for u, v in pad_shape("custom", pad.w, pad.h, 0, pad.outline)]
        out += (f" (options (clearance outline) (anchor rect)) (primitives (gr_poly {_pts(outline)} (width 0) "
                "(fill yes)))")
    return out + ")"


def _graphic(g: Graphic, rot: float, bottom: bool) -> str:
    layer = g.layer.replace("F.", "B.", 1) if bottom and g.layer.startswith("F.") else g.layer
    pts = [(x, -y) if bottom else (x, y) for x, y in g.points]

    def xy(name: str, pt: Point) -> str:
        return f"({name} {_n(pt[0])} {_n(pt[1])})"
    tail = f"(layer {_q(layer)}) (width {_n(g.width)})"
    fill = " (fill solid)" if g.filled else " (fill none)"
    if g.kind == "text":
        mirror = " (justify mirror)" if bottom else ""
        return (f"    (fp_text user {_q(g.text)} (at {_n(pts[0][0])} {_n(pts[0][1])} {_n(rot)}) (layer {_q(layer)}) "
                f"(effects (font (size {_n(g.size)} {_n(g.size)}) (thickness {_n(g.width)})){mirror}))")
    if g.kind == "line":
        return f"    (fp_line {xy('start', pts[0])} {xy('end', pts[1])} {tail})"
    if g.kind == "rect":
        return f"    (fp_rect {xy('start', pts[0])} {xy('end', pts[1])} {tail}{fill})"
    if g.kind == "circle":
        return f"    (fp_circle {xy('center', pts[0])} {xy('end', pts[1])} {tail}{fill})"
    if g.kind == "arc":
        return f"    (fp_arc {xy('start', pts[0])} {xy('mid', pts[1])} {xy('end', pts[2])} {tail})"
    return f"    (fp_poly {_pts(pts)} {tail}{fill})"


def _aperture(pad: PadDef, rot: float, bottom: bool) -> str:
    s = "B" if (pad.side == "F") == bottom else "F"
    return (f"    (pad {_q(pad.name)} smd {pad.shape} (at {_n(pad.dx)} {_n(-pad.dy if bottom else pad.dy)} {_n(rot)}) "
            f"(size {_n(pad.w)} {_n(pad.h)}) (layers \"{s}.Paste\")"
            + (f" (roundrect_rratio {_n(pad.rratio)})" if pad.shape == "roundrect" else "") + ")")


def _footprint(comp: Component, p: PartPlacement, code: dict[str, int]) -> list[str]:
    fp = comp.fp
    bottom = comp.side == "bottom"
    s = "B" if bottom else "F"
    mirror = " (justify mirror)" if bottom else ""
    out = [f"  (footprint {_q(comp.footprint)} (layer \"{s}.Cu\") (at {_n(p.x)} {_n(p.y)} {_n(p.rot)})"]
    if fp.description:
        out.append(f"    (descr {_q(fp.description)})")
    attrs = [a for a in fp.attr.split() if a in KICAD6_ATTRIBUTES]  # KiCad 8's dnp, allow_* are unknown to 6
    if attrs:
        out.append(f"    (attr {' '.join(attrs)})")
    for kind, text, layer in (("reference", comp.ref, "SilkS"), ("value", comp.value, "Fab")):
        out.append(f"    (fp_text {kind} {_q(text)} (at 0 0 {_n(p.rot)}) (layer \"{s}.{layer}\") hide "
                   f"(effects (font (size 0.8 0.8) (thickness 0.12)){mirror}))")
    if not any(g.layer == "F.CrtYd" for g in fp.graphics):  # the library's own courtyard drawing, else ours
        court = [(u, -v) if bottom else (u, v) for u, v in fp.court()]
        out.append(f"    (fp_poly {_pts(court)} (layer \"{s}.CrtYd\") (width 0.05) (fill none))")
    out += [_graphic(g, p.rot, bottom) for g in fp.graphics]
    for pad in fp.pads:
        out.append(_pad(pad, p.rot, bottom, comp.pins.get(pad.name) if pad.name else None, code))
    out += [_aperture(a, p.rot, bottom) for a in fp.apertures]
    out.append("  )")
    return out


def _layers(names: tuple[str, ...]) -> str:
    return " ".join(_q(n) for n in names)


def _zone(z: Zone, code: dict[str, int], names: tuple[str, ...]) -> str:
    layers = [n for n in z.layers if n in names]
    return (f"  (zone (net {code.get(z.net, 0)}) (net_name {_q(z.net)}) (layers {_layers(tuple(layers))})"
            + (f" (name {_q(z.name)})" if z.name else "")
            + f" (hatch edge 0.508) (priority {z.priority}) "
            f"(connect_pads {CONNECT[z.connect]}(clearance {_n(z.clearance)}))"
            f" (min_thickness {_n(z.min_width)}) (fill (thermal_gap {_n(z.thermal_gap)}) "
            f"(thermal_bridge_width {_n(z.thermal_width)})) (polygon {_pts(z.outline)}))")


def _fill(net: str, layer: str, ring: list[tuple[float, float]], code: dict[str, int]) -> str:
    return (f"  (zone (net {code.get(net, 0)}) (net_name {_q(net)}) (layer {_q(layer)}) (hatch edge 0.508) "
            "(connect_pads (clearance 0)) (min_thickness 0.0254) (filled_areas_thickness no) "
            f"(fill yes (thermal_gap 0.5) (thermal_bridge_width 0.5)) (polygon {_pts(ring)}) "
            f"(filled_polygon (layer {_q(layer)}) {_pts(ring)}))")


def _rule_area(r: Region, names: tuple[str, ...]) -> str:
    def allowed(flag: bool) -> str:
        return "not_allowed" if flag else "allowed"
    layers = tuple(n for n in (r.layers or names) if n in names)
    return (f"  (zone (net 0) (net_name \"\") (layers {_layers(layers)}) (name {_q(r.name)}) (hatch edge 0.508) "
            "(connect_pads (clearance 0)) (min_thickness 0.254) "
            f"(keepout (tracks {allowed(r.no_tracks)}) (vias {allowed(r.no_vias)}) (pads allowed) "
            f"(copperpour {allowed(r.no_pours)}) (footprints {allowed(r.no_parts)})) "
            f"(fill (thermal_gap 0.508) (thermal_bridge_width 0.508)) (polygon {_pts(r.outline())}))")


def _edges(points: tuple[Point, ...]) -> list[str]:
    return [f"  (gr_line (start {_n(a[0])} {_n(a[1])}) (end {_n(b[0])} {_n(b[1])}) (layer \"Edge.Cuts\") (width 0.1))"
            for a, b in zip(points, points[1:] + points[:1], strict=True)]


def kicad_pcb(task: PcbTask, artifact: dict[str, Any]) -> str:
    """The board as a KiCad 6 PCB file: outline, footprints, nets, tracks, vias, pours and rule areas."""
    art = BoardArtifact.model_validate(artifact)
    b = task.board
    names = b.layer_names
    nets = ["", *sorted(task.nets), *sorted({z.net for z in b.zones} - set(task.nets) - {""})]
    code = {n: i for i, n in enumerate(nets)}
    out = [f"(kicad_pcb (version {KICAD_VERSION}) (generator rac_fw)", "  (general (thickness 1.6))",
           '  (paper "A4")', "  (layers"]
    out += [f"    ({LAYER_IDS[ln]} {_q(ln)} signal)" for ln in names]
    out += [f"    ({i} {_q(n)} user" + (f" {_q(alias)})" if alias else ")") for i, n, alias in USER_LAYERS]
    out += ["  )", "  (setup (pad_to_mask_clearance 0))"]
    out += [f"  (net {code[n]} {_q(n)})" for n in nets]
    out += _edges(b.outline_points())
    for cut in b.cutouts:
        out += _edges(cut)
    for comp in task.components:
        p = art.placements.get(comp.ref)
        if p is not None:
            out += _footprint(comp, p, code)
    for t in art.tracks:
        out.append(f"  (segment (start {_n(t.x1)} {_n(t.y1)}) (end {_n(t.x2)} {_n(t.y2)}) (width {_n(t.width)}) "
                   f"(layer {_q(t.layer)}) (net {code.get(t.net, 0)}))")
    for v in art.vias:
        out.append(f"  (via (at {_n(v.x)} {_n(v.y)}) (size {_n(v.diameter)}) (drill {_n(v.drill)}) "
                   f"(layers {_q(names[0])} {_q(names[-1])}) (net {code.get(v.net, 0)}))")
    if art.pours:  # the realized fills are the pours' copper: written filled, as KiCad keeps them
        out += [_fill(f.net, f.layer, f.points, code) for f in art.pours]
    else:  # unrealized pours: their outlines and settings, for KiCad to fill
        out += [_zone(z, code, names) for z in b.zones]
    out += [_rule_area(r, names) for r in b.regions if r.kind == "keepout"]
    out.append(")")
    return "\n".join(out) + "\n"


def svg(task: PcbTask, artifact: dict[str, Any], scale: float = 20.0) -> str:
    """A top view: outline, regions, pours (outlines), courtyards, pads, tracks by layer colour, vias."""
    art = BoardArtifact.model_validate(artifact)
    b = task.board
    pad_mm = 1.0
    w, h = (b.width + 2 * pad_mm) * scale, (b.height + 2 * pad_mm) * scale

    def s(v: float) -> str:
        return f"{(v + pad_mm) * scale:.2f}"

    def poly(points: tuple[Point, ...] | list[Point], attrs: str, title: str = "") -> str:
        tip = f"<title>{html.escape(title)}</title>" if title else ""
        return f'<polygon points="{" ".join(f"{s(x)},{s(y)}" for x, y in points)}" {attrs}>{tip}</polygon>'

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.0f} {h:.0f}">',
           f"<title>{html.escape(task.name)}</title>",
           poly(b.outline_points(), 'fill="#0b3d0b" stroke="#e0e000" stroke-width="2"')]
    out += [poly(c, 'fill="#ffffff" stroke="#e0e000" stroke-width="1"') for c in b.cutouts]
    for reg in b.regions:
        colour = "#ff000055" if reg.kind == "keepout" else "#ffffff22"
        out.append(poly(reg.outline(), f'fill="{colour}"', reg.name))
    for z in b.zones:
        colour = LAYER_COLOURS.get(z.layers[0], "#888888") if z.layers else "#888888"
        out.append(poly(z.outline, f'fill="none" stroke="{colour}" stroke-width="1" stroke-dasharray="6,3"',
                        f"pour {z.net} on {', '.join(z.layers)}"))
    for layer in reversed(b.layer_names):  # bottom copper first, top copper drawn over it
        for t in art.tracks:
            if t.layer == layer:
                out.append(f'<line x1="{s(t.x1)}" y1="{s(t.y1)}" x2="{s(t.x2)}" y2="{s(t.y2)}" '
                           f'stroke="{LAYER_COLOURS[layer]}" stroke-width="{t.width * scale:.2f}" '
                           f'stroke-linecap="round" opacity="0.85"><title>{html.escape(t.net)}</title></line>')
    for comp in task.components:
        p = art.placements.get(comp.ref)
        if p is None:
            continue
        court = courtyard_polygon(comp.fp, p.x, p.y, p.rot, comp.side)
        dash = "3,2" if comp.side == "top" else "1,3"
        out.append(poly(court, f'fill="none" stroke="#d0d0d0" stroke-width="1" stroke-dasharray="{dash}"'))
        for pad in placed_pads(comp.ref, comp.fp, p.x, p.y, p.rot, comp.pins, comp.side):
            fill = "#202020" if pad.hole_only else "#d4af37" if pad.layers != "B" else "#8fa8c8"
            out.append(poly(pad.outline(), f'fill="{fill}"', f"{pad.ref}.{pad.pin} {pad.net or ''}"))
        cx = sum(x for x, _ in court) / len(court)
        cy = sum(y for _, y in court) / len(court)
        out.append(f'<text x="{s(cx)}" y="{s(cy)}" font-size="{0.9 * scale:.1f}" fill="#ffffff" '
                   f'text-anchor="middle" dominant-baseline="middle">{html.escape(comp.ref)}</text>')
    for v in art.vias:
        out.append(f'<circle cx="{s(v.x)}" cy="{s(v.y)}" r="{v.diameter / 2 * scale:.2f}" fill="#aaaaaa" '
                   f'stroke="#333" stroke-width="{(v.diameter - v.drill) / 4 * scale:.2f}"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
