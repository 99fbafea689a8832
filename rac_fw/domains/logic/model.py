"""The logic action: for each output, the minterm indices (truth-table rows) where it is 1."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LogicAction(BaseModel):
    """Commit, per output port, to the rows of the truth table where the output is 1.

    Row indices use the task's input order with the first input as the most significant bit.
    Every declared output must be listed exactly once; indices must be unique and in range.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    outputs: dict[str, list[int]] = Field(
        description="Output port name → sorted or unsorted list of minterm indices where it is 1."
    )
