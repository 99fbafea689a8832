"""Fuzzing the boundaries an agent controls: plans drawn from the published schemas, mutated example
plans, hostile strings in every string field, and MCP tool arguments.

Asserted for every example: no exception, no E_INTERNAL, an answer within a bound (a hang guard, not a
speed goal); every accepted hostile string appears in generated C only inside a string literal or a
comment and the bare-metal tree still compiles (``arm-none-eabi-gcc -fsyntax-only``). CI runs a small
bounded number of examples; ``RAC_FW_FUZZ_EXAMPLES=N`` runs N per test.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from conftest import require_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import target_ids
from rac_fw.domains.firmware.lower import lower, write_artifact
from rac_fw.domains.firmware.pipeline import run_plan

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = {p.stem: yaml.safe_load(p.read_text()) for p in sorted((REPO / "examples").glob("*.yaml"))}
COUNT = int(os.environ.get("RAC_FW_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=COUNT, deadline=timedelta(seconds=60), database=None, derandomize="CI" in os.environ,
                suppress_health_check=list(HealthCheck))

#: Text built to break out of a C literal or comment, a format string, a preprocessor line, a YAML scalar.
HOSTILE = st.one_of(
    st.sampled_from(['"', '\\', '";} int x; /*', "*/ evil(); /*", "??/", "??=define", "%s%n%x", "\\x41\\0",
                     "\n#include <x>", "'", "\\\"", "${HOME}", "`id`", "\u202e", "\x00", "a" * 200, " ", ""]),
    st.text(alphabet=st.sampled_from(list('"\\/*%?#\'{};\n\t ab01') + ["\u00e9", "\x7f"]), max_size=40),
    st.text(max_size=30),
)


def answer_is_clean(result_json: dict[str, Any]) -> None:
    """No internal error anywhere in an answer."""
    codes = [e["code"] for e in result_json.get("evidence", [])]
    assert "E_INTERNAL" not in codes, result_json["evidence"]


def judge(plan: Any, target: str | None = None) -> dict[str, Any]:
    result = run_plan(plan, target=target)
    body = result.to_json()
    answer_is_clean(body)
    return body


# --- plans drawn from the published schema (one operation model at a time: tractable to draw) ------------

@cache
def operation_strategy() -> st.SearchStrategy[Any]:
    from hypothesis_jsonschema import from_schema

    from rac_fw.domains.firmware.plan.model import OPERATION_MODELS

    return st.one_of([from_schema(model.model_json_schema()) for model in OPERATION_MODELS])


@st.composite
def schema_plans(draw: st.DrawFn) -> dict[str, Any]:
    plan: dict[str, Any] = {"target": draw(st.sampled_from(target_ids())),
                            "operations": draw(st.lists(operation_strategy(), min_size=1, max_size=3))}
    base = draw(st.sampled_from(sorted(EXAMPLES)))
    if draw(st.booleans()) and "resources" in EXAMPLES[base]:
        plan["resources"] = copy.deepcopy(EXAMPLES[base]["resources"])
    return plan


@FUZZ
@given(schema_plans())
def test_schema_drawn_plans(plan):
    judge(plan)


# --- mutated example plans ------------------------------------------------------------------------------

def leaves(node: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in leaves(v, (*path, k))] + [path]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in leaves(v, (*path, i))] + [path]
    return [path]


def set_at(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return doc


ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([5e-324, 1e308, -0.0, 10**400, 2**31, -1, 0]),
    HOSTILE, st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@st.composite
def mutated_plans(draw: st.DrawFn) -> tuple[dict[str, Any], str | None]:
    plan = copy.deepcopy(EXAMPLES[draw(st.sampled_from(sorted(EXAMPLES)))])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = leaves(plan)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "delete", "duplicate"]))
        if action == "replace" or not path:
            plan = set_at(plan, path, draw(ODD_VALUES)) if path else plan
        else:
            parent = plan
            for part in path[:-1]:
                parent = parent[part]
            if action == "delete":
                del parent[path[-1]]
            elif isinstance(parent, list):
                parent.append(copy.deepcopy(parent[path[-1]]))
        if not isinstance(plan, dict):
            break
    target = draw(st.one_of(st.none(), st.sampled_from(target_ids())))
    return plan, target


@FUZZ
@given(mutated_plans())
def test_mutated_examples(case):
    plan, target = case
    judge(plan, target)


# --- hostile strings in every string field ----------------------------------------------------------------

def string_paths(node: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in string_paths(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in string_paths(v, (*path, i))]
    return [path] if isinstance(node, str) else []


@cache
def _c_parser() -> Any:
    import tree_sitter
    import tree_sitter_c

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_c.language()))


def outside_literals(source: str) -> str:
    """The C text with every string/char literal and comment blanked out."""
    data = bytearray(source.encode())
    stack = [_c_parser().parse(bytes(data)).root_node]
    while stack:
        node = stack.pop()
        if node.type in ("string_literal", "char_literal", "comment", "system_lib_string"):
            data[node.start_byte:node.end_byte] = b" " * (node.end_byte - node.start_byte)
        else:
            stack.extend(node.children)
    return data.decode(errors="replace")


def baremetal_plans() -> list[str]:
    """Examples the bare-metal framework realizes on stm32f407 (their C is compiled by the test)."""
    names = []
    for name, plan in EXAMPLES.items():
        body = run_plan(plan, target="stm32f407", framework="baremetal").to_json()
        if body["status"] == Status.PASS.value:
            names.append(name)
    return names


@st.composite
def hostile_cases(draw: st.DrawFn) -> tuple[str, dict[str, Any], tuple, str]:
    name = draw(st.sampled_from(_baremetal()))
    plan = copy.deepcopy(EXAMPLES[name])
    path = draw(st.sampled_from(string_paths(plan)))
    text = draw(HOSTILE)
    return name, set_at(plan, path, text), path, text


@cache
def _baremetal() -> list[str]:
    return baremetal_plans()


@FUZZ
@given(hostile_cases())
def test_hostile_strings_reach_c_only_inside_literals(tmp_path_factory, case):
    name, plan, path, text = case
    result = run_plan(plan, target="stm32f407", framework="baremetal")
    body = result.to_json()
    answer_is_clean(body)
    if result.status is not Status.PASS:
        assert body["evidence"], f"{name}: {path} rejected without evidence"
        return
    from rac_fw.domains.firmware.facts.load import load_target
    from rac_fw.domains.firmware.plan.load import parse_plan

    lowered = lower(parse_plan(plan), load_target("stm32f407"), "baremetal")
    benign = lower(parse_plan(EXAMPLES[name]), load_target("stm32f407"), "baremetal").files
    special = any(not (c.isalnum() or c == "_") for c in text) and text.strip()
    for rel, source in lowered.files.items():
        # A text the example's own code already contains outside literals (``;``, ``{``) proves nothing.
        natural = text in outside_literals(benign.get(rel, ""))
        if special and not natural and rel.endswith((".c", ".h")):
            assert text not in outside_literals(source), f"{name}: {path}={text!r} reached {rel} outside a literal"
    require_tool("arm-none-eabi-gcc")
    out = tmp_path_factory.mktemp("hostile")
    write_artifact(lowered, out)
    build = json.loads((out / "build.json").read_text())
    flags = [f for f in build["cflags"] if f != "-Werror"]
    for source in build["sources"]:
        run = subprocess.run(["arm-none-eabi-gcc", *flags, "-fsyntax-only", source], cwd=out, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, f"{name}: {path}={text!r}: {source} does not compile:\n{run.stderr[:2000]}"


# --- MCP tool arguments -------------------------------------------------------------------------------------

JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), HOSTILE),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
TOOLS = ["list_domains", "list_tasks", "list_targets", "schema", "observe", "start_episode", "submit",
         "session_info", "submit_logic", "submit_scheduling", "submit_firmware", "plan", "build", "run", "flash"]


@cache
def _server(workdir: str) -> Any:
    from rac_fw.mcp.server import ServerConfig, build_server

    return build_server(ServerConfig(workdir=Path(workdir), budget=3))


@FUZZ
@given(tool=st.sampled_from(TOOLS), args=st.dictionaries(
    st.sampled_from(["session", "payload", "plan", "domain", "task", "detail", "name", "board", "framework",
                     "builder", "runner", "timeout_s", "extra"]), JSONISH, max_size=4),
       real_session=st.booleans())
def test_mcp_tool_arguments(tmp_path_factory, tool, args, real_session):
    from mcp import Client

    server = _server(str(tmp_path_factory.getbasetemp() / "fuzz-mcp"))

    async def main():
        async with Client(server, read_timeout_seconds=60) as client:
            if real_session:
                started = await client.call_tool("start_episode", {"domain": "firmware", "task": "stm32f407"})
                args["session"] = (started.structured_content or {}).get("session", "x")
            res = await client.call_tool(tool, args)
            body = res.structured_content
            if body is None:
                body = json.loads(res.content[0].text) if res.content else {}
            assert isinstance(body, dict), body
            if res.is_error or "evidence" in body:
                answer_is_clean(body)
                assert body.get("evidence") or body.get("status") in ("pass", "fail", "dry-run"), body
    asyncio.run(asyncio.wait_for(main(), timeout=300))


def test_hostile_string_check_sees_an_escape():
    """The literal check itself: text outside a literal is found, inside a literal or comment it is not."""
    assert "evil();" in outside_literals('int x; evil(); const char *s = "ok";')
    assert "evil" not in outside_literals('const char *s = "evil"; /* evil */ // evil\nint y;')
    assert "uart_hello" in _baremetal()  # the hostile-string cases have seeds to mutate
