"""The PCB domains over MCP (stdio, the SDK's client): tools come from the domain plugins themselves."""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from rac_fw.domains.pcb.tasks import get_task

TASK = "place_decouple_01"


def _result(res):
    if res.structured_content is not None:
        return res.structured_content
    return json.loads(res.content[0].text)


def test_pcb_episode_over_mcp(tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "rac_fw.cli", "serve", "mcp", "--workdir",
                                                                 str(tmp_path), "--budget", "2"])

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"submit_pcb", "submit_pcb_coord", "submit_pcb_seq", "submit_pcb_req"} <= names
            start = _result(await client.call_tool("start_episode", {"domain": "pcb", "task": TASK}))
            assert start["observation"]["data"]["requirements"]
            empty = _result(await client.call_tool("submit_pcb", {"session": start["session"],
                                                                  "payload": {"relations": []}}))
            assert empty["status"] == "fail" and any(e["code"] == "E_REQUIREMENT" for e in empty["evidence"])
            fb = _result(await client.call_tool("submit_pcb", {"session": start["session"],
                                                               "payload": get_task(TASK).reference}))
            assert fb["status"] == "pass"

    asyncio.run(run())
