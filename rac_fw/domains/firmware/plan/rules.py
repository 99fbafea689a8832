"""Cross-field rules of plan models, each stated once for both readers: the schema and the parse.

"Give exactly one of period_ms or period_us" used to be a pydantic validator the JSON Schema knew nothing
of, so an agent (or a schema-driven generator) could write a document the schema allows and the parse
refuses. A :class:`Rule` is now the one statement of such a constraint: ``schema(model)`` is the JSON Schema
fragment the model's published schema carries (``allOf``), ``holds(instance)`` is what the parse checks, and
``message`` is the refusal. A model lists its rules in ``rules`` (:class:`~.base.PlanModel` runs them and
publishes them).

Conditions are stated positively both ways (``given`` and ``absent``, a value in a set and in its complement),
so the schema needs no ``not``: a field is *given* when it is set to something other than its empty value
(``None``, ``False``, an empty list), and absent otherwise; an omitted field holds its default.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

Schema = dict[str, Any]


def _empty(value: Any) -> bool:
    return value is None or value is False or (isinstance(value, list | tuple) and not value)


def _kind(model: type[BaseModel], name: str) -> str:
    """``bool``, ``list`` or ``value``: what "given" means for the field (true, non-empty, not null)."""
    annotation = model.model_fields[name].annotation
    options = get_args(annotation) if get_origin(annotation) not in (list, Literal) else (annotation,)
    if bool in options or annotation is bool:
        return "bool"
    if any(get_origin(o) in (list, tuple) for o in options):
        return "list"
    return "value"


def _default(model: type[BaseModel], name: str) -> Any:
    return model.model_fields[name].get_default(call_default_factory=True)


class Condition(ABC):
    """A predicate over one model's fields, with its schema and its complement's schema."""

    @abstractmethod
    def holds(self, instance: BaseModel) -> bool: ...

    @abstractmethod
    def schema(self, model: type[BaseModel], negated: bool = False) -> Schema: ...


@dataclass(frozen=True, init=False)
class Given(Condition):
    """Every one of ``fields`` is given (a dotted name reaches into a nested model: ``manufacturer.value``)."""

    fields: tuple[str, ...]

    def __init__(self, *fields: str) -> None:
        object.__setattr__(self, "fields", fields)

    def holds(self, instance: BaseModel) -> bool:
        return all(not _empty(_value(instance, f)) for f in self.fields)

    def schema(self, model: type[BaseModel], negated: bool = False) -> Schema:
        parts = [_given(model, f, not negated) for f in self.fields]
        return {"anyOf": parts} if negated and len(parts) > 1 else _conjoin(parts)  # negated: some one absent


@dataclass(frozen=True, init=False)
class Absent(Given):
    """None of ``fields`` is given."""

    def holds(self, instance: BaseModel) -> bool:
        return all(_empty(_value(instance, f)) for f in self.fields)

    def schema(self, model: type[BaseModel], negated: bool = False) -> Schema:
        parts = [_given(model, f, negated) for f in self.fields]
        return {"anyOf": parts} if negated and len(parts) > 1 else _conjoin(parts)  # negated: some one given


def _value(instance: BaseModel | None, dotted: str) -> Any:
    for name in dotted.split("."):
        instance = getattr(instance, name, None)
    return instance


def _nested(model: type[BaseModel], name: str) -> type[BaseModel]:
    annotation = model.model_fields[name].annotation
    return next(o for o in (annotation, *get_args(annotation)) if isinstance(o, type) and issubclass(o, BaseModel))


def _given(model: type[BaseModel], name: str, given: bool) -> Schema:
    head, _, rest = name.partition(".")
    if rest:  # the nested object given with its field given, or the nested field absent (the object too, then)
        inner = _given(_nested(model, head), rest, given)
        if given:
            return {"properties": {head: {"type": "object", **inner}}, "required": [head]}
        return {"properties": {head: inner}}
    kind, default_empty = _kind(model, name), _empty(_default(model, name))
    table: dict[tuple[str, bool], Schema] = {
        ("bool", True): {"const": True}, ("bool", False): {"const": False},
        ("list", True): {"minItems": 1}, ("list", False): {"maxItems": 0},
        ("value", True): {"not": {"type": "null"}}, ("value", False): {"type": "null"},
    }  # fmt: skip
    value = table[(kind, given)]
    required = given == default_empty  # an omitted field holds its default: required when that is the other case
    return {"properties": {name: value}, **({"required": [name]} if required else {})}


@dataclass(frozen=True)
class OneOf(Condition):
    """``field``'s value (or, for a list, one of its items) is one of ``values``."""

    field: str
    values: tuple[Any, ...]

    def holds(self, instance: BaseModel) -> bool:
        value = getattr(instance, self.field)
        items = value if isinstance(value, list | tuple) else [value]
        return any(v in self.values for v in items)

    def schema(self, model: type[BaseModel], negated: bool = False) -> Schema:
        annotation = model.model_fields[self.field].annotation
        listed = get_origin(annotation) in (list, tuple)
        member = get_args(annotation)[0] if listed else annotation
        every = [v for o in (get_args(member) if get_origin(member) is not Literal else (member,)) for v in get_args(o)]
        chosen = [v for v in every if (v in self.values) != negated]
        value: Schema = (
            {"contains": {"enum": chosen}}
            if listed and not negated
            else ({"items": {"enum": chosen}} if listed else {"enum": chosen})
        )
        default_holds = self._default_holds(model)
        required = default_holds == negated
        return {"properties": {self.field: value}, **({"required": [self.field]} if required else {})}

    def _default_holds(self, model: type[BaseModel]) -> bool:
        default = _default(model, self.field)
        items = default if isinstance(default, list | tuple) else [default]
        return any(v in self.values for v in items)


@dataclass(frozen=True)
class Matches(Condition):
    """The text ``field`` matches the regular expression ``pattern`` (anchored where it must be)."""

    field: str
    pattern: str

    def holds(self, instance: BaseModel) -> bool:
        value = getattr(instance, self.field)
        return isinstance(value, str) and re.search(self.pattern, value) is not None

    def schema(self, model: type[BaseModel], negated: bool = False) -> Schema:
        if negated:
            return {"properties": {self.field: {"not": {"pattern": self.pattern}}}}
        return {"properties": {self.field: {"pattern": self.pattern}}, "required": [self.field]}


def _conjoin(parts: Sequence[Schema]) -> Schema:
    """One schema requiring every part (properties merged where they do not collide, else ``allOf``)."""
    out: Schema = {}
    for part in parts:
        props, required = part.get("properties", {}), part.get("required", [])
        if set(props) & set(out.get("properties", {})) or set(part) - {"properties", "required"}:
            return {"allOf": list(parts)}
        out.setdefault("properties", {}).update(props)
        if required:
            out["required"] = [*out.get("required", []), *required]
    return out


@dataclass(frozen=True)
class Rule(ABC):
    """A constraint over fields of one model: the parse refuses with ``message`` what the schema refuses."""

    message: str

    @abstractmethod
    def holds(self, instance: BaseModel) -> bool: ...

    @abstractmethod
    def schema(self, model: type[BaseModel]) -> Schema: ...


@dataclass(frozen=True)
class ExactlyOne(Rule):
    """Exactly one of ``fields`` is given."""

    fields: tuple[str, ...]

    def holds(self, instance: BaseModel) -> bool:
        return sum(Given(f).holds(instance) for f in self.fields) == 1

    def schema(self, model: type[BaseModel]) -> Schema:
        return {"oneOf": [Given(f).schema(model) for f in self.fields]}


@dataclass(frozen=True)
class AnyOf(Rule):
    """At least one of ``fields`` is given."""

    fields: tuple[str, ...]

    def holds(self, instance: BaseModel) -> bool:
        return any(Given(f).holds(instance) for f in self.fields)

    def schema(self, model: type[BaseModel]) -> Schema:
        return {"anyOf": [Given(f).schema(model) for f in self.fields]}


@dataclass(frozen=True)
class Implies(Rule):
    """When ``when`` holds, ``then`` holds (``iff``: and only then)."""

    when: Condition
    then: Condition
    iff: bool = False

    def holds(self, instance: BaseModel) -> bool:
        when, then = self.when.holds(instance), self.then.holds(instance)
        return when == then if self.iff else (not when or then)

    def schema(self, model: type[BaseModel]) -> Schema:
        if self.iff:
            return {
                "anyOf": [
                    _conjoin([self.when.schema(model), self.then.schema(model)]),
                    _conjoin([self.when.schema(model, True), self.then.schema(model, True)]),
                ]
            }
        return {"anyOf": [self.when.schema(model, True), self.then.schema(model)]}


@dataclass(frozen=True)
class Never(Rule):
    """``when`` never holds."""

    when: Condition

    def holds(self, instance: BaseModel) -> bool:
        return not self.when.holds(instance)

    def schema(self, model: type[BaseModel]) -> Schema:
        return self.when.schema(model, negated=True)


@dataclass(frozen=True)
class Unique(Rule):
    """No item of the list ``field`` is listed twice."""

    field: str

    def holds(self, instance: BaseModel) -> bool:
        items = getattr(instance, self.field)
        return len(set(items)) == len(items)

    def schema(self, model: type[BaseModel]) -> Schema:
        return {"properties": {self.field: {"uniqueItems": True}}}


def add_rules(schema: Schema, model: type[BaseModel]) -> None:
    """Publish ``model.rules`` in its JSON Schema (the ``json_schema_extra`` of every plan model)."""
    rules: Sequence[Rule] = getattr(model, "rules", ())
    parts = [r.schema(model) for r in rules]
    if len(parts) == 1 and not set(parts[0]) & set(schema):
        schema.update(parts[0])
    elif parts:
        schema["allOf"] = [*schema.get("allOf", []), *parts]


def refusal(instance: BaseModel) -> str | None:
    """The message of the first rule of ``instance``'s model it breaks, or None."""
    rules: Sequence[Rule] = getattr(type(instance), "rules", ())
    return next((r.message for r in rules if not r.holds(instance)), None)
