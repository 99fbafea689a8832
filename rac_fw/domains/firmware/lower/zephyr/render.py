"""Collect every operation's contribution, then render CMakeLists.txt, prj.conf, the overlay and main.c.

main() runs each ``<id>_setup()`` in plan order (readiness and every return value checked), then the
one-shot ``<id>_step()`` calls, then one loop calling each periodic step on a tick that is the greatest
common divisor of the periods. Work owned by a plan thread runs in that thread's ``K_THREAD_DEFINE``.
With a behaviour, main() reports the operations in plan order and runs it instead of the loop
(``lower/zephyr/behaviour.py``, ``templates/zephyr/main_behaviour.c.j2``).
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from rac_fw.contract import Receipt
from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.facts.sdk import release
from rac_fw.domains.firmware.lower import Lowered, with_contributed
from rac_fw.domains.firmware.lower.zephyr.behaviour import BehaviourHost, tabs
from rac_fw.domains.firmware.lower.zephyr.core import family
from rac_fw.domains.firmware.lower.zephyr.model import C_PREFIX, HEADER_KCONFIG, Step, unsupported
from rac_fw.domains.firmware.lower.zephyr.views import OperationViews
from rac_fw.domains.firmware.ops.log.log import Log
from rac_fw.domains.firmware.plan.cstring import c_string_literal
from rac_fw.domains.firmware.plan.registry import spec
from rac_fw.domains.firmware.plan.spec import Flag
from rac_fw.resources import data_dir


class Builder(OperationViews, BehaviourHost):
    """Lowers one plan for one target into the files of a Zephyr application."""

    def lower_op(self, index: int, op: Any) -> None:
        """Render operation ``index`` through its family macro and record its setup, step and threads."""
        template = family(op.op)
        self.current = index
        realization = spec(op.op).realization("zephyr")
        if realization is None or realization.view is None:
            raise LookupError(f"{op.op} has no Zephyr view in its op spec")
        before = set(self.app.includes)
        view = realization.view(self, index, op)
        self.name_view(view, index)
        view["op"] = op
        view.setdefault("behaviour", self.behaviour_uses(index))
        self.app.need(template, *(s for h in sorted(self.app.includes - before) for s in HEADER_KCONFIG.get(h, ())))
        render = self.macro(template, op.op)
        if render is None:
            raise LookupError(f"templates/zephyr/{template}.c.j2 has no macro {op.op}")
        text = render(view).strip("\n")
        if text:
            (self.app.early_globals if spec(op.op).has(Flag.HANDOFF) else self.app.globals).append(text)
        if view.get("setup"):
            self.app.setups.append({"id": view["id"], "tag": view["tag"]})
        step = view.get("step")
        if step is not None:
            if step["period_ms"] is None:
                self.app.once.append({"id": view["id"], "tag": view["tag"]})
            else:
                self.app.steps.append(Step(view["id"], view["tag"], step["period_ms"], step.get("count")))
        else:
            self.app.after_setup.append({"id": view["id"], "tag": view["tag"]})
        self.app.labels[index] = view["id"].removeprefix(C_PREFIX)
        self.views[index] = view
        for thread, part in view.get("thread_parts", []):
            self.app.threads.setdefault(thread, []).append(part)
        self.app.realized.append(f"operations[{index}] {op.op} as {view['id']}")

    def render(self) -> Lowered:
        """The application's files (skeleton + generated) and the receipt of what was realized."""
        app = self.app
        threads = self.thread_views()
        header = {
            "version": self.sdk.version,
            "target": self.target.id,
            "board": self.board,
        }
        main = self.env.get_template("main.c.j2").render(
            header=header,
            includes=self.sdk.include_order(app.includes),
            log=any(isinstance(op, Log) for op in self.plan.operations),
            locks=[{"name": k, "pi": v} for k, v in app.locks.items()],
            early_globals=app.early_globals,
            globals=app.globals,
            threads=threads,
            setups=app.setups,
            once=app.once,
            after_setup=app.after_setup,
            operations=len(self.plan.operations),
            boot=c_string_literal(self.target.id),
            loop=self.loop_view(),
            behaviour=tabs(self.behaviour) if self.behaviour else None,
            reports=self.report_views(app.once, app.steps) if self.behaviour else [],
        )
        prj = self.skeleton("prj.conf")
        prj += self.env.get_template("prj.conf.j2").render(
            kconfig=self.kconfig_view(),
            main_stack=self.plan.stack_bytes,
            heap=max(self.plan.heap_bytes, app.heap_floor),
        )
        gaps = sorted(set(range(max(app.io_channels, default=-1) + 1)) - set(app.io_channels))
        if gaps:
            raise unsupported(
                "operations",
                f"/zephyr,user io-channels would have no entry at index {gaps[0]}: channel_index values "
                "must be 0, 1, 2 … without gaps",
                [str(g) for g in gaps],
                [],
            )
        overlay = self.env.get_template("overlay.j2").render(
            header=header,
            user_props=sorted(app.user_props.items()),
            io_channels=[app.io_channels[k].split("|", 1)[1] for k in sorted(app.io_channels)],
            label_blocks=sorted(self.label_blocks().items()),
            dt_bindings=self.dt_binding_includes(),
        )
        readme = self.env.get_template("README.md.j2").render(
            header=header,
            operations=app.realized,
            kconfig=self.kconfig_view(),
        )
        board_file = self.board.replace("/", "_")
        files = with_contributed({
            "CMakeLists.txt": self.skeleton("CMakeLists.txt"),
            "prj.conf": prj,
            f"boards/{board_file}.overlay": overlay,
            "src/main.c": main,
            "README.md": readme,
            "sample.yaml": self.sample_yaml([self.board]),
        }, app.files)  # fmt: skip
        receipt = Receipt(
            realized=app.realized,
            claims_success=True,
            notes=[
                self.sdk.label,
                f"board {self.board}",
            ],
        )
        user = usercode.placement("src")
        return Lowered(framework="zephyr", target=self.target.id, files=files, receipt=receipt, user_files=user)

    def skeleton(self, name: str) -> str:
        """A file of ``zephyr_app/``, which names the default release; the app's own release is written instead."""
        default = release(None, "zephyr")
        text = (data_dir("zephyr_app") / name).read_text(encoding="utf-8")
        return text.replace(default.label, self.sdk.label) if default is not None else text

    def label_blocks(self) -> dict[str, list[str]]:
        """The overlay's ``&label { … }`` blocks, with the properties the board's devicetree lacks on this
        release added to the nodes the app touches (``SdkRelease.board_properties``)."""
        lacking = self.sdk.board_properties.get(self.board, {})
        blocks: dict[str, list[str]] = {}
        for label, lines in self.app.label_blocks.items():
            every = [*lines, *(p for p in lacking.get(label, ()) if p not in lines)]
            # Properties precede subnodes in a node (dtc: "Properties must precede subnodes"), whichever
            # operation added them first; each keeps its order.
            blocks[label] = [line for line in every if "{" not in line] + [line for line in every if "{" in line]
        return blocks

    def dt_binding_includes(self) -> list[str]:
        text = "\n".join("\n".join(v) for v in self.app.label_blocks.values())
        includes = []
        if "ADC_ACQ_TIME" in text:
            includes.append("zephyr/dt-bindings/adc/adc.h")
        if "NRF_SAADC_" in text:
            includes.append("zephyr/dt-bindings/adc/nrf-saadc.h")
        if "STM32_DMA_" in text:
            includes.append("zephyr/dt-bindings/dma/stm32_dma.h")
        if self.app.user_props:
            includes.append("zephyr/dt-bindings/gpio/gpio.h")
        return [self.sdk.header(h) for h in includes]

    def kconfig_view(self) -> list[dict[str, str]]:
        # What a symbol needs beside it on this release (SdkRelease.kconfig_implies) and with this board's
        # driver for it (Board.zephyr_driver_needs), asked by the family that set it.
        needs = {**self.sdk.kconfig_implies, **self.target.board.zephyr_driver_needs}
        for symbol, asked_by in list(self.app.kconfig.items()):
            for implied in needs.get(symbol.removeprefix("CONFIG_"), ()):
                self.app.kconfig.setdefault(f"CONFIG_{implied}", asked_by)
        flags = {s: f for s, f in self.app.kconfig.items() if s not in self.app.settings}
        out = [{"symbol": s, "value": "y", "family": f} for s, f in flags.items()]
        out += [{"symbol": s, "value": v, "family": f} for s, (f, v) in self.app.settings.items()]
        return sorted(out, key=lambda x: (x["family"], x["symbol"]))

    def sample_yaml(self, boards: list[str]) -> str:
        """A twister test suite for the app: the boards it was validated for (``boards``: its own first,
        then every other board the same tree builds for, see ``lower.zephyr.portable_boards``) and a console
        harness whose regexes are the ``rac:`` lines main() prints (boot, one ``ok`` per operation, done).

        The keys follow twister's test-suite schema (zephyr ``scripts/schemas/twister/testsuite-schema.yaml``:
        ``sample.name``, ``common.harness``/``harness_config`` with ``type``, ``ordered``, ``regex``, and
        ``tests.<name>.platform_allow``/``integration_platforms``). The ``ok`` lines of periodic operations
        come at their first success, so only boot-first and done-last are ordered by construction; a plan with
        a behaviour whose console is predicted exactly (``trace.exact_lines``) is held to those lines, ordered.
        """
        labels = [self.app.labels[i] for i in sorted(self.app.labels)]
        regex = ["^rac: boot\\b", *(f"^rac: {re.escape(label)} ok\\b" for label in labels), "^rac: done$"]
        predicted = self.predicted_lines()
        if predicted is not None:  # a behaviour whose console is predicted line for line: in that order
            regex = predicted
        document = {
            "sample": {"name": f"rac-fw {self.target.id}", "description": "Generated by rac-fw from a plan"},
            "common": {
                "tags": "rac-fw",
                "timeout": 60,
                "harness": "console",
                "harness_config": {"type": "multi_line", "ordered": predicted is not None, "regex": regex},
            },
            "tests": {
                f"rac_fw.{self.target.id}": {
                    "platform_allow": " ".join(boards),
                    "integration_platforms": boards,
                }
            },
        }
        return yaml.safe_dump(document, sort_keys=False, width=1000)

    def loop_view(self) -> dict[str, Any]:
        steps = self.app.steps
        if not steps:
            return {"steps": [], "tick_ms": 0, "finite": False}
        tick = math.gcd(*(s.period_ms for s in steps))
        return {
            "steps": [
                {
                    "id": s.id,
                    "tag": s.tag,
                    "count": s.count,
                    "cond": " && ".join(
                        ([f"(tick % {s.period_ms // tick}U) == 0U"] if s.period_ms != tick else [])
                        + ([f"{s.id}_left > 0U"] if s.count is not None else [])
                    ),
                }
                for s in steps
            ],
            "tick_ms": tick,
            "use_tick": any(s.period_ms != tick for s in steps) or any(s.count for s in steps),
            "finite": all(s.count is not None for s in steps),
        }

    def thread_views(self) -> list[dict[str, Any]]:
        views = []
        for name, parts in self.app.threads.items():
            thread = self.plan.thread(name)
            if thread is None:
                raise unsupported("resources.threads", f"thread {name!r} is not declared", [name], [])
            feeders = [p for p in parts if p.feeds_watchdog]
            if feeders and len(parts) > 1:
                others = ", ".join(p.op_id for p in parts if not p.feeds_watchdog)
                raise unsupported(
                    f"resources.threads.{name}",
                    f"thread {name} feeds the watchdog and also runs {others}, whose waits would delay the feed",
                    [name],
                    [],
                )
            views.append(
                {
                    "name": name,
                    "cname": C_PREFIX + name,
                    "priority": thread.priority,
                    "stack": thread.stack_bytes,
                    "parts": parts,
                }
            )
        return views
