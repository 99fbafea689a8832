"""``verify_sources``: judge a generated source tree on its own, one verdict per predicate.

This is the independent verifier of the contract's *Verify* step for firmware sources. It reads only the
files (and, when given, the target's facts); it never imports the lowering nor reads its receipt, so a
lowering bug cannot vouch for itself. Every failed predicate comes with located evidence
(``src/main.c:42 in main()``) the agent can repair from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rac_fw.contract import Evidence, Verdict
from rac_fw.domain import Verification
from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.verify import config, dtc, kconfig, static  # noqa: F401  (imported to register their checks)
from rac_fw.domains.firmware.verify.sdk import FRAMEWORKS
from rac_fw.domains.firmware.verify.static import RULES, Context, checks_of

if TYPE_CHECKING:
    from rac_fw.domains.firmware.facts.model import Target


def verify_sources(files: dict[str, str], framework: str, target: Target | None) -> Verification:
    """Judge the generated ``files`` (artifact-relative path → text) for ``framework`` on ``target``.

    ``target`` may be None: checks that need facts (board devicetree labels, D-cache presence, HAL family,
    ESP32 chip) then judge only what the files themselves show. A tree as lowered lacks the user's
    files its ``main.c`` includes and its build compiles; it is judged with the ones ``write_artifact``
    will create (``usercode.with_stand_ins``).
    """
    if framework not in FRAMEWORKS:
        return Verification(
            verdicts=[Verdict(predicate="framework_known", passed=False, measured=framework, detail="unknown")],
            evidence=[
                Evidence(
                    code="E_UNKNOWN_FRAMEWORK",
                    message=f"no static verifier for framework {framework!r}; known: {', '.join(FRAMEWORKS)}",
                    objects=[framework],
                )
            ],
        )
    if not any(path.endswith(static.C_SUFFIXES) for path in files):
        return Verification(
            verdicts=[Verdict(predicate="c_sources_present", passed=False, measured=0, limit=1, unit="files")],
            evidence=[Evidence(code="E_NO_C_SOURCES", message="the artifact contains no .c/.h file to verify")],
        )
    ctx = Context.build(usercode.with_stand_ins(files), framework, target)
    verdicts: list[Verdict] = []
    evidence: list[Evidence] = []
    for rule in RULES:
        if framework not in rule.frameworks:
            continue
        found = [e for check in checks_of(rule.key) for e in check.run(ctx)]
        verdicts.append(
            Verdict(
                predicate=rule.key,
                passed=not found,
                measured=len(found),
                limit=0,
                unit="violations",
                detail=rule.meaning if not found else "; ".join(sorted({e.code for e in found})),
            )
        )
        evidence.extend(found)
    return Verification(verdicts=verdicts, evidence=evidence)
