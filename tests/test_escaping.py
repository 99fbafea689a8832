"""Plan text reaches generated files only through the escaping layer of its context (``plan/escape.py``).

The fuzzer walks the op registry and the plan-level blocks, finds every free-text string field (a string
whose schema admits anything beyond identifier characters: messages, paths, payloads, hosts, topics,
names, compatibles), fills it with hostile text (``*/``, ``%``, ``%%``, ``\\``, ``"``, ``??=``, line
breaks, non-ASCII, control characters — whatever the field's pattern admits), lowers the plan on every
framework that realizes it, then reads each generated file with a decoder of its context: C literals
(this file's own decoder, checked against gcc), printf formats, Kconfig strings, devicetree strings,
YAML, ``partitions.csv``. The text must come back byte for byte, and must not appear anywhere else
(a comment, code, a CMake file).
"""

from __future__ import annotations

import ast
import copy
import functools
import io
import json
import re
import subprocess
import tokenize
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tree_sitter
import tree_sitter_c
import yaml
from conftest import require_tool
from pydantic import BaseModel

from rac_fw.contract import Status
from rac_fw.domains.firmware.facts.load import load_target, target_ids
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.lower import lower
from rac_fw.domains.firmware.pipeline import PlanResult, run_plan
from rac_fw.domains.firmware.plan import registry
from rac_fw.domains.firmware.plan.escape import (
    FILTERS,
    c_format,
    c_string,
    csv_field,
    dts_string,
    kconfig_string,
    yaml_string,
)
from rac_fw.domains.firmware.plan.load import parse_plan
from rac_fw.domains.firmware.plan.matrix import realizes
from rac_fw.resources import data_dir

FRAMEWORKS = ("zephyr", "espidf", "hal", "baremetal")
#: Hostile pieces; each field gets the longest run of them its pattern admits.
PIECES = ("*/", "%", "%%", "%d", "%s", "%n", "\\", '"', "??=", "??/", "'", "/*", "//", "\n", "\r", "\t", "\x01",
          "\x1f", "\x7f", "é", "€", "#", "$", "{", "}", ";", "`", "<", ">", "&", "@", "!", "=", "+", "(", ")",
          "[", "]", "|", "^", "~", ":", ",", " ", ".", "-")  # fmt: skip
IDENTIFIER = re.compile(r"[A-Za-z0-9_]")
DOCS = sorted(data_dir("examples").glob("*.yaml")) + sorted((Path(__file__).parent / "plans").glob("*.yaml"))

# --- a C string-literal decoder, and printf's reading of a format -----------------------------------------

_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, '"': 34, "'": 39, "?": 63}


def decode_c(body: str) -> bytes:
    """The bytes of a C string literal's body (between the quotes), as the C standard reads them."""
    out, i = bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode()
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:])
            assert digits is not None
            out.append(int(digits.group(), 8))
            i += 1 + len(digits.group())
        elif nxt == "x":
            digits = re.match(r"[0-9A-Fa-f]+", body[i + 2:])
            assert digits is not None, body
            out.append(int(digits.group(), 16) & 0xFF)
            i += 2 + len(digits.group())
        else:
            raise AssertionError(f"unknown escape \\{nxt} in {body!r}")
    assert b"??" not in bytes(out) or "??" not in body, f"a trigraph can form in {body!r}"
    return bytes(out)


_CONVERSION = re.compile(rb"%%|%[-+ #0]*(\*|\d+)?(\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?[diouxXeEfFgGaAcspn]")


def printed(fmt: bytes) -> bytes:
    """What printf prints for ``fmt``: ``%%`` is ``%``, every other conversion an argument (U+FFFD here)."""
    return _CONVERSION.sub(lambda m: b"%" if m.group() == b"%%" else "\ufffd".encode(), fmt)


#: Printf-style functions and macros: the index of the format argument.
FORMAT_ARGUMENT = {"printk": 0, "printf": 0, "LOG_DBG": 0, "LOG_INF": 0, "LOG_WRN": 0, "LOG_ERR": 0, "snprintf": 2,
                   "sprintf": 1, "fprintf": 1, "ESP_LOGD": 1, "ESP_LOGI": 1, "ESP_LOGW": 1, "ESP_LOGE": 1,
                   "ESP_LOGV": 1, "shell_print": 1}  # fmt: skip

_C = tree_sitter.Parser(tree_sitter.Language(tree_sitter_c.language()))


def _walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _is_format(node: tree_sitter.Node) -> bool:
    arguments = node.parent
    if arguments is None or arguments.type != "argument_list" or arguments.parent is None:
        return False
    function = arguments.parent.child_by_field_name("function")
    name = function.text.decode() if function is not None and function.text else ""
    named = [c for c in arguments.children if c.is_named and c.type != "comment"]
    return name in FORMAT_ARGUMENT and named.index(node) == FORMAT_ARGUMENT[name]


def c_texts(source: str) -> tuple[list[bytes], str]:
    """Every string (adjacent literals joined; a macro between them, ``PRIu32``, as U+FFFD) as the program
    sees it — printed when it is a printf format — and every byte array written as numbers, and the source
    with every string and char literal cut out."""
    data = source.encode()
    tree = _C.parse(data)
    texts: list[bytes] = []
    spans: list[tuple[int, int]] = []
    for node in _walk(tree.root_node):
        if node.type in ("string_literal", "char_literal", "system_lib_string"):
            spans.append((node.start_byte, node.end_byte))
        if node.type == "initializer_list":  # bytes written as numbers: {0x51U, 0x37U, …}
            items = [c.text.decode().rstrip("uUlL") for c in node.named_children if c.text]
            if items and all(c.type == "number_literal" for c in node.named_children):
                values = [int(x, 0) for x in items]
                if all(0 <= v <= 255 for v in values):
                    texts.append(bytes(values))
        if node.type == "string_literal" and (node.parent is None or node.parent.type != "concatenated_string"):
            parts = [node]
        elif node.type == "concatenated_string":
            parts = node.children
        else:
            continue
        text = b"".join(decode_c(p.text.decode()[1:-1]) if p.type == "string_literal" and p.text else
                        "\ufffd".encode() for p in parts)  # fmt: skip
        texts.append(printed(text) if _is_format(node) else text)
    rest, last = bytearray(), 0
    for start, end in sorted(spans):
        if start >= last:
            rest += data[last:start]
            last = end
    rest += data[last:]
    return texts, rest.decode()


_QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def kconfig_texts(source: str) -> tuple[list[bytes], str]:
    """String values of ``CONFIG_X="…"`` lines (kconfiglib's unescaping), and the rest."""
    texts, rest = [], []
    for line in source.splitlines():
        match = re.fullmatch(r'(CONFIG_\w+)="((?:[^"\\]|\\.)*)"', line)
        if match:
            texts.append(re.sub(r"\\(.)", r"\1", match.group(2)).encode())
            rest.append(match.group(1))
        else:
            rest.append(line)
    return texts, "\n".join(rest)


def dts_texts(source: str) -> tuple[list[bytes], str]:
    """Devicetree strings (dtc reads C escapes) and the rest."""
    return [decode_c(m.group(1)) for m in _QUOTED.finditer(source)], _QUOTED.sub('""', source)


def yaml_texts(source: str) -> tuple[list[bytes], str]:
    """Every scalar of a YAML document; the rest is what the raw text holds beyond them (comments)."""
    found: list[bytes] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                collect(key)
                collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)
        elif isinstance(node, str):
            found.append(node.encode())

    collect(yaml.safe_load(source))
    rest = "\n".join(line for line in source.splitlines() if line.lstrip().startswith("#"))
    return found, rest


def _unregex(pattern: str) -> str:
    """A predicted console line's pattern read back as the text it matches literally (``re.escape``'s
    backslashes dropped): the plan's text in a regex is escaped for that context."""
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.S)


def sample_texts(source: str) -> tuple[list[bytes], str]:
    """A twister ``sample.yaml``: its scalars, the console harness's ``regex`` lines read as regexes."""
    found: list[bytes] = []

    def collect(node: Any, regex: bool = False) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                collect(key)
                collect(value, key == "regex")
        elif isinstance(node, list):
            for item in node:
                collect(item, regex)
        elif isinstance(node, str):
            found.append((_unregex(node) if regex else node).encode())

    collect(yaml.safe_load(source))
    rest = "\n".join(line for line in source.splitlines() if line.lstrip().startswith("#"))
    return found, rest


def python_texts(source: str) -> tuple[list[bytes], str]:
    """The ESP-IDF pytest file: its string constants read as the regexes they are (``re.compile``); the rest
    is every token that is no string (code and comments)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found = [_unregex(ast.literal_eval(t.string)).encode() for t in tokens if t.type == tokenize.STRING]
    rest = " ".join(t.string for t in tokens if t.type != tokenize.STRING)
    return found, rest


def csv_texts(source: str) -> tuple[list[bytes], str]:
    """ESP-IDF's partition-table reading: comment lines dropped, fields split on commas and stripped."""
    rows = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    comments = [line for line in source.splitlines() if line.lstrip().startswith("#")]
    return [f.strip().encode() for row in rows for f in row.split(",")], "\n".join(comments)


def reader(path: str) -> Any:
    """The decoder of a generated file's context (None: no plan text may appear in it at all)."""
    name = Path(path).name
    if name.endswith((".c", ".h")):
        return c_texts
    if name in ("prj.conf", "sdkconfig.defaults") or name.endswith((".conf", ".defaults")):
        return kconfig_texts
    if name.endswith((".overlay", ".dts", ".dtsi")):
        return dts_texts
    if name == "sample.yaml":
        return sample_texts
    if name.endswith((".yaml", ".yml")):
        return yaml_texts
    if name == "pytest_rac_fw_app.py":
        return python_texts
    if name.endswith(".csv"):
        return csv_texts
    return None  # CMakeLists.txt, *.cmake, README.md, linker scripts, build.json


# --- the escapers themselves ------------------------------------------------------------------------------

HOSTILE = ["*/ x", "100%", "%%", "%d%s%n", "back\\slash", 'say "hi"', "??=??/??'", "a\nb\r\tc", "é€漢",
           "\x01\x1f\x7f", "?\\?", "\\0", "end\\"]  # fmt: skip


@pytest.mark.parametrize("text", HOSTILE)
def test_c_escapers_round_trip_through_the_test_decoder(text: str) -> None:
    assert decode_c(c_string(text)[1:-1]) == text.encode()
    assert printed(decode_c(c_format(text)[1:-1])) == text.encode()
    assert decode_c(dts_string(text)[1:-1]) == text.encode()
    assert yaml.safe_load(yaml_string(text)) == text


def test_the_decoder_reads_literals_as_gcc_does(tmp_path: Path) -> None:
    """The test's decoder is checked against the compiler: one program prints every escaped literal's bytes
    (compiled with -trigraphs -std=c11, where ``??=`` would become ``#`` unless broken up)."""
    gcc = require_tool("gcc")
    rows = "\n".join(f"    {{{c_string(t)}, sizeof({c_string(t)}) - 1}}," for t in HOSTILE)
    program = tmp_path / "lit.c"
    program.write_text("#include <stdio.h>\nstruct row { const char *s; unsigned long n; };\n"
                       f"static const struct row rows[] = {{\n{rows}\n}};\n"
                       "int main(void) {\n    for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {\n"
                       "        for (unsigned long k = 0; k < rows[i].n; k++)\n"
                       "            printf(\"%02x\", (unsigned char)rows[i].s[k]);\n"
                       "        printf(\"\\n\");\n    }\n    return 0;\n}\n")  # fmt: skip
    binary = tmp_path / "lit"
    subprocess.run([gcc, "-std=c11", "-trigraphs", "-Wall", "-Werror", "-o", str(binary), str(program)], check=True)
    lines = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split()
    assert [bytes.fromhex(x) for x in lines] == [t.encode() for t in HOSTILE]
    assert [bytes.fromhex(x) for x in lines] == [decode_c(c_string(t)[1:-1]) for t in HOSTILE]


def test_kconfig_and_csv_refuse_what_their_readers_cannot_carry() -> None:
    assert kconfig_texts("CONFIG_X=" + kconfig_string('a "b" \\c é'))[0] == ['a "b" \\c é'.encode()]
    for bad in ("line\nbreak", "tab\there"):
        with pytest.raises(ValueError, match="control"):
            kconfig_string(bad)
    assert csv_field("nvs") == "nvs"
    for bad in ("a,b", 'a"b', "a#b", " a"):
        with pytest.raises(ValueError):
            csv_field(bad)
    assert set(FILTERS) == {"c_string", "c_format", "kconfig_string", "dts_string", "yaml_string", "csv_field"}


# --- the fuzzer -------------------------------------------------------------------------------------------


def _admits(schema: dict[str, Any], text: str) -> bool:
    pattern = schema.get("pattern")
    return (schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", 1 << 30)
            and (pattern is None or re.fullmatch(pattern, text) is not None))  # fmt: skip


#: How a marked value may sit in a field's pattern: alone, as a path, as ``vendor,part``.
FORMS = ("{t}", "/{t}", "{t},{s}")
#: A free-text field: (``op``|``block``, kind, (``Model.field``, the way into the field's value)).
Key = tuple[str, str, tuple[str, ...]]


def _leaves(schema: dict[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    """The string leaves of one field's schema, with the way to them (``[]`` an item, ``*`` a mapping value);
    another model (a ``$ref``) is not entered: its fields are walked as its own."""
    if "$ref" in schema:
        return
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            yield from _leaves(sub, path)
    if schema.get("type") == "string" and "enum" not in schema and "const" not in schema:
        yield path, schema
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _leaves(schema["additionalProperties"], (*path, "*"))
    for sub in schema.get("patternProperties", {}).values():
        yield from _leaves(sub, (*path, "*"))
    if isinstance(schema.get("items"), dict):
        yield from _leaves(schema["items"], (*path, "[]"))


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """``root`` and every model its fields hold, however deep (recursive ones once)."""
    found: list[type[BaseModel]] = []
    todo: list[Any] = [root]
    while todo:
        kind = todo.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind in found:
                continue
            found.append(kind)
            todo.extend(f.annotation for f in kind.model_fields.values())
        else:
            todo.extend(typing.get_args(kind))
    return found


def _owners() -> list[tuple[str, str, type[BaseModel]]]:
    return [("op", s.kind, s.model) for s in registry.specs()] + [("block", s.name, s.model)
                                                                  for s in registry.sections()]


def free_text_fields() -> dict[Key, dict[str, Any]]:
    """(``op``|``block``, kind, (``Model.field``, way into it)) → the field's schema, for every string field of
    every model an op or block holds that admits a character beyond identifiers (walked from the registry:
    nothing is listed by hand)."""
    found: dict[Key, dict[str, Any]] = {}
    for where, kind, root in _owners():
        published = root.model_json_schema()  # every model it holds is one of its definitions, by name
        definitions = {**published.get("$defs", {}), root.__name__: published}
        for model in _models(root):
            properties = definitions[model.__name__].get("properties", {})
            for name, info in model.model_fields.items():
                for way, leaf in _leaves(properties[info.alias or name]):
                    if any(_admits(leaf, form.format(t=f"a{c}a", s="b")) for c in PIECES + (".", "-", " ")
                           for form in FORMS if not IDENTIFIER.fullmatch(c)):  # fmt: skip
                        found[(where, kind, (f"{model.__name__}.{name}", *way))] = leaf
    return found


class Marked:
    """A field's hostile value: ``head`` + the hostile pieces its pattern admits + ``tail``, markers unique to
    the field. ``pieces`` bounds which of :data:`PIECES` may be used (their first N): a field whose own
    grammar refuses some piece (``{`` opens an interpolation in a behaviour ``print``) is retried with fewer."""

    def __init__(self, schema: dict[str, Any], n: int, pieces: int = len(PIECES)):
        self.schema, self.n, self.pieces = schema, n, pieces
        self.head, self.tail = f"q{n:02d}x", f"z{n:02d}q"
        for used in (pieces, len(PIECES)):  # markers alone may not fit (`op.action` needs its '.')
            body = ""
            for piece in PIECES[:used]:
                if any(_admits(schema, form.format(t=self.head + body + piece + self.tail, s="b")) for form in FORMS):
                    body += piece
            self.core = self.head + body + self.tail
            admitted = [v for v in (form.format(t=self.core, s="b") for form in FORMS) if _admits(schema, v)]
            if admitted:
                self.value = admitted[0]
                return
        raise AssertionError(f"no marked value fits {schema}")

    def fewer(self) -> Marked | None:
        """The same field with half the pieces (None once there were none left to drop)."""
        return Marked(self.schema, self.n, self.pieces // 2) if self.pieces else None


def _put(value: Any, way: tuple[str, ...], text: str) -> tuple[Any, bool]:
    """``value`` with every string at ``way`` (``[]`` items, ``*`` mapping values) replaced by ``text``."""
    if not way:
        return (text, True) if isinstance(value, str) else (value, False)
    head, rest = way[0], way[1:]
    if head == "[]" and isinstance(value, list):
        done = [_put(item, rest, text) for item in value]
        return [v for v, _ in done], any(d for _, d in done)
    if head == "*" and isinstance(value, dict):
        done = {k: _put(v, rest, text) for k, v in value.items()}
        return {k: v for k, (v, _) in done.items()}, any(d for _, d in done.values())
    return value, False


def _instances(value: Any) -> Iterator[BaseModel]:
    if isinstance(value, BaseModel):
        yield value
        for name in type(value).model_fields:
            yield from _instances(getattr(value, name))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _instances(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _instances(item)


def _blocks(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], Callable[[dict[str, Any]], None]]]:
    """Each op and plan-level block of a document with a way to put it back."""
    found: list[tuple[str, str, dict[str, Any], Callable[[dict[str, Any]], None]]] = []
    for index, op in enumerate(doc.get("operations", [])):
        found.append(("op", op["op"], op, functools.partial(doc["operations"].__setitem__, index)))
    for section in registry.sections():
        if isinstance(doc.get(section.name), dict):
            found.append(("block", section.name, doc[section.name], functools.partial(doc.__setitem__, section.name)))
    return found


def _fill(where: str, kind: str, block: dict[str, Any], wanted: dict[Key, str]) -> tuple[dict[str, Any], set[Key]]:
    """``block`` with the fields in ``wanted`` set (validated as its model, the strings replaced in every
    instance of the field's model, dumped back as the plan states it); returns the keys that were set."""
    model = registry.spec(kind).model if where == "op" else next(s.model for s in registry.sections()
                                                                  if s.name == kind)  # fmt: skip
    parsed = model.model_validate(block)
    done: set[Key] = set()
    for instance in _instances(parsed):
        for key, text in wanted.items():
            owner, field_name = key[2][0].split(".")
            if key[:2] != (where, kind) or type(instance).__name__ != owner:
                continue
            original = getattr(instance, field_name)
            if owner == "PrintStep" and isinstance(original, str):
                # A print's interpolations stay: they are what reads the behaviour's variables.
                text = " ".join([text, *re.findall(r"\{[^{}]*\}", original)])
            value, changed = _put(original, key[2][1:], text)
            if changed:
                object.__setattr__(instance, field_name, value)
                instance.__pydantic_fields_set__.add(field_name)  # a default set here is dumped too
                done.add(key)
    return parsed.model_dump(mode="json", by_alias=True, exclude_unset=True), done


def _realizes(key: tuple[str, str, tuple[str, ...]], framework: str, target: Target) -> bool:
    where, kind, _ = key
    if where == "op":
        return realizes(framework, kind, target)
    return any(s.name == kind and s.realizes(framework, target) for s in registry.sections())


def _cell(doc: dict[str, Any], framework: str) -> str | None:
    """A target on which ``framework`` realizes every operation of ``doc`` and the plan passes as it is."""
    kinds = [o["op"] for o in doc.get("operations", [])]
    own = doc.get("target")
    for target_id in sorted(target_ids(), key=lambda t: t != own):
        if not all(realizes(framework, kind, load_target(target_id)) for kind in kinds):
            continue
        if run_plan(doc, target=target_id, framework=framework).status is Status.PASS:
            return target_id
    return None


@dataclass
class Case:
    """One document lowered on one framework with its free-text fields filled: what was set, what the
    obligations refused (a hostile value turned down with evidence naming it), and the result."""

    document: str
    framework: str
    target: str
    values: dict[Key, Marked]
    result: PlanResult
    refused: set[Key] = field(default_factory=set)


def _filled(doc: dict[str, Any], marks: dict[Key, Marked]) -> tuple[dict[str, Any], dict[Key, Marked]]:
    """``doc`` with every free-text field in ``marks`` that it sets filled with that mark."""
    filled = copy.deepcopy(doc)
    values: dict[Key, Marked] = {}
    for where, kind, block, put_back in _blocks(filled):
        chosen = {key: mark for key, mark in marks.items() if key[:2] == (where, kind)}
        if chosen:
            block, done = _fill(where, kind, block, {key: mark.value for key, mark in chosen.items()})
            put_back(block)
            values |= {key: chosen[key] for key in done}
    return filled, values


def fuzz_cases() -> list[Case]:
    """One lowering per document and framework that still has an untried (field, framework) pair, with every
    free-text field of the document filled. A value the plan's own rules refuse (evidence naming its marker:
    a hostname where the heap is empty, ``#`` in an MQTT will topic, a compatible with no binding facts, an
    expression that does not parse) is retried with half its pieces, down to the markers alone, then left as
    the document had it and counted as refused; a refusal naming no value (a budget the longer texts overran)
    shortens every filled value the same way."""
    fields = free_text_fields()
    marks = {key: Marked(schema, n) for n, (key, schema) in enumerate(sorted(fields.items()))}
    tried: set[tuple[Key, str]] = set()
    cases: list[Case] = []
    for path in DOCS:
        doc = yaml.safe_load(path.read_text())
        keys = {key for where, kind, _, _ in _blocks(doc) for key in fields if key[:2] == (where, kind)}
        for framework in FRAMEWORKS:
            if not {(key, framework) for key in keys} - tried:
                continue
            target = _cell(doc, framework)
            if target is None:
                continue
            chosen = dict(marks)
            keep: set[Key] = set()
            while True:
                plan, values = _filled(doc, chosen)
                result = run_plan(plan, target=target, framework=framework)
                text = json.dumps([e.model_dump(mode="json") for e in result.evidence])
                blamed = {key for key, mark in values.items() if mark.head in text}
                if not blamed and result.status is not Status.PASS:
                    # Refused without naming a value: a longer text overran a budget (a print in a 5 ms trigger
                    # no longer fits its period). Every filled value that still has pieces is shortened.
                    blamed = {key for key in values if chosen[key].pieces}
                if result.status is Status.PASS or not blamed:
                    break
                for key in blamed:
                    fewer = chosen[key].fewer()
                    if fewer is None:
                        keep.add(key)
                        del chosen[key]
                    else:
                        chosen[key] = fewer
            tried |= {(key, framework) for key in values | dict.fromkeys(keep)}
            cases.append(Case(path.name, framework, target, values, result, keep))
    return cases


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return fuzz_cases()


def test_every_free_text_field_is_fuzzed_on_every_framework_that_realizes_it(cases: list[Case]) -> None:
    """Coverage: every free-text field of the registry is filled by some document and lowered (or refused with
    evidence naming it) on each framework that realizes its op or block on some target."""
    fields = free_text_fields()
    assert len(fields) >= 25, sorted(fields)
    tried = {(key, case.framework) for case in cases for key in [*case.values, *case.refused]}
    targets = [load_target(t) for t in target_ids()]
    missing = [f"{key[1]}.{'.'.join(key[2])} on {framework}" for key in fields for framework in FRAMEWORKS
               if (key, framework) not in tried and any(_realizes(key, framework, t) for t in targets)]  # fmt: skip
    assert missing == [], f"free-text fields no document exercises: {missing}"
    lowered = {(key, case.framework) for case in cases for key in case.values}
    assert len(lowered) >= 40, sorted(lowered)


def test_hostile_plan_text_comes_back_byte_for_byte(cases: list[Case]) -> None:
    """Every hostile value must decode, in its file's context, to exactly the plan's text, and appear nowhere
    outside a string of a context that carries it (no comment, no code, no CMake, no README)."""
    failures: list[str] = []
    for case in cases:
        where = f"{case.document} on {case.target}/{case.framework}"
        if case.result.status is not Status.PASS or case.result.lowered is None:
            failures.append(f"{where}: {case.result.status.value} "
                            f"{[(e.code, e.message[:160]) for e in case.result.evidence]}")
            continue
        seen = dict.fromkeys(case.values, 0)
        for path, source in case.result.lowered.files.items():
            read = reader(path)
            texts, rest = read(source) if read else ([], source)
            # A value repeated in one expression (``s, sizeof(s) - 1``) counts once for the segment join below.
            texts = [t for i, t in enumerate(texts) if i == 0 or t != texts[i - 1]]
            for key, mark in case.values.items():
                name = f"{key[1]}.{'.'.join(key[2])}"
                for marker in (mark.head, mark.tail):
                    if marker in rest:
                        at = rest.index(marker)
                        failures.append(f"{where}: {path} holds {name} outside a string: {rest[at - 60:at + 60]!r}")
                for index, text in enumerate(texts):
                    if mark.head.encode() not in text:
                        continue
                    seen[key] += 1
                    got = text[text.index(mark.head.encode()):]
                    joined = b"/".join(texts[index:index + 8])  # a URI path written as its segments
                    joined = joined[joined.index(mark.head.encode()):]
                    if not (got.startswith(mark.core.encode()) or joined.startswith(mark.core.encode())):
                        failures.append(f"{where}: {path}: {name} reads back as {got[:len(mark.core) + 8]!r}, "
                                        f"the plan says {mark.core.encode()!r}")
        failures += [f"{where}: {key[1]}.{'.'.join(key[2])} reaches no generated string"
                     for key, count in seen.items() if count == 0]  # fmt: skip
    assert failures == [], "\n".join(failures)


def test_uart_tx_async_sends_every_byte_of_its_text() -> None:
    """The length handed to uart_tx / HAL_UART_Transmit_IT is the literal's length: the final newline too."""
    message = "50% of 100%% done \\ \"quoted\" ??="
    for target, framework, call in (("nrf52840", "zephyr", "uart_tx"), ("stm32f407", "hal", "HAL_UART_Transmit_IT")):
        plan = parse_plan({"target": target, "operations": [{"op": "uart_tx_async", "message": message}]})
        files = lower(plan, load_target(target), framework).files
        source = next(text for text in files.values() if call + "(" in text and "_text[] = " in text)
        literal = re.search(r'_text\[\] = ("(?:[^"\\]|\\.)*");', source)
        sent = re.search(call + r"\([^;]*?_text, (\d+)U?[,)]", source)
        assert literal is not None and sent is not None, source
        data = decode_c(literal.group(1)[1:-1])
        assert data == (message + "\r\n").encode() and int(sent.group(1)) == len(data), (data, sent.group(1))


def test_a_path_cannot_close_a_comment() -> None:
    """Issue 27: ``*/`` in an HTTP path once closed the comment it was pasted into and defined symbols."""
    path = "/a*/int/**/rac_pwned=1;/*"
    for target, framework in (("native_sim", "zephyr"),):
        plan = parse_plan({"target": target, "operations": [
            {"op": "http_request", "name": "web", "host": "example.com", "path": path}]})
        files = lower(plan, load_target(target), framework).files
        for name, source in files.items():
            if reader(name) is c_texts:
                texts, rest = c_texts(source)
                assert "rac_pwned" not in rest, name
        assert any(path.encode() in t for n, s in files.items() if reader(n) is c_texts for t in c_texts(s)[0])
