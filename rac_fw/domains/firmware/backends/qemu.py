"""The ``qemu`` runner: run a bare-metal ELF in qemu-system-arm and judge its console.

The chip's facts name the QEMU machine (``Target.qemu``: ``netduinoplus2`` for the STM32F4 class, an
STM32F405 with the F407 memory map) and the UART behind each of its ``serial0``, ``serial1``… ports
(QEMU 7.2 ``hw/arm/stm32f405_soc.c``), so the board console (USART2 on the F4 Discovery) is connected
to our pipe and every other port to ``null``.

The firmware ends its self-test with an ARM semihosting SYS_EXIT (``-semihosting-config enable=on,
target=native``), so a run takes milliseconds; the console is judged by ``verify.console`` while it
streams, every wait is bounded by the request's timeout, and QEMU is killed (its whole process group)
when the deadline passes.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

from rac_fw.contract import Evidence, Verdict
from rac_fw.domains.firmware.backends.base import (
    Backend,
    Capability,
    Requirement,
    RunRequest,
    RunResult,
    register_backend,
    tool_requirement,
)
from rac_fw.domains.firmware.facts.chip import QemuMachine
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.verify.console import BAREMETAL_FORBID, Expectations, match_stream

EMULATOR = "qemu-system-arm"
INSTALL = "sudo apt-get install qemu-system-arm"
#: Grace period for QEMU to exit after the console verdict is in (it exits by semihosting).
EXIT_GRACE_S = 0.5


def _runnable() -> list[str]:
    """Targets whose chip facts name a machine of this runner's emulator."""
    from rac_fw.domains.firmware.facts.load import target_ids

    return [t for t in target_ids() if (q := load_target(t).qemu) is not None and q.emulator == EMULATOR]


class QemuSetupError(LookupError):
    """The target cannot run in QEMU; ``evidence`` says why."""

    def __init__(self, evidence: Evidence):
        self.evidence = evidence
        super().__init__(evidence.message)


def machine_for(target: Target) -> tuple[QemuMachine, int]:
    """The QEMU machine of ``target`` and the serial index its board console is wired to."""
    machine = target.qemu
    if machine is None or machine.emulator != EMULATOR:
        name = machine.machine if machine is not None else None
        raise QemuSetupError(
            Evidence(
                code="E_QEMU_NO_MACHINE",
                message=f"{target.id} has no {EMULATOR} machine model (facts qemu = {name!r}); "
                f"run it on a board (--run board:ID) or use a target QEMU models: {', '.join(_runnable())}",
                objects=[target.id],
            )
        )
    console = target.board.console
    instance = target.peripherals.get(console.uart) if console else None
    if instance is None or instance.base not in machine.serial_bases:
        raise QemuSetupError(
            Evidence(
                code="E_QEMU_CONSOLE",
                message=f"{machine.machine} has no serial port for the {target.id} console "
                f"{console.uart if console else '(none)'}",
                objects=[target.id, machine.machine],
            )
        )
    return machine, machine.serial_bases.index(instance.base)


def qemu_command(image: Path, machine: QemuMachine, console_index: int) -> list[str]:
    """The QEMU command line: console port on stdio, the others on null, semihosting on."""
    serials: list[str] = []
    for index in range(console_index + 1):
        serials += ["-serial", "stdio" if index == console_index else "null"]
    return [
        EMULATOR, "-M", machine.machine, "-nographic", "-monitor", "none", *serials,
        "-semihosting-config", "enable=on,target=native", "-kernel", str(image),
    ]  # fmt: skip


@register_backend
class QemuRunner(Backend):
    """qemu-system-arm for bare-metal images of targets whose facts name a QEMU machine."""

    name = "qemu"
    capabilities = frozenset({Capability.RUN})
    frameworks = frozenset({"baremetal"})
    description = "qemu-system-arm (netduinoplus2 for the STM32F4 class), semihosting exit, console verdicts"

    def requirements(self) -> list[Requirement]:
        return [tool_requirement(EMULATOR, INSTALL)]

    def supports(self, capability: Capability, framework: str | None = None, target: str | None = None) -> bool:
        """Only targets whose facts name a QEMU machine this runner knows (and its console port)."""
        if not super().supports(capability, framework, target):
            return False
        if target is None:
            return True
        try:
            machine_for(load_target(target))
        except (QemuSetupError, LookupError):
            return False
        return True

    def run(self, request: RunRequest, console_input: bytes = b"") -> RunResult:
        """Run ``request.image``; ``console_input`` is typed into the console UART once it is up."""
        started = time.monotonic()
        output_dir = Path(request.output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
        log = output_dir / "console.log"
        if self.missing():
            return RunResult(self.name, False, evidence=self.missing())
        if request.image is None or not Path(request.image).is_file():
            return RunResult(
                self.name, False,
                evidence=[Evidence(code="E_RUN_NO_IMAGE", message=f"no ELF image to run: {request.image}",
                                   objects=[str(request.image)])],
            )  # fmt: skip
        try:
            machine, index = machine_for(load_target(request.target))
        except QemuSetupError as exc:
            return RunResult(self.name, False, evidence=[exc.evidence])
        expectations = Expectations(
            tuple(request.expect), request.timeout_s, forbid=BAREMETAL_FORBID + tuple(request.forbid)
        )
        command = qemu_command(Path(request.image), machine, index)
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        fd = proc.stdout.fileno()
        pending_input = [console_input] if console_input else []

        def read_chunk(wait_s: float) -> bytes | None:
            ready, _, _ = select.select([fd], [], [], wait_s)
            if not ready:
                return b""
            data = os.read(fd, 4096)
            if data and pending_input:
                # QEMU's STM32 USART drops bytes that arrive before the receiver is enabled; the
                # firmware's first console output proves the console UART is up, so type now.
                stdin = proc.stdin
                assert stdin is not None
                stdin.write(pending_input.pop())
                stdin.flush()
            return data or None

        result = match_stream(read_chunk, expectations)
        remaining = max(0.0, request.timeout_s - (time.monotonic() - started))
        try:
            status: int | None = proc.wait(timeout=min(EXIT_GRACE_S, remaining) if result.closed else 0.0)
        except subprocess.TimeoutExpired:
            status = None
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        stderr = proc.stderr.read().decode("utf-8", errors="replace").strip()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
        log.write_text(result.transcript + "\n", encoding="utf-8")
        verdicts = result.verdicts()
        verdicts.append(
            Verdict(
                predicate=f"qemu exits through semihosting SYS_EXIT with status {request.exit_status}",
                passed=status == request.exit_status,
                measured=("killed after a forbidden line" if result.forbidden else "killed at the deadline")
                if status is None
                else status,
                limit=request.exit_status,
                detail=stderr[-300:] or None,
            )
        )
        evidence = result.evidence()
        if status is None and result.forbidden is None:
            evidence.append(
                Evidence(
                    code="E_RUN_TIMEOUT",
                    message=f"QEMU did not exit within {request.timeout_s:g} s and was killed; last console "
                    f"lines: {' | '.join(result.lines[-5:]) or '(none)'}",
                    objects=[machine.machine, str(request.image)],
                )
            )
        elif status != request.exit_status and not evidence:
            evidence.append(
                Evidence(
                    code="E_RUN_EXIT_STATUS",
                    message=f"QEMU exited with status {status}: {stderr[-300:] or 'the firmware reported failure'}",
                    objects=[machine.machine],
                )
            )
        return RunResult(
            self.name,
            ok=result.ok and status == request.exit_status,
            verdicts=verdicts,
            evidence=evidence,
            output=result.transcript,
            log=log,
            duration_s=time.monotonic() - started,
        )
