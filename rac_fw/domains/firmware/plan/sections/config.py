"""The ``config:`` block: Kconfig-level choices of the whole application, typed and checked.

Logging (mode, backends, buffer, default level), the console transport (UART or USB CDC ACM), stack
hardening (compiler canaries, a sentinel, an MPU stack guard, asserts) and user mode. Each field maps
to real Kconfig symbols of Zephyr 4.1 or ESP-IDF v5 (cited at the symbol tables below); the
dependencies and mutually exclusive choices those Kconfig trees declare are checked here, before the
build, with the plan's fields as locations and the admissible changes as relaxations:

* ``E_CONFIG_CONFLICT`` — two choices the Kconfig tree forbids together (a log buffer without deferred
  logging; a stack sentinel with an MPU stack guard or with user mode).
* ``E_CONFIG_UNSUPPORTED`` — a choice the target's facts or the framework cannot realize (an MPU stack
  guard or user mode on a core without an MPU, a USB console on a board without a USB device
  controller, deferred logging on ESP-IDF, compiler canaries without an entropy source).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.facts.query import entropy_source, has_dt_label
from rac_fw.domains.firmware.plan.base import PlanModel
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.spec import SectionSpec

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

LogLevel = Literal["off", "error", "warning", "info", "debug"]

#: Zephyr subsys/logging/Kconfig.processing: ``config LOG_BUFFER_SIZE … range 128 1048576``.
LOG_BUFFER_MIN_BYTES = 128
LOG_BUFFER_MAX_BYTES = 1 << 20


class Logging(PlanModel):
    """How the logging subsystem processes and where it writes messages."""

    mode: Literal["deferred", "immediate", "minimal"] | None = Field(
        default=None,
        description="deferred: messages are buffered and written by the log thread (least impact on callers); "
        "immediate: written in the caller's context; minimal: straight to printk. None = the framework's default.",
    )
    backends: list[Literal["uart"]] = Field(
        default_factory=list, max_length=1, description="Log backends to enable (uart: the console UART)."
    )
    buffer_bytes: int | None = Field(
        default=None,
        ge=LOG_BUFFER_MIN_BYTES,
        le=LOG_BUFFER_MAX_BYTES,
        description="Bytes of the deferred-mode message buffer (deferred mode only).",
    )
    level: LogLevel | None = Field(default=None, description="Default level of modules that set none.")


class Hardening(PlanModel):
    """Run-time checks against stack overflow and broken invariants."""

    stack_canaries: bool = Field(default=False, description="Compiler stack-protector canaries in functions.")
    stack_sentinel: bool = Field(
        default=False, description="A magic word at each stack's limit, checked on every context switch."
    )
    mpu_stack_guard: bool = Field(default=False, description="An MPU region guarding each thread stack's limit.")
    asserts: bool | None = Field(default=None, description="Kernel/SDK asserts on (true) or compiled out (false).")


class Config(PlanModel):
    """Kconfig-level settings of the whole application: logging, console, stack hardening and user mode.

    Lowered to ``prj.conf`` (Zephyr) or ``sdkconfig.defaults`` (ESP-IDF) after the obligations checked
    the Kconfig dependencies and exclusive choices against the target's facts.
    """

    logging: Logging | None = None
    console: Literal["uart", "usb_cdc_acm"] | None = Field(
        default=None,
        description="Console transport: the board's UART, or a USB CDC ACM serial port (needs a USB device "
        "controller on the board). None = the board's console.",
    )
    hardening: Hardening | None = None
    user_mode: bool = Field(default=False, description="Enable user-mode threads (memory protection; needs an MPU).")


# --- facts the block needs -------------------------------------------------------------------------------


def _usb_device(target: Target, framework: str) -> bool:
    """The board has a USB device controller the framework's CDC ACM console can use.

    Zephyr: the board devicetree labels it ``zephyr_udc0`` (the label the cdc-acm-console snippet
    attaches to). ESP-IDF: ``ESP_CONSOLE_USB_CDC`` depends on ``IDF_TARGET_ESP32S2 || IDF_TARGET_ESP32S3``
    (components/esp_system/Kconfig), the chips with the USB-OTG ROM CDC driver.
    """
    if framework == "espidf":
        return target.board.idf_target in IDF_USB_CDC_TARGETS
    return has_dt_label(target, "zephyr_udc0")


#: ESP-IDF chips whose console can be USB CDC (components/esp_system/Kconfig, ESP_CONSOLE_USB_CDC).
IDF_USB_CDC_TARGETS = ("esp32s2", "esp32s3")


# --- obligations --------------------------------------------------------------------------------------

CONFLICT = "E_CONFIG_CONFLICT"
UNSUPPORTED = "E_CONFIG_UNSUPPORTED"


def _path(*parts: str) -> Path:
    return ["config", *parts]


def _off(*parts: str) -> dict[str, Any]:

    return replace(_path(*parts), False)


def _logging(config: Config, target: Target, framework: str) -> list[Evidence]:

    log = config.logging
    if log is None:
        return []
    found: list[Evidence] = []
    if framework == "espidf" and log.mode in ("deferred", "minimal"):
        # ESP-IDF's esp_log writes in the caller's context; it has no deferred or printk-only mode.
        found.append(
            violation(
                UNSUPPORTED,
                f"ESP-IDF logging has no {log.mode} mode (esp_log writes in the caller's context)",
                _path("logging", "mode"),
                ["config.logging.mode", log.mode, framework],
                relaxations=[
                    relax("log immediately", replace(_path("logging", "mode"), "immediate")),
                    relax("keep the framework's logging mode", remove(_path("logging", "mode"))),
                ],
            )
        )
    if log.buffer_bytes is not None and (log.mode not in (None, "deferred") or framework == "espidf"):
        # Kconfig.processing: LOG_BUFFER_SIZE exists only `if LOG_MODE_DEFERRED`.
        fixes = [relax("drop the log buffer size", remove(_path("logging", "buffer_bytes")))]
        if framework != "espidf":
            fixes.insert(0, relax("log in deferred mode", replace(_path("logging", "mode"), "deferred")))
        found.append(
            violation(
                CONFLICT,
                f"a {log.buffer_bytes}-byte log buffer exists only in deferred logging, but "
                + (f"{framework} has none" if framework == "espidf" else f"the mode is {log.mode}"),
                _path("logging", "buffer_bytes"),
                ["config.logging.buffer_bytes", "config.logging.mode"],
                [measure("buffer", log.buffer_bytes, "bytes")],
                fixes,
            )
        )
    if log.backends and log.mode == "minimal":
        # Minimal mode sends every message to printk: subsys/logging/Kconfig sources the backends
        # only `if !LOG_MODE_MINIMAL`.
        found.append(
            violation(
                CONFLICT,
                f"minimal logging writes through printk; it has no {', '.join(log.backends)} backend",
                _path("logging", "backends"),
                ["config.logging.backends", "config.logging.mode"],
                relaxations=[
                    relax("drop the backends", remove(_path("logging", "backends"))),
                    relax("log in deferred mode", replace(_path("logging", "mode"), "deferred")),
                ],
            )
        )
    if log.backends and framework == "espidf":
        found.append(
            violation(
                UNSUPPORTED,
                "ESP-IDF logging writes to the console; it has no selectable backends",
                _path("logging", "backends"),
                ["config.logging.backends", framework],
                relaxations=[relax("drop the backends", remove(_path("logging", "backends")))],
            )
        )
    return found


def _console(config: Config, target: Target, framework: str) -> list[Evidence]:

    if config.console != "usb_cdc_acm" or _usb_device(target, framework):
        return []
    return [
        violation(
            UNSUPPORTED,
            f"{target.board.name} has no USB device controller for a CDC ACM console under {framework}",
            _path("console"),
            ["config.console", target.board.name],
            relaxations=[relax("keep the UART console", replace(_path("console"), "uart"))],
        )
    ]


def _hardening(config: Config, target: Target, framework: str) -> list[Evidence]:

    hard = config.hardening
    found: list[Evidence] = []
    mpu = target.core.mpu and framework == "zephyr"
    if config.user_mode and not mpu:
        found.append(
            violation(
                UNSUPPORTED,
                f"user mode needs an MPU-backed kernel; {target.core.name} under {framework} has none",
                _path("user_mode"),
                ["config.user_mode", target.core.name],
                relaxations=[relax("run every thread in supervisor mode", replace(_path("user_mode"), False))],
            )
        )
    if hard is None:
        return found
    if hard.mpu_stack_guard and not mpu:
        # arch/arm/core/mpu/Kconfig: MPU_STACK_GUARD is inside `if CPU_HAS_MPU … if ARM_MPU`.
        fixes = [relax("drop the MPU stack guard", _off("hardening", "mpu_stack_guard"))]
        if not hard.stack_sentinel and not config.user_mode:
            fixes.append(
                relax(
                    "guard the stacks with a sentinel instead",
                    _off("hardening", "mpu_stack_guard"),
                    replace(_path("hardening", "stack_sentinel"), True),
                )
            )
        found.append(
            violation(
                UNSUPPORTED,
                f"an MPU stack guard needs an MPU; {target.core.name} under {framework} has none",
                _path("hardening", "mpu_stack_guard"),
                ["config.hardening.mpu_stack_guard", target.core.name],
                relaxations=fixes,
            )
        )
    if hard.stack_sentinel and framework == "zephyr":
        # subsys/debug/Kconfig: STACK_SENTINEL depends on !USERSPACE and !MPU_STACK_GUARD.
        for other, present in (("mpu_stack_guard", hard.mpu_stack_guard and mpu), ("user_mode", config.user_mode)):
            if not present:
                continue
            where = ("hardening", other) if other == "mpu_stack_guard" else (other,)
            found.append(
                violation(
                    CONFLICT,
                    f"Zephyr's stack sentinel excludes {other.replace('_', ' ')} (STACK_SENTINEL depends on "
                    f"!{'MPU_STACK_GUARD' if other == 'mpu_stack_guard' else 'USERSPACE'})",
                    _path("hardening", "stack_sentinel"),
                    ["config.hardening.stack_sentinel", f"config.{'.'.join(where)}"],
                    relaxations=[
                        relax("drop the stack sentinel", _off("hardening", "stack_sentinel")),
                        relax(f"drop {other.replace('_', ' ')}", _off(*where)),
                    ],
                )
            )
    if hard.stack_canaries and framework == "zephyr" and entropy_source(target) is None:
        found.append(
            violation(
                UNSUPPORTED,
                f"Zephyr stack canaries need an entropy generator; {target.board.name} has no entropy source "
                "(STACK_CANARIES depends on ENTROPY_GENERATOR)",
                _path("hardening", "stack_canaries"),
                ["config.hardening.stack_canaries", target.board.name],
                relaxations=[relax("drop the stack canaries", _off("hardening", "stack_canaries"))],
            )
        )
    return found


def check(plan: Plan, target: Target, framework: str, config: Config) -> list[Evidence]:
    """Every Kconfig dependency and exclusive choice of the block, against the target's facts."""
    return (
        _logging(config, target, framework)
        + _console(config, target, framework)
        + _hardening(config, target, framework)
    )


# --- realizations -----------------------------------------------------------------------------------

#: Zephyr 4.1 symbols. Logging: subsys/logging/Kconfig.mode (choice LOG_MODE), Kconfig.processing
#: (LOG_BUFFER_SIZE), Kconfig.filtering (LOG_DEFAULT_LEVEL 0-4), backends/Kconfig.uart (LOG_BACKEND_UART).
ZEPHYR_LOG_MODE = {"deferred": "CONFIG_LOG_MODE_DEFERRED", "immediate": "CONFIG_LOG_MODE_IMMEDIATE",
                   "minimal": "CONFIG_LOG_MODE_MINIMAL"}  # fmt: skip
ZEPHYR_LOG_LEVEL = {"off": 0, "error": 1, "warning": 2, "info": 3, "debug": 4}
ZEPHYR_LOG_BACKEND = {"uart": "CONFIG_LOG_BACKEND_UART"}
#: snippets/cdc-acm-console (Zephyr 4.1, legacy device stack): USB_DEVICE_STACK, USB_DEVICE_INITIALIZE_AT_BOOT,
#: SERIAL, CONSOLE, UART_CONSOLE, UART_LINE_CTRL; a ``zephyr,cdc-acm-uart`` child of ``zephyr_udc0`` is the
#: chosen console.
ZEPHYR_USB_CONSOLE = ("CONFIG_USB_DEVICE_STACK", "CONFIG_USB_DEVICE_INITIALIZE_AT_BOOT", "CONFIG_SERIAL",
                      "CONFIG_CONSOLE", "CONFIG_UART_CONSOLE", "CONFIG_UART_LINE_CTRL")  # fmt: skip
#: The overlay label of the CDC ACM UART node this block adds.
CDC_ACM_LABEL = "rac_cdc_acm_uart"

#: ESP-IDF v5 symbols. components/log/Kconfig (choice LOG_DEFAULT_LEVEL), the root Kconfig's compiler
#: options (choice COMPILER_STACK_CHECK_MODE, choice COMPILER_OPTIMIZATION_ASSERTION_LEVEL), components/
#: freertos/Kconfig (choice FREERTOS_CHECK_STACKOVERFLOW: CANARY = a pattern at the stack's end checked on
#: every switch, FreeRTOS's sentinel), components/esp_system/Kconfig (choice ESP_CONSOLE_UART).
IDF_LOG_LEVEL = {"off": "NONE", "error": "ERROR", "warning": "WARN", "info": "INFO", "debug": "DEBUG"}


def _zephyr(b: ZephyrBuilder, config: Config) -> None:
    family = "config"
    log = config.logging
    if log is not None:
        b.app.need("log")
        if log.mode is not None:
            b.app.need(family, ZEPHYR_LOG_MODE[log.mode])
        for backend in log.backends:
            b.app.need(family, ZEPHYR_LOG_BACKEND[backend])
        if log.buffer_bytes is not None:
            b.app.setting(family, "CONFIG_LOG_BUFFER_SIZE", str(log.buffer_bytes))
        if log.level is not None:
            b.app.setting(family, "CONFIG_LOG_DEFAULT_LEVEL", str(ZEPHYR_LOG_LEVEL[log.level]))
    if config.console == "usb_cdc_acm":
        b.app.need(family, *ZEPHYR_USB_CONSOLE)
        b.app.okay(
            "zephyr_udc0",
            f'{CDC_ACM_LABEL}: {CDC_ACM_LABEL} {{\n\tcompatible = "zephyr,cdc-acm-uart";\n}};',
        )
        # A path reference: the overlay's root node is the apps worker's template; ``&{/chosen}`` amends it.
        b.app.label_blocks["{/chosen}"] = [f"zephyr,console = &{CDC_ACM_LABEL};"]
    hard = config.hardening
    if hard is not None:
        if hard.stack_canaries:
            b.app.need(family, "CONFIG_ENTROPY_GENERATOR", "CONFIG_STACK_CANARIES")
        if hard.stack_sentinel:
            b.app.need(family, "CONFIG_STACK_SENTINEL")
        if hard.mpu_stack_guard:
            b.app.need(family, "CONFIG_ARM_MPU", "CONFIG_MPU_STACK_GUARD")
        if hard.asserts is not None:
            b.app.setting(family, "CONFIG_ASSERT", "y" if hard.asserts else "n")
    if config.user_mode:
        b.app.need(family, "CONFIG_USERSPACE")


def _choose(b: EspIdfBuild, chosen: str, *others: str) -> None:
    """Select one member of a Kconfig choice and switch the lowering's default member off."""
    for other in others:
        if other != chosen:
            b.sdkconfig[other] = "n"
    b.sdkconfig[chosen] = "y"


def _espidf(b: EspIdfBuild, config: Config) -> None:
    log = config.logging
    if log is not None and log.level is not None:
        levels = [f"CONFIG_LOG_DEFAULT_LEVEL_{v}" for v in IDF_LOG_LEVEL.values()]
        _choose(b, f"CONFIG_LOG_DEFAULT_LEVEL_{IDF_LOG_LEVEL[log.level]}", *levels)
    if config.console == "usb_cdc_acm":
        _choose(b, "CONFIG_ESP_CONSOLE_USB_CDC", "CONFIG_ESP_CONSOLE_UART_DEFAULT")
    hard = config.hardening
    if hard is None:
        return
    if hard.stack_canaries:
        _choose(b, "CONFIG_COMPILER_STACK_CHECK_MODE_NORM", "CONFIG_COMPILER_STACK_CHECK_MODE_NONE")
    if hard.stack_sentinel:
        _choose(b, "CONFIG_FREERTOS_CHECK_STACKOVERFLOW_CANARY", "CONFIG_FREERTOS_CHECK_STACKOVERFLOW_NONE")
    if hard.asserts is not None:
        enable, disable = (f"CONFIG_COMPILER_OPTIMIZATION_ASSERTIONS_{m}" for m in ("ENABLE", "DISABLE"))
        _choose(b, enable if hard.asserts else disable, enable, disable)


REALIZERS: dict[str, Callable[[Any, Config], None]] = {"zephyr": _zephyr, "espidf": _espidf}

SECTION = SectionSpec(
    name="config",
    model=Config,
    family="config",
    realizations=REALIZERS,
    checks=(check,),
    codes=(CONFLICT, UNSUPPORTED),
)
