"""DMA operations: memory-to-memory copy (one block or a chain of blocks) and peripheral-to-memory reception.

Shared here: how a Zephyr DMA node that the board leaves unconfigured (``zephyr,dma-emul`` on native_sim)
gets its channel and request-slot counts from the overlay, so every DMA operation lowers it the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.domains.firmware.facts.model import DmaController, Target

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder


def zephyr_controller(target: Target, label: str) -> DmaController | None:
    """The DMA controller facts behind devicetree node ``label``."""
    return next((c for c in target.dma if c.name.lower() == label), None)


def zephyr_dma_node(b: ZephyrBuilder, label: str) -> None:
    """Give a request-slot DMA node (``zephyr,dma-emul``) its ``dma-channels`` and ``dma-requests``.

    The emulator's node carries neither, BUILD_ASSERTs on a channel count, and keeps block i of a chain in
    request slot i: the overlay writes the facts' counts (``channels``, ``zephyr_blocks``), and the
    controller's Kconfig facts enable its driver (and 64-bit addresses), as Zephyr's own DMA tests do on
    native_sim.
    """
    controller = zephyr_controller(b.target, label)
    if controller is None:
        return
    b.app.need("dma", *(f"CONFIG_{symbol}" for symbol in controller.zephyr_kconfig))
    if controller.zephyr_request_slots:
        b.app.okay(label, f"dma-channels = <{controller.channels}>;", f"dma-requests = <{controller.zephyr_blocks}>;")


#: Zephyr (and ESP-IDF's async memcpy) take a DMA interrupt's priority from the controller, not per transfer: a
#: realization that cannot honour an operation's ``irq_priority`` lists this (``Realization.unrealized``).
PRIORITY_FROM_CONTROLLER = {
    "irq_priority": "the driver takes the DMA interrupt priority from the controller's devicetree node, not per "
    "transfer"
}
