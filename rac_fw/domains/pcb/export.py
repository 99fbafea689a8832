"""Export a realized board: a KiCad 6 ``.kicad_pcb`` (the project's own s-expression writer) and an SVG.

Both are written from the artifact and the task's footprints only, so what KiCad or a browser shows is
what the verifier judged. Strings from the task are quoted with KiCad's escaping; no file is
overwritten unless the caller says so.
"""

from __future__ import annotations

import html
from typing import Any

from rac_fw.domains.pcb.artifact import BoardArtifact
from rac_fw.domains.pcb.board import PcbTask
from rac_fw.domains.pcb.footprints import courtyard, placed_pads

KICAD_VERSION = 20211014  # the file-format version KiCad 6.0 writes
LAYER_COLOURS = {"F.Cu": "#c83434", "In1.Cu": "#c2c200", "In2.Cu": "#c200c2", "B.Cu": "#4d7fc4"}


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _n(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".") or "0"


def kicad_pcb(task: PcbTask, artifact: dict[str, Any]) -> str:
    """The board as a KiCad 6 PCB file (outline on Edge.Cuts, footprints with pads, tracks, vias, nets)."""
    art = BoardArtifact.model_validate(artifact)
    b = task.board
    names = b.layer_names
    nets = ["", *sorted(task.nets)]
    code = {n: i for i, n in enumerate(nets)}
    layer_ids = {"F.Cu": 0, "In1.Cu": 1, "In2.Cu": 2, "B.Cu": 31}
    out = [f"(kicad_pcb (version {KICAD_VERSION}) (generator rac_fw)",
           "  (general (thickness 1.6))", "  (paper \"A4\")", "  (layers"]
    for ln in names:
        out.append(f"    ({layer_ids[ln]} {_q(ln)} signal)")
    out += ["    (36 \"B.SilkS\" user \"B.Silkscreen\")", "    (37 \"F.SilkS\" user \"F.Silkscreen\")",
            "    (38 \"B.Mask\" user) (39 \"F.Mask\" user)", "    (44 \"Edge.Cuts\" user)",
            "    (46 \"B.CrtYd\" user \"B.Courtyard\") (47 \"F.CrtYd\" user \"F.Courtyard\")", "  )"]
    out += ["  (setup (pad_to_mask_clearance 0)", "  )"]
    for n in nets:
        out.append(f"  (net {code[n]} {_q(n)})")
    out.append(f"  (gr_rect (start 0 0) (end {_n(b.width)} {_n(b.height)}) (layer \"Edge.Cuts\") (width 0.1) "
               "(fill none))")
    for comp in task.components:
        p = art.placements.get(comp.ref)
        if p is None:
            continue
        fp = comp.fp
        out.append(f"  (footprint {_q(fp.name)} (layer \"F.Cu\") (at {_n(p.x)} {_n(p.y)} {p.rot})")
        out.append(f"    (fp_text reference {_q(comp.ref)} (at 0 0) (layer \"F.SilkS\") hide "
                   "(effects (font (size 0.8 0.8) (thickness 0.12))))")
        out.append(f"    (fp_text value {_q(comp.value)} (at 0 0) (layer \"F.Fab\") hide "
                   "(effects (font (size 0.8 0.8) (thickness 0.12))))")
        x0, y0, x1, y1 = fp.extent()
        out.append(f"    (fp_rect (start {_n(x0)} {_n(y0)}) (end {_n(x1)} {_n(y1)}) (layer \"F.CrtYd\") (width 0.05) "
                   "(fill none))")
        for i, pad in enumerate(fp.pads):
            net = comp.pins.get(pad.name)
            net_s = f" (net {code[net]} {_q(net)})" if net else ""
            at = f"(at {_n(pad.dx)} {_n(pad.dy)} {p.rot})"
            if pad.through_hole:
                shape = "rect" if i == 0 else "circle"
                out.append(f"    (pad {_q(pad.name)} thru_hole {shape} {at} (size {_n(pad.w)} {_n(pad.h)}) "
                           f"(drill {_n(pad.drill)}) (layers \"*.Cu\" \"*.Mask\"){net_s})")
            else:
                out.append(f"    (pad {_q(pad.name)} smd rect {at} (size {_n(pad.w)} {_n(pad.h)}) "
                           f"(layers \"F.Cu\" \"F.Paste\" \"F.Mask\"){net_s})")
        out.append("  )")
    for t in art.tracks:
        out.append(f"  (segment (start {_n(t.x1)} {_n(t.y1)}) (end {_n(t.x2)} {_n(t.y2)}) (width {_n(t.width)}) "
                   f"(layer {_q(t.layer)}) (net {code.get(t.net, 0)}))")
    for v in art.vias:
        out.append(f"  (via (at {_n(v.x)} {_n(v.y)}) (size {_n(v.diameter)}) (drill {_n(v.drill)}) "
                   f"(layers \"F.Cu\" \"B.Cu\") (net {code.get(v.net, 0)}))")
    out.append(")")
    return "\n".join(out) + "\n"


def svg(task: PcbTask, artifact: dict[str, Any], scale: float = 20.0) -> str:
    """A top view: outline, regions, courtyards, pads, tracks by layer colour, vias."""
    art = BoardArtifact.model_validate(artifact)
    b = task.board
    pad_mm = 1.0
    w, h = (b.width + 2 * pad_mm) * scale, (b.height + 2 * pad_mm) * scale

    def s(v: float) -> str:
        return f"{(v + pad_mm) * scale:.2f}"

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
           f'viewBox="0 0 {w:.0f} {h:.0f}">',
           f"<title>{html.escape(task.name)}</title>",
           f'<rect x="{s(0)}" y="{s(0)}" width="{b.width * scale:.2f}" height="{b.height * scale:.2f}" '
           'fill="#0b3d0b" stroke="#e0e000" stroke-width="2"/>']
    for reg in b.regions:
        colour = "#ff000055" if reg.kind == "keepout" else "#ffffff22"
        out.append(f'<rect x="{s(reg.x0)}" y="{s(reg.y0)}" width="{(reg.x1 - reg.x0) * scale:.2f}" '
                   f'height="{(reg.y1 - reg.y0) * scale:.2f}" fill="{colour}"><title>{html.escape(reg.name)}'
                   "</title></rect>")
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
        x0, y0, x1, y1 = courtyard(comp.fp, p.x, p.y, p.rot)
        out.append(f'<rect x="{s(x0)}" y="{s(y0)}" width="{(x1 - x0) * scale:.2f}" height="{(y1 - y0) * scale:.2f}" '
                   'fill="none" stroke="#d0d0d0" stroke-width="1" stroke-dasharray="3,2"/>')
        for pad in placed_pads(comp.ref, comp.fp, p.x, p.y, p.rot, comp.pins):
            label = html.escape(f"{pad.ref}.{pad.pin} {pad.net or ''}")
            if pad.round:
                out.append(f'<circle cx="{s(pad.cx)}" cy="{s(pad.cy)}" r="{pad.w / 2 * scale:.2f}" '
                           f'fill="#d4af37"><title>{label}</title></circle>')
            else:
                out.append(f'<rect x="{s(pad.cx - pad.w / 2)}" y="{s(pad.cy - pad.h / 2)}" '
                           f'width="{pad.w * scale:.2f}" height="{pad.h * scale:.2f}" fill="#d4af37">'
                           f"<title>{label}</title></rect>")
        out.append(f'<text x="{s((x0 + x1) / 2)}" y="{s((y0 + y1) / 2)}" font-size="{0.9 * scale:.1f}" '
                   f'fill="#ffffff" text-anchor="middle" dominant-baseline="middle">{html.escape(comp.ref)}</text>')
    for v in art.vias:
        out.append(f'<circle cx="{s(v.x)}" cy="{s(v.y)}" r="{v.diameter / 2 * scale:.2f}" fill="#aaaaaa" '
                   f'stroke="#333" stroke-width="{(v.diameter - v.drill) / 4 * scale:.2f}"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
