"""The firmware domain's ``rac-fw`` commands: ``plan``, ``build``, ``verify``, ``targets``, ``hil``,
``doctor`` and ``calibrate firmware`` (listed by :meth:`FirmwareDomain.commands`)."""

from __future__ import annotations

from rac_fw.domain import Command


def commands() -> list[Command]:
    from rac_fw.domains.firmware.cli import build, calibrate, doctor, hil, plan, targets, verify

    return [
        Command("plan", plan.plan),
        Command("build", build.build),
        Command("verify", verify.verify),
        Command("targets", targets.targets_app),
        Command("hil", hil.hil_app),
        Command("doctor", doctor.doctor),
        Command("firmware", calibrate.calibrate_firmware, group="calibrate"),
    ]
