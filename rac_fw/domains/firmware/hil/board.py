"""Run an image on one bench board: target match → (open console) → flash → judge the console.

With a probe flasher the console is opened *before* flashing, so the first lines after the post-flash
reset are not lost (esptool needs the port itself: there the port is opened after the flash and the
chip reset through RTS). When the device re-enumerates during the flash the port is reopened within
the board's ``port_wait``.
A board whose port is missing fails before anything is flashed: there would be nothing to judge.
A QEMU "board" hands the same request to the ``qemu`` runner, so the emulator and real boards share
the request shape, the expectation engine and the evidence.
"""

from __future__ import annotations

import time
from pathlib import Path

from rac_fw.contract import Evidence, Relaxation, Status
from rac_fw.domains.firmware.backends import (
    Backend,
    BackendError,
    Capability,
    FlashRequest,
    FlashResult,
    Requirement,
    RunRequest,
    RunResult,
    build_artifact,
    get_backend,
    read_manifest,
    select_runner,
)
from rac_fw.domains.firmware.backends.serial import PortError, SerialRunner, judge_console
from rac_fw.domains.firmware.hil.bench import BenchBoard, BenchError
from rac_fw.domains.firmware.hil.consent import Consent, Grant, grant
from rac_fw.domains.firmware.lower import MANIFEST_NAME


def serial_backend() -> SerialRunner:
    """The registered ``serial`` backend, through which every board console port is reached."""
    backend = get_backend("serial")
    assert isinstance(backend, SerialRunner)
    return backend


def target_mismatch(board: BenchBoard, target: str) -> Evidence:
    return Evidence(
        code="E_TARGET_MISMATCH",
        message=f"board {board.id!r} carries a {board.target} but the image is for {target}; refusing to flash",
        objects=[board.id, board.target, target],
    )


def board_runner(board_id: str, consent: Consent) -> BoardRunner:
    """The runner bound to bench board ``board_id``, through the consent gate (``BenchError`` when refused:
    then nothing was opened, enumerated or flashed)."""
    return BoardRunner(grant(board_id, consent))


def runner_for(spec: str, consent: Consent) -> Backend:
    """Resolve ``--run``: ``board:ID`` is the runner bound to that entry of ``consent``'s bench file,
    through the gate; anything else is a registered runner (``qemu`` …) that touches no board — a
    hardware backend (``serial``) is refused by name, since only a bench entry says which port is a board's.
    The bench layer resolves boards so the tool registry need not know it."""
    if spec.startswith("board:"):
        return board_runner(spec.removeprefix("board:"), consent)
    backend = select_runner(spec)
    if backend.hardware:
        raise BenchError([Evidence(
            code="E_CONSENT", location="runner", objects=[spec],
            message=f"the {spec} runner reaches a board directly; a board is run as board:ID, an entry of the bench "
            "file, through the operator's consent",
            relaxations=[Relaxation(description="run on `qemu`, or on a bench board with `board:ID`")])])
    return backend


class BoardRunner(Backend):
    """A runner bound to one bench entry the consent gate let through (not registered: it needs the grant)."""

    name = "board"
    capabilities = frozenset({Capability.FLASH, Capability.RUN})
    description = "a bench board: flash with its runner, judge its serial console"

    def __init__(self, granted: Grant):
        self.board = granted.board
        self.bench_dir = granted.bench_dir

    def requirements(self) -> list[Requirement]:
        needed = get_backend(self.board.runner).requirements()
        if self.board.runner != "qemu":
            needed += get_backend("serial").requirements()
        return needed

    def flash(self, request: FlashRequest) -> FlashResult:
        board = self.board
        if request.target != board.target:
            return FlashResult(backend=self.name, ok=False, evidence=[target_mismatch(board, request.target)])
        if board.runner == "qemu":
            return FlashResult(
                backend=self.name,
                ok=False,
                evidence=[
                    Evidence(
                        code="E_BACKEND_UNSUPPORTED",
                        message=f"board {board.id!r} is emulated by QEMU: nothing to flash, use `hil run`",
                        objects=[board.id],
                    )
                ],
            )
        pack = board.pack if board.pack is None or board.pack.is_absolute() else self.bench_dir / board.pack
        flasher_request = FlashRequest(
            image=request.image,
            target=board.target,
            probe=request.probe or board.probe,
            erase=request.erase if request.erase != "auto" else board.erase,
            verify=request.verify,
            port=board.serial,
            baud=board.baud,
            pack=pack,
            timeout_s=board.flash_timeout,
        )
        return get_backend(board.runner).flash(flasher_request)

    def run(self, request: RunRequest) -> RunResult:
        board = self.board
        started = time.monotonic()

        def failed(*evidence: Evidence) -> RunResult:
            return RunResult(
                backend=self.name, ok=False, evidence=list(evidence), duration_s=time.monotonic() - started
            )

        if request.target != board.target:
            return failed(target_mismatch(board, request.target))
        if board.runner == "qemu":
            return get_backend("qemu").run(request)
        if not board.connected:
            return failed(
                Evidence(
                    code="E_BOARD_DISCONNECTED",
                    message=f"board {board.id!r} is marked `connected: false` in the bench file",
                    objects=[board.id],
                )
            )
        if board.serial is None:
            return failed(
                Evidence(
                    code="E_PORT_MISSING",
                    message=f"board {board.id!r} has no `serial:` port in the bench file",
                    objects=[board.id],
                )
            )
        if request.image is None:
            return failed(Evidence(code="E_IMAGE", message="no image to flash", objects=[board.id]))
        port = serial_backend().console(board.serial, board.baud, board.port_wait)
        # esptool flashes over the console port itself, so the port is opened after the flash (and the
        # chip reset through RTS); probe flashers leave it free, so it is held across the flash.
        shares_port = board.runner == "esptool"
        try:
            if shares_port:
                port.wait_present()
            else:
                port.open()
        except PortError as exc:
            return failed(exc.evidence)
        try:
            flashed = self.flash(FlashRequest(image=request.image, target=request.target))
            if not flashed.ok:
                return failed(*flashed.evidence)
            if shares_port:
                try:
                    port.open()
                except PortError as exc:
                    return failed(exc.evidence)
                port.pulse_reset()
            console_request = RunRequest(
                image=request.image,
                target=request.target,
                expect=request.expect,
                timeout_s=request.timeout_s,
                output_dir=request.output_dir,
                forbid=request.forbid,
                port=board.serial,
                baud=board.baud,
                port_wait_s=board.port_wait,
            )
            return judge_console(port, console_request, self.name, started)
        finally:
            port.close()


PLAN_SUFFIXES = (".yaml", ".yml", ".json")


def _mismatch(app: Path, recorded: str, expected: str) -> list[Evidence]:
    return [
        Evidence(
            code="E_TARGET_MISMATCH",
            message=f"{app} is for {recorded} but the board carries a {expected}; refusing to build or flash it",
            location=str(app),
            objects=[recorded, expected],
        )
    ]


def image_for(
    app: Path,
    work_dir: Path,
    builder: str = "auto",
    framework: str | None = None,
    expected_target: str | None = None,
) -> tuple[Path | None, str | None, list[Evidence]]:
    """The ELF to run for ``app`` and the target it was generated for.

    ``app`` is a plan file (validated, lowered with ``framework`` into ``work_dir`` and built, through
    the same pipeline as ``rac-fw plan``), a generated artifact directory (built first), or an ELF; an
    ELF inside an artifact directory takes that artifact's target. A bare ELF has no recorded target:
    the caller must then name one, because nothing is flashed without an explicit match.
    """
    if app.is_file() and app.suffix.lower() in PLAN_SUFFIXES:
        from rac_fw.domains.firmware.pipeline import run_plan
        from rac_fw.domains.firmware.plan.load import PlanError, load_plan

        try:
            declared = load_plan(app).target
        except PlanError as exc:
            return None, None, exc.evidence
        if expected_target and declared and declared != expected_target:
            return None, declared, _mismatch(app, declared, expected_target)
        planned = run_plan(app, framework=framework, out_dir=work_dir, build=builder)
        image = planned.build.get("image") if planned.build else None
        if planned.status is not Status.PASS or image is None:
            return None, planned.target, planned.evidence
        return Path(image), planned.target, []
    if app.is_dir():
        try:
            target = str(read_manifest(app)["target"])
            if expected_target and target != expected_target:
                return None, target, _mismatch(app, target, expected_target)
            result = build_artifact(app, builder)
        except BackendError as exc:
            return None, None, exc.evidence
        if not result.ok or result.image is None:
            return (
                None,
                target,
                result.evidence
                or [Evidence(code="E_BUILD_FAILED", message=f"{result.backend} produced no image", location=str(app))],
            )
        return result.image, target, []
    if not app.is_file():
        return None, None, [Evidence(code="E_FILE", message=f"app not found: {app}", location=str(app))]
    with app.open("rb") as handle:
        if handle.read(4) != b"\x7fELF":
            return (
                None,
                None,
                [
                    Evidence(
                        code="E_IMAGE",
                        message=f"{app} is neither an ELF image, a plan file nor a generated artifact directory",
                        location=str(app),
                    )
                ],
            )
    for parent in app.resolve().parents:
        if (parent / MANIFEST_NAME).is_file():
            try:
                return app, str(read_manifest(parent)["target"]), []
            except BackendError:
                break
    return app, None, []
