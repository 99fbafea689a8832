"""What the plan language costs an agent, in o200k_base tokens. Goals: index ≤ 3,000; MCP tool list ≤ 6,000.

Prints, measured in this run:
- the firmware schema index (``rac-fw schema firmware --index``, compact JSON as tools carry it), its
  tokens per operation, and the projection to 100 and 150 operations at that rate;
- every per-operation schema (``rac-fw schema firmware --op KIND``), every plan-level block's and
  ``resources``; and, for every other domain whose action has tagged variants (PCB relations), its index
  and the largest part schema;
- the full plan JSON Schema (what a tool definition carried before the index), for the ratio;
- the whole tool list an MCP client receives from ``rac-fw serve mcp`` over stdio (a real client),
  in total and per tool.

    python benchmarks/bench_schema.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from rac_fw.domain import domain_names, load_domain
from rac_fw.domains.firmware.plan import catalog
from rac_fw.domains.firmware.plan.model import Plan
from rac_fw.domains.firmware.plan.registry import sections, specs
from rac_fw.metering import measure, tokenizer_name
from rac_fw.schemas import inline_refs

INDEX_GOAL, TOOLS_GOAL = 3000, 6000


def compact(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


async def tool_list() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as workdir:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "rac_fw.cli", "serve", "mcp", "--workdir", str(Path(workdir))]
        )
        async with Client(params, read_timeout_seconds=120) as client:
            tools = (await client.list_tools()).tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def main() -> None:
    print(f"tokenizer: {tokenizer_name()}")
    ops = len(specs())
    _, index_tokens = measure(compact(catalog.index()))
    fixed = measure(compact({**catalog.index(), "operations": {}}))[1]
    per_op = (index_tokens - fixed) / ops
    print(f"index: {index_tokens} tokens for {ops} operations ({per_op:.1f}/op + {fixed} fixed); goal ≤ {INDEX_GOAL}")
    for n in (100, 150):
        print(f"  projected at {n} operations: {fixed + per_op * n:.0f} tokens")
    print("per-operation schemas (tokens):")
    names = [*(s.kind for s in specs()), *(b.name for b in sections()), "resources"]
    sizes = {name: measure(compact(catalog.op_schema(name)))[1] for name in names}
    for name, tokens in sizes.items():
        print(f"  {name:<20} {tokens:>6}")
    print(f"  median {sorted(sizes.values())[len(sizes) // 2]}, largest {max(sizes.values())}")
    for name in domain_names():
        domain = load_domain(name)
        index = domain.schema_index()
        if name == "firmware" or index == domain.action_schema():
            continue
        parts = {part: measure(compact(domain.part_schema(part)))[1] for part in index["parts"]}
        print(f"{name}: index {measure(compact(index))[1]} tokens for {len(parts)} parts, envelope "
              f"{measure(compact(domain.tool_schema()))[1]}, full action schema "
              f"{measure(compact(inline_refs(domain.action_schema())))[1]}, largest part {max(parts.values())}")
    _, full = measure(compact(inline_refs(Plan.model_json_schema())))
    print(f"full plan schema: {full} tokens (index is {index_tokens / full:.3f} of it)")
    tools = asyncio.run(tool_list())
    total = measure(compact(tools))[1]
    print(f"MCP tool list: {len(tools)} tools, {total} tokens; goal ≤ {TOOLS_GOAL}")
    for tool in sorted(tools, key=lambda t: -measure(compact(t))[1]):
        print(f"  {tool['name']:<20} {measure(compact(tool))[1]:>6}")


if __name__ == "__main__":
    main()
