"""The action models of the PCB baseline interfaces (:mod:`.baselines`), kept apart so that importing
the baseline domain classes (which the CLI does on every start, to list commands) builds no model."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from rac_fw.domains.pcb.model import Relation

#: How many toolchain proposals the Candidates interface offers.
CANDIDATES = 3


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CoordPyAction(_Strict):
    program: Annotated[str, Field(min_length=1, max_length=200_000,
                                  description="Python 3 source; reads the observation JSON on stdin and prints "
                                  "a pcb_coord payload as its last stdout line")]


class CandidatesAction(_Strict):
    choice: Annotated[int, Field(ge=0, lt=CANDIDATES, description="index into observation.data.candidates")]


class SeqAction(_Strict):
    history: Annotated[list[Relation], Field(max_length=64)] = []
    relation: Relation


class ReqOnlyAction(_Strict):
    requirements: Annotated[list[int] | None, Field(description="indices of the requirements to honour (all when "
                                                                "omitted)")] = None
