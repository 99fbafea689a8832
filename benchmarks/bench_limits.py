"""How fast an over-limit input is answered (issue 16 goal: E_TOO_LARGE in under 1 s each).

Measured in one warm process: an oversized plan file, 60 000 operations (byte limits raised so the
operation count is what refuses it), 1.3 M minterms (refused by size, then by list length with the byte
limit raised), and a 10 MB MCP tool call through the SDK's in-process client (argument parsing included).

    python benchmarks/bench_limits.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from mcp import Client

from rac_fw.contract import Action
from rac_fw.domain import load_domain
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.limits import Limits, set_limits
from rac_fw.mcp.server import ServerConfig, build_server
from rac_fw.runtime import Episode

BLINK = {"op": "gpio_blink", "led": "led0", "period_ms": 500}


def timed(label: str, fn) -> None:
    t0 = time.perf_counter()
    codes = fn()
    ms = (time.perf_counter() - t0) * 1e3
    print(f"{label:48s} {ms:9.1f} ms  {codes}  ratio to 1 s goal: {ms / 1000:.3f}")


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    big = tmp / "big.yaml"
    big.write_text("operations: []\n# " + "x" * (2 << 20) + "\n")
    ops = tmp / "ops.json"
    ops.write_text(json.dumps({"target": "nrf52840", "operations": [BLINK] * 60_000}))
    run_plan({"target": "nrf52840", "operations": [BLINK]})  # warm the pipeline

    def codes(body):
        return sorted({e["code"] + ":" + ",".join(e["objects"]) for e in body["evidence"]})

    timed("plan file 2 MiB (plan_bytes)", lambda: codes(run_plan(big).to_json()))
    set_limits(Limits(plan_bytes=100 << 20, payload_bytes=100 << 20))
    timed("60k operations (operations)", lambda: codes(run_plan(ops).to_json()))
    set_limits(Limits())
    logic = load_domain("logic")
    huge = {"outputs": {"sum": list(range(1_300_000)), "carry": [3]}}

    def minterms():
        fb = Episode(logic, "half_adder").submit(Action(domain="logic", task="half_adder", payload=huge))
        return sorted({e.code + ":" + ",".join(e.objects) for e in fb.evidence})

    timed("1.3M minterms (payload_bytes)", minterms)
    set_limits(Limits(payload_bytes=100 << 20))
    timed("1.3M minterms, bytes raised (list_items)", minterms)
    set_limits(Limits())

    server = build_server(ServerConfig(workdir=tmp / "mcp"))

    async def mcp() -> None:
        async with Client(server, read_timeout_seconds=60) as client:
            sid = (await client.call_tool("start_episode", {"domain": "logic", "task": "half_adder"}))
            session = sid.structured_content["session"]
            payload = {"outputs": {"sum": [1, 2], "carry": [3]}, "pad": "x" * (10 << 20)}
            t0 = time.perf_counter()
            res = await client.call_tool("submit_logic", {"session": session, "payload": payload})
            ms = (time.perf_counter() - t0) * 1e3
            found = sorted({e["code"] for e in res.structured_content["evidence"]})
            print(f"{'10 MB MCP call, in-process client (payload_bytes)':48s} {ms:9.1f} ms  {found}  "
                  f"ratio to 1 s goal: {ms / 1000:.3f}")

    asyncio.run(mcp())


if __name__ == "__main__":
    main()
