"""Firmware source-writing controls: the model writes the C itself, with one of three SDK contexts.

The three interfaces differ *only* in the SDK context in the prompt, all built from the catalogs the
verifier harvests from the real headers (``verify/sdk/<framework>/api*.json``) and the verifier's own
rules (``rules.yaml``), restricted to the headers chosen from the task *statement* (the APIs it names,
the framework's base headers, and retrieval over the catalog by the requirement's words:
:mod:`.sdk_context`) — never from the reference solution, which would hand the baseline the answer:

* **RawSDK** — each relevant header as an excerpt: every declaration it holds, each with a comment
  block stating, in full sentences, what the rules know about it (fallible, blocking, not in ISRs,
  call order, the Kconfig symbol it needs). The catalogs hold names and signatures only — SDK prose is
  not copied into this project — so the rules' clauses stand in for the header documentation;
* **SignaturesOnly** — the same declarations, nothing else;
* **SourceLite** — the same declarations plus compact clause tags (``[fallible] [not-in-isr]``).

The model submits a file tree with ``write_sources``; it is judged by the same function as
``rac-fw verify --task`` (:func:`rac_fw.domains.firmware.tasks.judge.judge_sources`).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rac_fw.contract import Feedback, Status, sha256_of
from rac_fw.eval.clients import ToolSpec
from rac_fw.eval.interfaces import EpisodeState, Interface, Judged, ScriptedAction, register_interface

TOOL = "write_sources"
MAX_FILES = 64
MAX_FILE_CHARS = 200_000

SYSTEM = (
    "You write the complete firmware application for one task yourself, as a file tree, and submit it with "
    "`write_sources` ({{\"files\": {{path: text}}}}). Framework: {framework}. {layout} Use only the SDK API "
    "given below. An independent verifier parses the C, checks every SDK call against the real headers, "
    "call order, ISR safety, cache maintenance around DMA, checked return values and the configuration, "
    "plus the task's own checks; fix the sources from its evidence and resubmit."
)

LAYOUT = {
    "zephyr": "A Zephyr 4.x app: CMakeLists.txt, prj.conf, src/main.c, and boards/<board>.overlay if needed.",
    "espidf": "An ESP-IDF v5 project: CMakeLists.txt, main/CMakeLists.txt, main/main.c, sdkconfig.defaults.",
    "hal": "An STM32Cube HAL project: Core/Src/main.c, Core/Inc/main.h, Core/Inc/stm32*_hal_conf.h, IRQ handlers.",
}


def _clauses(framework: str, name: str, header: str) -> list[tuple[str, str]]:
    """(tag, sentence) pairs the verifier's rules state about ``name``."""
    from rac_fw.domains.firmware.verify.sdk import rules

    judged = rules(framework)
    out: list[tuple[str, str]] = []
    if name in judged.fallible_include:
        out.append(("fallible", "Returns an error code on failure: test the result."))
    if name in judged.null_on_failure:
        out.append(("null-on-failure", "Returns NULL on failure: test the pointer."))
    if name in judged.blocking:
        out.append(("blocking", "May block or sleep: never call it from an interrupt handler or callback."))
    if name in judged.logs:
        out.append(("logs", "Logs or prints: not from interrupt context."))
    if name in judged.allocates:
        out.append(("allocates", "Allocates or frees memory: not from interrupt context."))
    for rule in judged.order:
        if name in rule.then:
            out.append(("after:" + "|".join(rule.first_names),
                        f"Call one of {', '.join(rule.first_names)} on the same object first."))
    kconfig = judged.section("kconfig")
    symbols = [*(kconfig.get("by_header") or {}).get(header, []), *(kconfig.get("by_function") or {}).get(name, [])]
    if symbols:
        out.append(("kconfig:" + ",".join(symbols), f"Needs {', '.join(f'CONFIG_{s}=y' for s in symbols)}."))
    return out


def _reference_files(task_id: str) -> dict[str, str]:
    """The reference plan's lowering: what the scripted oracle submits (never shown to the model)."""
    from rac_fw.domains.firmware.tasks import get_task, reference_lowering

    task = get_task(task_id)
    if task is None:
        raise LookupError(f"{task_id!r} is not a firmware suite task")
    return dict(reference_lowering(task).files)


def relevant_headers(task_id: str) -> dict[str, list[str]]:
    """Header → the catalog names it declares, for the headers the task statement selects."""
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.tasks import get_task
    from rac_fw.domains.firmware.verify.static.context import framework_catalog
    from rac_fw.eval.interfaces.sdk_context import select_headers

    task = get_task(task_id)
    assert task is not None
    target = load_target(task.target)
    return select_headers(task.requirement, task.framework, target, framework_catalog(task.framework, {}, target))


def sdk_context(task_id: str, style: str) -> str:
    """The SDK context of one style (``raw``, ``signatures``, ``lite``) for a task."""
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.tasks import get_task
    from rac_fw.domains.firmware.verify.static.context import framework_catalog

    task = get_task(task_id)
    assert task is not None
    catalog = framework_catalog(task.framework, {}, load_target(task.target))
    lines = [f"/* SDK: {catalog.label} {catalog.version} */"]
    for header, names in relevant_headers(task_id).items():
        lines.append(f"\n#include <{header}>" if style == "raw" else f"\n/* {header} */")
        for name in names:
            entry = catalog.get(name)
            if entry is None:
                continue
            decl = (f"{entry.signature};" if entry.kind == "function"
                    else f"#define {entry.name}({', '.join(entry.params)})")
            clauses = _clauses(task.framework, name, header) if style != "signatures" else []
            if style == "raw":
                notes = [s for _, s in clauses] + (["Deprecated."] if entry.deprecated else [])
                if notes:
                    lines.append("/**\n" + "".join(f" * {n}\n" for n in notes) + " */")
                lines.append(decl)
            elif style == "lite" and clauses:
                lines.append(f"{decl} /* {' '.join(f'[{t}]' for t, _ in clauses)} */")
            else:
                lines.append(decl)
    return "\n".join(lines)


class SourceState(EpisodeState):
    def __init__(self, task_id: str):
        self.task_id, self.turn = task_id, 0

    def judge(self, tool: str, arguments: dict[str, Any]) -> Judged:
        from rac_fw.contract import Evidence
        from rac_fw.domains.firmware.facts.load import load_target
        from rac_fw.domains.firmware.tasks import get_task
        from rac_fw.domains.firmware.tasks.judge import judge_sources

        self.turn += 1
        task = get_task(self.task_id)
        assert task is not None
        files = arguments.get("files")
        problem = None
        if not isinstance(files, dict) or not files:
            problem = "`files` must be a non-empty object of path → text"
        elif len(files) > MAX_FILES or any(not isinstance(v, str) or len(v) > MAX_FILE_CHARS for v in files.values()):
            problem = f"at most {MAX_FILES} files of at most {MAX_FILE_CHARS} characters of text each"
        elif any(not isinstance(k, str) or k.startswith("/") or ".." in k.split("/") for k in files):
            problem = "paths are relative to the project root and may not leave it"
        if problem is not None:
            return Judged(Feedback(domain="firmware", task=self.task_id, turn=self.turn, status=Status.INVALID,
                                   evidence=[Evidence(code="E_SOURCES", message=problem, location="files")]))
        assert isinstance(files, dict)
        judged = judge_sources(files, task.framework, load_target(task.target), task)
        result = judged.verification
        status = Status.PASS if result.ok else Status.FAIL
        return Judged(Feedback(domain="firmware", task=self.task_id, turn=self.turn, status=status,
                               verdicts=result.verdicts, evidence=result.evidence, artifact_hash=sha256_of(files)),
                      unknown=bool(judged.unknown))


class SourceInterface(Interface):
    domain: ClassVar[str] = "firmware"
    style: ClassVar[str]

    def tasks(self) -> list[str]:
        """Expressible tasks on an SDK framework. Bare-metal cells are left out: there is no SDK to give as
        context, and their trees carry a device header generated from the SVD (over 256 K characters on the
        H743) that no model is expected to write."""
        from rac_fw.domains.firmware.tasks import expressible

        return [t.id for t in expressible() if t.framework != "baremetal"]

    def labels(self, task: str) -> dict[str, str]:
        from rac_fw.domains.firmware.tasks import get_task

        t = get_task(task)
        return {"family": t.family, "target": f"{t.target}/{t.framework}"} if t else super().labels(task)

    def tools(self, task: str) -> list[ToolSpec]:
        return [ToolSpec(TOOL, "Submit the complete source tree (relative path → file text).", {
            "type": "object", "required": ["files"], "additionalProperties": False,
            "properties": {"files": {"type": "object", "additionalProperties": {"type": "string"}}}})]

    def prompt(self, task: str) -> tuple[str, str]:
        from rac_fw.domain import load_domain
        from rac_fw.domains.firmware.tasks import get_task

        t = get_task(task)
        assert t is not None
        obs = load_domain("firmware").observe(task)
        system = SYSTEM.format(framework=t.framework, layout=LAYOUT[t.framework])
        user = (f"task: {task}\nRequirement: {t.requirement}\nTarget facts: "
                f"{json.dumps(obs.data, separators=(',', ':'))}\n\nSDK context:\n{sdk_context(task, self.style)}")
        return system, user

    def start(self, task: str, seed: int, budget: int) -> EpisodeState:
        return SourceState(task)

    def reference(self, task: str) -> ScriptedAction:
        """The reference plan's lowering, submitted as hand-written sources."""
        return ScriptedAction(TOOL, {"files": _reference_files(task)})

    def flawed(self, task: str) -> ScriptedAction:
        """The reference sources plus a call to an API no SDK declares (the classic hallucination)."""
        files = dict(_reference_files(task))
        main = next(p for p in sorted(files) if p.endswith(".c"))
        files[main] += "\nvoid app_probe(void)\n{\n\tsys_probe_hardware_ready(1);\n}\n"
        return ScriptedAction(TOOL, {"files": files})


@register_interface
class RawSdk(SourceInterface):
    name = "rawsdk"
    style = "raw"
    description = "hand-written C with header excerpts and their documentation clauses"


@register_interface
class SignaturesOnly(SourceInterface):
    name = "signatures"
    style = "signatures"
    description = "hand-written C with SDK declarations only"


@register_interface
class SourceLite(SourceInterface):
    name = "sourcelite"
    style = "lite"
    description = "hand-written C with declarations plus compact documentation clauses"
