"""``rac-fw verify PATH --target T --framework F [--task ID] [--json]``: the independent verifier alone.

Judges any source tree or single file — a user's hand-written app, a model's output, a generated
artifact — with the same predicates ``rac-fw plan`` applies to its own lowering, plus a suite task's
checks Φ when ``--task`` is given (and, for bare-metal trees, compiling and the QEMU console where the
tools are present). Exit codes as ``plan``: 0 clean, 1 verified failure with evidence, 2 invalid input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rac_fw.console.output import EXIT_INVALID, emit_feedback, exit_code_for
from rac_fw.contract import Evidence, Feedback, Status, sha256_of

#: Files the verifier reads from a tree (sources, Kconfig fragments, devicetree overlays, build files).
_SUFFIXES = (".c", ".h", ".cpp", ".conf", ".overlay", ".dts", ".dtsi", ".defaults", ".txt", ".json", ".ld",
             ".yaml", ".yml", ".cmake", ".s", ".S")
#: Directories never read (build outputs, VCS metadata).
_SKIP = {"build", ".git", ".pio", "__pycache__"}
MAX_FILE_BYTES = 1 << 20
MAX_FILES = 2000


def read_tree(path: Path) -> dict[str, str]:
    """Artifact-relative path → text for a directory (or ``{name: text}`` for one file); located errors."""
    if path.is_file():
        candidates = [(path.name, path)]
    elif path.is_dir():
        candidates = sorted(
            (p.relative_to(path).as_posix(), p) for p in path.rglob("*")
            if p.is_file() and p.name.endswith(_SUFFIXES) and not (set(p.relative_to(path).parts[:-1]) & _SKIP))
    else:
        raise ValueError(f"{path} does not exist")
    if len(candidates) > MAX_FILES:
        raise ValueError(f"{path} holds {len(candidates)} source files; the verifier reads at most {MAX_FILES}")
    files = {}
    for rel, file in candidates:
        if file.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"{file} is larger than {MAX_FILE_BYTES} bytes")
        try:
            files[rel] = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{file} is not UTF-8 text (byte {exc.start})") from None
    return files


def verify(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A source tree or a single C file.")],
    target: Annotated[str, typer.Option("--target", "-t", help="Target id (rac-fw targets list).")],
    framework: Annotated[str, typer.Option("--framework", "-f", help="zephyr, espidf, hal or baremetal.")],
    task: Annotated[str | None, typer.Option("--task", help="A firmware suite task: add its checks Φ.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output (a feedback message).")] = False,
) -> None:
    """Judge sources with the independent verifier (and a task's checks). Exit 0 clean, 1 fail, 2 invalid."""
    from rac_fw.domains.firmware.facts.load import UnknownTarget, load_target
    from rac_fw.domains.firmware.tasks import get_task
    from rac_fw.domains.firmware.tasks.judge import judge_sources
    from rac_fw.domains.firmware.verify.sdk import FRAMEWORKS

    def invalid(evidence: list[Evidence]) -> None:
        emit_feedback(Feedback(domain="firmware", task=task or target, status=Status.INVALID, evidence=evidence),
                      as_json)
        raise typer.Exit(EXIT_INVALID)

    problems = []
    if framework not in FRAMEWORKS:
        problems.append(Evidence(code="E_USAGE", location="--framework", objects=[framework],
                                 message=f"unknown framework {framework!r}; choose one of {', '.join(FRAMEWORKS)}"))
    try:
        facts = load_target(target)
    except UnknownTarget as exc:
        problems.append(Evidence(code="E_UNKNOWN_TARGET", message=str(exc), location="--target", objects=[target]))
    suite_task = get_task(task) if task is not None else None
    if task is not None and suite_task is None:
        problems.append(Evidence(code="E_UNKNOWN_TASK", location="--task", objects=[task],
                                 message=f"no firmware suite task {task!r} (rac-fw tasks firmware)"))
    if suite_task is not None and (suite_task.target, suite_task.framework) != (target, framework):
        problems.append(Evidence(
            code="E_TASK_MISMATCH", location="--task", objects=[suite_task.id],
            message=f"task {suite_task.id} is posed for {suite_task.target}/{suite_task.framework}, "
            f"not {target}/{framework}"))
    if problems:
        invalid(problems)
    try:
        files = read_tree(path)
    except (OSError, ValueError) as exc:
        invalid([Evidence(code="E_FILE", message=str(exc), location=str(path))])
    judged = judge_sources(files, framework, facts, suite_task)
    result = judged.verification
    for why in judged.unknown:
        result.evidence.append(Evidence(code="E_UNDECIDED", message=f"not decided on this machine: {why}"))
    status = Status.PASS if result.ok and not judged.unknown else Status.FAIL
    feedback = Feedback(domain="firmware", task=task or target, status=status, verdicts=result.verdicts,
                        evidence=result.evidence, artifact_hash=sha256_of(files))
    emit_feedback(feedback, as_json)
    raise typer.Exit(exit_code_for(feedback))


