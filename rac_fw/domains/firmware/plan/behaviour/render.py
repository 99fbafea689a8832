"""Render a compiled behaviour as C through ``templates/behaviour/`` and the framework's runtime macros.

One renderer for every framework: the step macros (``steps.c.j2``), the program skeleton (``program.c.j2``)
and the runtime helpers (``runtime.c.j2``) are shared; a framework supplies only
``templates/<framework>/behaviour_rt.c.j2`` (its clock, sleep, console line, critical section, atomics,
end of run and persistence) and, for each operation a behaviour uses, the op view the lowering built (the
C names of its outputs, the ``act_<action>`` macros of its template). No code here branches on a
framework, an operation or a step kind: steps dispatch by name to ``step_<kind>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jinja2

from rac_fw.domains.firmware.plan.behaviour import ir
from rac_fw.domains.firmware.plan.behaviour.cexpr import literal, render, suffix
from rac_fw.domains.firmware.plan.behaviour.types import VType
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.resources import data_dir

INDENT = "    "
#: Filters whose first sample is taken as it is (they keep a ``<var>_first`` flag).
FIRST_SAMPLE = ("exponential", "delta", "throttle")


@cache
def environment(framework: str) -> jinja2.Environment:
    """Templates of ``templates/<framework>/`` (its ``behaviour_rt.c.j2``) over ``templates/behaviour/``."""
    root = data_dir("templates")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(root / framework), str(root / "behaviour")]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )


@dataclass
class OpRef:
    """What the renderer knows of one operation the behaviour uses: its view and its template module."""

    view: dict[str, Any]
    module: Any
    """The Jinja module of the op's template (its ``act_<action>`` macros), or None."""


def indent(text: str, depth: int) -> str:
    pad = INDENT * depth
    return "\n".join(pad + line if line.strip() else line for line in text.splitlines())


@dataclass
class Renderer:
    """Renders statements of one program for one framework (``r`` in the step macros)."""

    program: ir.Program
    framework: str
    ops: dict[int, OpRef]
    hook_name: Callable[[int, str], str]
    env: jinja2.Environment = field(init=False)
    rt: Any = field(init=False)
    steps: Any = field(init=False)
    current: ir.Trigger | None = None
    in_isr: bool = False
    _temps: dict[str, dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env = environment(self.framework)
        self.rt = self.env.get_template("behaviour_rt.c.j2").module
        self.steps = self.env.get_template("steps.c.j2").module

    # --- names ------------------------------------------------------------------------------------------
    def script(self, name: str) -> ir.Trigger:
        return next(s for s in self.program.scripts if s.name == name)

    def trigger(self, name: str) -> ir.Trigger:
        return next(t for t in self.program.triggers if t.name == name)

    def access(self, symbol: ir.Symbol, whole: bool) -> str:
        if symbol.kind == "output":
            assert symbol.op_index is not None
            return str(self.ops[symbol.op_index].view["outputs"][symbol.name.split(".", 1)[1]])
        if symbol.kind == "state":
            return "rac_b_state"
        if symbol.kind == "var":
            var = self.program.variable(symbol.name)
            if whole:
                return f"{symbol.c}_w"
            if var is not None and var.shared == "atomic" and not self.in_isr:
                return str(self.rt.atomic_load(symbol.c)).strip()
        return symbol.c

    # --- expressions ------------------------------------------------------------------------------------
    def _locked(self, e: ir.TExpr) -> bool:
        return any(s.kind == "var" and (v := self.program.variable(s.name)) is not None and v.shared == "lock"
                   for s in ir.refs(e)) and not self.in_isr  # fmt: skip

    def pre(self, s: ir.Stmt) -> str:
        """Snapshots, under the critical section, of the statement's expressions that read locked variables."""
        temps: dict[str, str] = {}
        lines = []
        for key, e in s.exprs.items():
            if self._locked(e):
                name = f"{s.id}_{key}"
                lines.append(f"{_c_type(e.type)} {name};")
                lines.append(str(self.rt.locked(f"{name} = {render(e, self.access)};")).strip())
                temps[key] = name
        self._temps[s.id] = temps
        return "".join(line + "\n" for line in lines)

    def x(self, s: ir.Stmt, key: str) -> str:
        """The C of the statement's expression ``key`` (its snapshot when :meth:`pre` took one)."""
        taken = self._temps.get(s.id, {}).get(key)
        return taken if taken is not None else render(s.exprs[key], self.access)

    @staticmethod
    def lit(text: str) -> str:
        return c_string(text)

    def put_value(self, s: ir.Stmt, key: str, fmt: str) -> str:
        e = s.exprs[key]
        value = self.x(s, key)
        t = e.type
        if t.kind == "bytes":
            return f"rac_b_put_bytes({value}, {value}_len);"
        if t.kind == "float":
            decimals = int(fmt[1:]) if fmt.startswith(".") else 2
            return f"rac_b_put_fixed({value}, {decimals}U);"
        if t.kind == "bool":
            return f'rac_b_put_str(({value}) ? "true" : "false");'
        if t.kind == "state":
            names = ", ".join(c_string(st.name) for st in self.program.states)
            return f"{{ static const char *const names[] = {{{names}}}; rac_b_put_str(names[{value}]); }}"
        base = 16 if fmt.rstrip("0123456789").endswith(("x", "X")) or fmt.endswith(("x", "X")) else 10
        digits = "".join(ch for ch in fmt if ch.isdigit())
        width = int(digits.lstrip("0") or 0) if digits else 0
        zero = "true" if fmt.startswith("0") else "false"
        upper = "true" if fmt.endswith("X") else "false"
        if base == 16 and t.signed:
            value = f"(uint{t.bits}_t)({value})"  # the bits of its own width, as the predictor prints them
        return f"rac_b_put_num((int64_t)({value}), {base}U, {width}U, {zero}, {upper});"

    # --- statements -------------------------------------------------------------------------------------
    def stmt(self, s: ir.Stmt) -> str:
        macro = getattr(self.steps, f"step_{s.kind}")
        return str(macro(s, self)).strip("\n")

    def block(self, stmts: list[ir.Stmt], depth: int = 1) -> str:
        return "\n".join(indent(self.stmt(s), depth) for s in stmts)

    def pause(self, ms: int) -> str:
        """Sleep ``ms`` on the clock (in a restart-mode script, ending at once when the script is restarted)."""
        script = self.current
        if script is not None and script.kind == "script" and script.mode == "restart" and script.started:
            return (f"{{\n{INDENT}const uint32_t t0 = {self.rt.now_ms()};\n{INDENT}while ((uint32_t)({self.rt.now_ms()}"
                    f" - t0) < {ms}U) {{\n{INDENT * 2}if ({script.c}_restart) {{\n{INDENT * 3}rac_b_now += (uint32_t)"
                    f"({self.rt.now_ms()} - t0);\n{INDENT * 3}goto {script.c}_again;\n{INDENT * 2}}}\n{INDENT * 2}"
                    f"{str(self.rt.sleep_ms(1)).strip()}\n{INDENT}}}\n}}")
        return str(self.rt.sleep_ms(ms)).strip()  # fmt: skip

    def wait(self, ms: int) -> str:
        """A ``wait``: the pause, then the behaviour's time moves on by exactly ``ms`` (the predictor's clock)."""
        return f"{self.pause(ms)}\nrac_b_now += {ms}U;"

    def assign(self, s: ir.Stmt, name: str, kind: str, what: Any) -> str:
        var = self.program.variable(name)
        assert var is not None
        if kind == "bytes":
            data = ", ".join(f"0x{b:02x}U" for b in what) or "0U"
            code = (f"{{\n{INDENT}static const uint8_t k[] = {{{data}}};\n{INDENT}rac_b_copy({var.c}, &{var.c}_len, "
                    f"{var.type.size}U, k, {len(what)}U);\n}}")  # fmt: skip
        elif kind == "var":
            other = self.program.variable(what)
            assert other is not None
            code = f"rac_b_copy({var.c}, &{var.c}_len, {var.type.size}U, {other.c}, {other.c}_len);"
        elif var.type.kind == "bytes":
            source = self.x(s, what)
            code = f"rac_b_copy({var.c}, &{var.c}_len, {var.type.size}U, {source}, {source}_len);"
        elif var.filter is not None or var.window:
            code = f"{var.c}_feed({self.x(s, what)});"
        else:
            code = f"{var.c} = {self.x(s, what)};"
        if var.persist:
            code += "\n" + str(self.rt.persist_save(var)).strip()
        if var.shared != "none" and not self.in_isr:
            return str(self.rt.locked(code)).strip()
        return code

    def act(self, s: ir.Stmt) -> str:
        index = s.data["op"]
        ref = self.ops[index]
        args: dict[str, Any] = {}
        for name, kind, what in s.data["args"]:
            if kind == "expr":
                args[name] = self.x(s, what)
            elif kind == "var":
                var = self.program.variable(what)
                assert var is not None
                args[name] = {"data": var.c, "len": f"{var.c}_len"}
            else:
                data = ", ".join(f"0x{b:02x}U" for b in what)
                args[name] = {"data": f"(const uint8_t[]){{{data}}}", "len": f"{len(what)}U"}
        ok = s.data.get("ok")
        ok_var = self.program.variable(ok) if ok else None
        args["ok"] = ok_var.c if ok_var is not None else None
        macro = getattr(ref.module, f"act_{s.data['action']}")
        code = str(macro(ref.view, args)).strip("\n")
        into = s.data.get("into")
        if into is not None:
            var = self.program.variable(into[0])
            assert var is not None
            source = str(ref.view["outputs"][into[1]])
            if var.type.kind == "bytes":
                code += f"\nrac_b_copy({var.c}, &{var.c}_len, {var.type.size}U, {source}, {source}_len);"
            elif var.filter is not None or var.window:
                code += f"\n{var.c}_feed(({_c_type(var.filter['input'] if var.filter else var.type)})({source}));"
            else:
                code += f"\n{var.c} = ({_c_type(var.type)})({source});"
        return code


def _c_type(t: VType) -> str:
    return t.c_type


# --- declarations -------------------------------------------------------------------------------------


def declaration(var: ir.Variable) -> str:
    """The C declaration of a variable (volatile when an interrupt handler and the thread share it)."""
    volatile = "volatile " if var.shared != "none" else ""
    t = var.type
    if t.kind == "bytes":
        init = var.init or []
        data = ", ".join(f"0x{b:02x}U" for b in init)
        body = f"{{{data}}}" if init else "{0}"
        return (f"static uint8_t {var.c}[{t.size}] = {body};\nstatic uint32_t {var.c}_len = {len(init)}U;")
    value = literal(var.init, t) if var.init is not None else literal(False if t.kind == "bool" else 0, t)
    lines = [f"static {volatile}{t.c_type} {var.c} = {value};"]
    if var.window:
        element = _element(t)
        lines.append(f"static {element['c']} {var.c}_samples[{var.window}];")
        lines.append(f"static struct rac_b_win_{element['s']} {var.c}_w = {{{var.c}_samples, {var.window}U, 0U, 0U}};")
    if var.filter is not None and var.filter["kind"] in FIRST_SAMPLE:
        lines.append(f"static bool {var.c}_first = true;")
        if var.filter["kind"] == "throttle":
            lines.append(f"static uint32_t {var.c}_last_ms;")
    return "\n".join(lines)


def _element(t: VType) -> dict[str, str]:
    """The window element type of a numeric variable type (samples are kept at 32 bits)."""
    if t.kind == "float":
        return {"c": "float", "s": "f32", "wide": "float", "acc": "float"}
    s = suffix(t)
    c = "int32_t" if t.signed else "uint32_t"
    return {"c": c, "s": s, "wide": c, "acc": "int64_t"}


def window_types(program: ir.Program) -> list[dict[str, str]]:
    found = {_element(v.type)["s"]: _element(v.type) for v in program.variables if v.window}
    return [found[k] for k in sorted(found)]
