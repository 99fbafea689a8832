"""The ``spi_transfer`` operation: its model and its spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.domains.firmware.facts.query import dcache_active, has_dt_label
from rac_fw.domains.firmware.ops.bus import (
    ACTIONS,
    ESPIDF_BEHAVIOUR,
    HAL_BEHAVIOUR,
    OUTPUTS,
    ZEPHYR_BEHAVIOUR,
    Retries,
    Timeout,
)
from rac_fw.domains.firmware.plan.base import Operation
from rac_fw.domains.firmware.plan.fields import Name
from rac_fw.domains.firmware.plan.spec import Flag, OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.contract import Evidence
    from rac_fw.domains.firmware.facts.devicetree import DmaRoute
    from rac_fw.domains.firmware.facts.model import Target
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.hal import HalBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.evidence import Path
    from rac_fw.domains.firmware.plan.model import Plan


class SpiTransfer(Operation):
    """Full-duplex SPI transaction to a device: optional register index, then write/read payload."""

    op: Literal["spi_transfer"]
    device: Name = Field(description="An spi device declared in resources.devices.")
    register_index: int | None = Field(
        default=None, ge=0, le=0xFF, description="Device register index sent first, if any."
    )
    write_bytes: int = Field(default=0, ge=0, le=256)
    read_bytes: int = Field(default=1, ge=0, le=256)
    mode: Literal[0, 1, 2, 3] = Field(default=0, description="SPI mode (CPOL<<1 | CPHA).")
    timeout_ms: Timeout = 100
    retries: Retries = 2
    interval_ms: int | None = Field(default=None, ge=1, le=3_600_000, description="Repeat period, or once.")
    dma: bool = Field(
        default=False,
        description="Move the bytes by DMA (Zephyr STM32: the controller's TX/RX DMA requests from the facts).",
    )


SPI_DMA = "E_SPI_DMA"


@dataclass(frozen=True)
class SpiDma:
    """The DMA an SPI controller's transfers take: its TX and RX routes, or why it has none."""

    controller: str
    routes: tuple[DmaRoute, DmaRoute] | None
    problem: str | None


def spi_dma(plan: Plan, target: Target) -> dict[str, SpiDma]:
    """Per SPI controller with a ``dma: true`` transfer, its TX/RX streams (plan order).

    The streams of the devicetree block's ``dmas`` entries are taken first, then each controller's
    TX and RX in turn, so no two users share a stream (``route_requests`` allocates; one place).
    Every transfer on one controller shares its streams: the Zephyr driver binds them to the node.
    """
    from rac_fw.domains.firmware.facts.devicetree import DmaRoute
    from rac_fw.domains.firmware.plan.sections.devicetree import dma_routes, route_requests

    taken: set[tuple[str, int]] = set()
    block = plan.devicetree
    if block is not None:
        dma_routes(target, block, taken)
    found: dict[str, SpiDma] = {}
    for op in plan.operations:
        device = plan.device(op.device) if isinstance(op, SpiTransfer) and op.dma else None
        if device is None or device.controller in found:
            continue
        instance = device.controller
        if block is not None and any(e.peripheral == instance for e in block.dmas):
            why = f"the devicetree block already gives {instance} dmas entries"
            found[instance] = SpiDma(instance, None, why)
            continue
        tx, rx = route_requests(target, [f"{instance}_TX", f"{instance}_RX"], taken)
        if isinstance(tx, DmaRoute) and isinstance(rx, DmaRoute):
            found[instance] = SpiDma(instance, (tx, rx), None)
        else:
            found[instance] = SpiDma(instance, None, "; ".join(r for r in (tx, rx) if isinstance(r, str)))
    return found


def _zephyr(b: ZephyrBuilder, index: int, op: SpiTransfer) -> dict[str, Any]:

    oid = b.ids[index]
    device, label = b.bus_device(index, op, "spi")
    b.app.includes.update({"zephyr/drivers/spi.h", "zephyr/drivers/gpio.h"})
    prop = b.dt_property(f"{oid}-cs-gpios")
    b.app.user_props[prop] = b.gpio_ref(device.chip_select, active_low=True)
    mode = []
    if op.mode & 2:
        mode.append("SPI_MODE_CPOL")
    if op.mode & 1:
        mode.append("SPI_MODE_CPHA")
    header = 1 if op.register_index is not None else 0
    nocache = False
    if op.dma:
        found = spi_dma(b.plan, b.target).get(device.controller)
        if found is None or found.routes is None:
            why = found.problem if found and found.problem else "no DMA route"
            raise b.unsupported(f"operations[{index}].dma", why, [op.device], [])
        for route in found.routes:
            for node in route.nodes:
                b.app.okay(node)
        tx, rx = found.routes
        b.app.dma(label, "tx", tx.cells)
        b.app.dma(label, "rx", rx.cells)
        b.app.need("bus", "CONFIG_DMA", "CONFIG_SPI_STM32_DMA")
        # Zephyr 4.1's STM32 SPI driver refuses D-cached DMA buffers (-EFAULT): declare them __nocache.
        nocache = dcache_active(b.target, "zephyr")
        if nocache:
            b.app.includes.add("zephyr/linker/section_tags.h")
            b.app.need("bus", "CONFIG_NOCACHE_MEMORY")
    return {
        "nocache": nocache,
        "bus": label,
        "cs_prop": b.alias_macro(prop),
        "frequency": device.frequency_hz,
        "operation": " | ".join(["SPI_OP_MODE_MASTER", "SPI_TRANSFER_MSB", "SPI_WORD_SET(8)", *mode]),
        "register": f"0x{op.register_index:02x}" if op.register_index is not None else None,
        "length": header + max(op.write_bytes, op.read_bytes),
        "header": header,
        "read_bytes": op.read_bytes,
        "write_bytes": op.write_bytes,
        "outputs": {"rx": f"{oid}_in"},
        "attempts": op.retries + 1,
        "setup": True,
        "step": {"period_ms": op.interval_ms},
    }


def _espidf(b: EspIdfBuild, index: int, op: SpiTransfer) -> dict[str, Any]:
    where = f"operations[{index}]"
    device = b.plan.device(op.device)
    if device is None or device.bus != "spi" or device.chip_select is None:
        raise b.unsupported(f"{where}.device", f"{op.device!r} is not an spi device")
    host = f"SPI{b.port(device.controller, where)}_HOST"
    if host not in b.spi_buses:
        pins = {k: b.signal_pin(f"{device.controller}_{k.upper()}", where) for k in ("sck", "mosi", "miso")}
        b.spi_buses[host] = {"host": host, **pins, "devices": {}, "max_bytes": 0}
    bus = b.spi_buses[host]
    length = (1 if op.register_index is not None else 0) + max(op.write_bytes, op.read_bytes)
    bus["max_bytes"] = max(bus["max_bytes"], length)
    handle = f"{device.name}_m{op.mode}"
    cs = b.gpio(device.chip_select, f"{where}.chip_select")
    bus["devices"][handle] = {"name": handle, "mode": op.mode, "hz": device.frequency_hz, "cs": cs}
    return {"device": handle, "host": host, "length": length, "task": b.thread(None, b.symbol(index, op)),
            "outputs": {"rx": f"{b.symbol(index, op)}_in"},
            # Its first report comes after its first transfer: every attempt may take the whole timeout.
            "report_within_ms": (op.retries + 1) * op.timeout_ms + 1000}


def _hal(b: HalBuild, index: int, op: SpiTransfer) -> dict[str, Any]:
    where = f"operations[{index}]"
    view = b.base_view(index, op)
    device = b.bus_view(view, op, "spi", where)
    assert device.chip_select is not None
    cs = b.pin(device.chip_select, f"{where}.chip_select")
    b.ports.add(cs.port)
    b.outputs[cs.name] = {"pin": cs, "idle": "GPIO_PIN_SET"}
    view["cs"] = cs
    view["length"] = (1 if op.register_index is not None else 0) + max(op.write_bytes, op.read_bytes)
    view["outputs"] = {"rx": f"{view['sym']}_in"}  # filled by the behaviour's `transfer` (its `behaviour` part)
    return view


def _names(plan: Plan, target: Target, framework: str, index: int, op: SpiTransfer) -> list[Evidence]:
    """E_UNKNOWN_RESOURCE: ``device`` must be an SPI device of ``resources.devices``."""
    from rac_fw.domains.firmware.obligations.references import References  # runs after the plan model exists

    refs = References(plan, target, framework)
    base: Path = ["operations", index]
    refs.device(op.device, [*base, "device"], "spi")
    return refs.found


def _dma(plan: Plan, target: Target, framework: str, index: int, op: SpiTransfer) -> list[Evidence]:
    """E_SPI_DMA: ``dma: true`` needs the Zephyr lowering, a TX and an RX route of the controller's DMA
    requests on free streams, and the transfer buffers (default RAM) reachable by that DMA master."""
    from rac_fw.domains.firmware.placement import buffer_regions, default_ram
    from rac_fw.domains.firmware.plan.evidence import relax, remove, violation

    device = plan.device(op.device)
    if not op.dma or device is None or device.bus != "spi":
        return []
    where: Path = ["operations", index, "dma"]
    problem: str | None = None
    if framework != "zephyr":
        problem = f"SPI DMA is lowered for Zephyr only, not {framework}"
    else:
        found = spi_dma(plan, target).get(device.controller)
        problem = found.problem if found is not None else None
        if found is not None and found.routes is not None:
            home = default_ram(target)
            for route in found.routes:
                controller = next(c for c in target.dma if c.name == route.controller)
                if home is not None and home not in buffer_regions(target, controller.master):
                    problem = (
                        f"the transfer buffers live in {home.name} ({home.kind}), which {controller.name} "
                        f"(bus master {controller.master}) cannot reach"
                    )
    if problem is None:
        return []
    return [
        violation(
            SPI_DMA,
            f"{op.device} on {device.controller}: {problem}",
            where,
            [device.controller, op.device],
            relaxations=[relax("drop dma", remove(where))],
        )
    ]

def _one_task(plan: Plan, target: Target, index: int, op: SpiTransfer) -> list[Evidence]:
    """ESP-IDF's SPI master is not thread-safe for one device used from two tasks (its driver documentation, "Notes
    about thread safety"): a behaviour that transfers on the operation must not meet the operation's own periodic
    transfers (once, without an interval, they end before app_main starts the behaviour)."""
    from rac_fw.domains.firmware.plan.behaviour.lowering import compiled  # the behaviour compiler imports the ops
    from rac_fw.domains.firmware.plan.evidence import relax, remove, violation

    found, _ = compiled(plan, target, "espidf") if op.interval_ms is not None else (None, [])
    if found is None or (index, "transfer") not in found.actions:
        return []
    path: Path = ["operations", index, "interval_ms"]
    return [violation("E_TARGET_UNSUPPORTED", f"on ESP-IDF the behaviour's transfers on {op.name or op.device} and the "
                      f"operation's own every {op.interval_ms} ms would use {op.device} from two tasks, which the SPI "
                      "master driver does not allow", path, [op.name or "spi_transfer", op.device],
                      relaxations=[relax("transfer once at set-up (drop interval_ms)", remove(path))])]  # fmt: skip


SPEC = OpSpec(
    model=SpiTransfer,
    family="bus",
    flags=frozenset({Flag.VALUE}),
    value=lambda op: op.read_bytes > 0,
    value_fix=("read_bytes", 1),
    outputs=OUTPUTS,
    actions=ACTIONS,
    realizations={
        "zephyr": Realization(
            template="spi",
            view=_zephyr,
            available=lambda t: has_dt_label(t, r"spi\d*"),
            why_unavailable=lambda t: f"the {t.id} board devicetree enables no spi controller node (spiN)",
            unrealized={"timeout_ms": "Zephyr's spi_transceive_dt takes no timeout: the driver bounds the transfer"},
            quiet=True,
            behaviour=ZEPHYR_BEHAVIOUR,
        ),
        "espidf": Realization(
            template="bus",
            view=_espidf,
            admits=_one_task,
            unrealized={"timeout_ms": "spi_device_polling_transmit takes no timeout: the transfer runs to its end"},
            quiet=True,
            behaviour=ESPIDF_BEHAVIOUR,
        ),
        "hal": Realization(template="ops", view=_hal, quiet=True, behaviour=HAL_BEHAVIOUR),
    },
    checks=(_names, _dma),
    codes=("E_UNKNOWN_RESOURCE", SPI_DMA),
)
