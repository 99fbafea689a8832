"""Every contract message survives a JSON round trip unchanged, and patches apply as documented."""

from __future__ import annotations

import pytest

from rac_fw.contract import (
    Action,
    Evidence,
    Feedback,
    Magnitude,
    Observation,
    PatchError,
    Realization,
    Receipt,
    Relaxation,
    Status,
    Verdict,
    apply_patch,
    sha256_of,
)

EVIDENCE = Evidence(
    code="E_DMA_UNREACHABLE",
    message="adc_buf in DTCM is not reachable by DMA1",
    location="payload.resources.buffers[0].placement",
    objects=["adc_buf", "DTCM", "DMA1"],
    magnitudes=[Magnitude(name="size", value=512, unit="bytes")],
    relaxations=[Relaxation(description="place adc_buf in SRAM1",
                            patch=[{"op": "replace", "path": ["resources", "buffers", 0, "placement"],
                                    "value": "SRAM1"}])],
)
MESSAGES = [
    Observation(domain="logic", task="half_adder", summary="s", data={"inputs": ["a", "b"]}),
    Action(domain="logic", task="half_adder", payload={"outputs": {"sum": [1, 2]}}),
    Realization(artifact={"gates": []}, artifact_hash=sha256_of({"gates": []}),
                receipt=Receipt(realized=["sum"], notes=["n"]), seed=3),
    Verdict(predicate="baud_error", passed=False, measured=2.6, limit=2.0, unit="%"),
    EVIDENCE,
    Feedback(domain="firmware", task="stm32h743", turn=2, status=Status.FAIL,
             verdicts=[Verdict(predicate="x", passed=True)], evidence=[EVIDENCE], artifact_hash="ab"),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_json_round_trip(message):
    text = message.model_dump_json()
    again = type(message).model_validate_json(text)
    assert again == message
    assert again.model_dump_json() == text


def test_relaxation_patch_applies_to_a_copy():
    plan = {"resources": {"buffers": [{"name": "adc_buf", "placement": "DTCM"}]}}
    patched = EVIDENCE.relaxations[0].apply(plan)
    assert patched["resources"]["buffers"][0]["placement"] == "SRAM1"
    assert plan["resources"]["buffers"][0]["placement"] == "DTCM"


def test_patch_add_remove_and_stale_paths():
    doc = {"ops": [1, 2], "m": {"k": 1}}
    out = apply_patch(doc, [{"op": "add", "path": ["ops", "-"], "value": 3},
                            {"op": "add", "path": ["ops", 0], "value": 0},
                            {"op": "remove", "path": ["m", "k"]}])
    assert out == {"ops": [0, 1, 2, 3], "m": {}}
    with pytest.raises(PatchError):
        apply_patch(doc, [{"op": "replace", "path": ["missing", "deeper"], "value": 1}])
    with pytest.raises(PatchError):
        apply_patch(doc, [{"op": "replace", "path": ["ops", 5], "value": 1}])


def test_hash_is_canonical():
    assert sha256_of({"b": 1, "a": [1, 2]}) == sha256_of({"a": [1, 2], "b": 1})
    assert sha256_of({"a": 1}) != sha256_of({"a": 2})
