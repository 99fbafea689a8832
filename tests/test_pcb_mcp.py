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
                                                                 str(tmp_path), "--budget", "3"])

    async def run() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"submit_pcb", "submit_pcb_coord", "submit_pcb_seq", "submit_pcb_req"} <= set(tools)
            # the relation language is an envelope plus an index; each kind's fields come from `schema`
            relation = tools["submit_pcb"].input_schema["properties"]["payload"]["properties"]["relations"]["items"]
            assert relation["required"] == ["kind"] and "board_edge" in relation["properties"]["kind"]["enum"]
            assert '"board_edge":"Part ref sits at board edge side' in tools["submit_pcb"].description
            seq = tools["submit_pcb_seq"].input_schema["properties"]["payload"]["properties"]
            assert seq["relation"]["properties"]["kind"]["enum"] == relation["properties"]["kind"]["enum"]
            edge = _result(await client.call_tool("schema", {"name": "pcb", "op": "board_edge"}))
            assert edge["required"] == ["kind", "ref", "side"] and "left" in edge["properties"]["side"]["enum"]
            unknown = _result(await client.call_tool("schema", {"name": "pcb", "op": "no_such_relation"}))
            assert unknown["status"] == "invalid" and "board_edge" in unknown["evidence"][0]["message"]
            start = _result(await client.call_tool("start_episode", {"domain": "pcb", "task": TASK}))
            # a relation missing its fields is refused by the domain, located, though the envelope let it through
            half = _result(await client.call_tool("submit_pcb", {"session": start["session"],
                                                                 "payload": {"relations": [{"kind": "board_edge"}]}}))
            assert half["status"] == "invalid"
            assert any(e["location"].startswith("payload.relations[0]") for e in half["evidence"]), half
            assert start["observation"]["data"]["requirements"]
            empty = _result(await client.call_tool("submit_pcb", {"session": start["session"],
                                                                  "payload": {"relations": []}}))
            assert empty["status"] == "fail" and any(e["code"] == "E_REQUIREMENT" for e in empty["evidence"])
            fb = _result(await client.call_tool("submit_pcb", {"session": start["session"],
                                                               "payload": get_task(TASK).reference}))
            assert fb["status"] == "pass"

    asyncio.run(run())
