"""The ``mqtt_publish`` operation: an MQTT 3.1.1 client that publishes a value or message and subscribes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.ops.ble.sources import value_source
from rac_fw.domains.firmware.ops.net import common
from rac_fw.domains.firmware.ops.net.common import Host, Port, Retry
from rac_fw.domains.firmware.ops.wifi.wifi_station import credentials_kconfig, kconfig_name, plan_credentials
from rac_fw.domains.firmware.plan.base import Operation, PlanModel
from rac_fw.domains.firmware.plan.escape import c_string
from rac_fw.domains.firmware.plan.evidence import Path, measure, relax, remove, replace, violation
from rac_fw.domains.firmware.plan.fields import Message, Name
from rac_fw.domains.firmware.plan.rules import ExactlyOne, Given, Implies, Rule
from rac_fw.domains.firmware.plan.spec import OpSpec, Realization

if TYPE_CHECKING:
    from rac_fw.domains.firmware.lower.espidf import EspIdfBuild
    from rac_fw.domains.firmware.lower.zephyr.render import Builder as ZephyrBuilder
    from rac_fw.domains.firmware.plan.model import Plan

#: A topic name one may publish to: no wildcards (MQTT 3.1.1 §4.7.1), 1-128 characters.
TOPIC_PATTERN = r"^[A-Za-z0-9_./-]{1,128}$"
Topic = Annotated[
    str,
    StringConstraints(pattern=TOPIC_PATTERN),
    Field(description="Topic name: letters, digits, '_', '.', '/', '-' (no wildcards); 1-128 characters."),
]
#: The will topic admits the wildcard characters so that the will obligation, not the schema, answers a
#: filter given where a topic name belongs (with the topic names that would do); same length bound.
WillTopic = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9_./+#-]{1,128}$"),
    Field(description="Will topic name: as ``topic`` (a publish topic: no '+' or '#'); 1-128 characters."),
]
TopicFilter = Annotated[
    str,
    StringConstraints(pattern=r"^([A-Za-z0-9_.-]+|\+)(/([A-Za-z0-9_.-]+|\+))*(/#)?$|^#$"),
    Field(description="Subscription filter: topic levels, '+' for one level, a final '/#' for the rest."),
]
#: MQTT 3.1.1 §3.1.3.1: the Client Identifier is any UTF-8 string without U+0000; every server must accept 1-23
#: characters of [0-9a-zA-Z] and may accept others (Mosquitto, EMQX and HiveMQ accept '_', '-', ':' …). Printable
#: ASCII, as plan text everywhere; 1-128 characters.
ClientId = Annotated[
    str,
    StringConstraints(pattern=r"^[\x21-\x7e][\x20-\x7e]{0,127}$"),
    Field(description="Client identifier (printable ASCII, 1-128; brokers must accept 1-23 letters/digits)."),
]

#: MQTT 3.1.1 §2.2: fixed header (1 byte + up to 4 length bytes), topic length prefix, packet identifier.
PUBLISH_OVERHEAD = 5 + 2 + 2
#: Digits of an int32 value as text (sign included): the payload of a value publication.
VALUE_TEXT_BYTES = 11


class LastWill(PlanModel):
    """The message the broker publishes for the client when it loses it without a DISCONNECT
    (MQTT 3.1.1 §3.1.2.5): ``topic`` (a topic name, no wildcards), ``message``, ``qos`` 0-2 and
    ``retain``. It travels in the CONNECT packet, so it costs nothing at run time."""

    topic: WillTopic
    message: Message
    qos: int = Field(default=0, ge=0, le=255, description="0, 1 or 2 (MQTT 3.1.1 §3.1.2.6).")
    retain: bool = False


class MqttPublish(Operation):
    """Connect to an MQTT broker (MQTT 3.1.1 over TCP) and publish every ``interval_ms``.

    The payload is ``message`` or, with ``value``, the latest value of that operation as decimal text.
    ``qos`` is 0 (at most once), 1 (at least once) or 2 (exactly once); ``retain`` asks the broker to
    keep the last message. ``subscribe`` topics are received at QoS 0 and logged with their size.
    ``keep_alive_s`` is the keep-alive the client promises (0: none). The user name and password are
    credentials referenced by name (Kconfig strings), never text in the plan. ``buffer_bytes`` bounds
    the client's transmit and receive buffers; the largest PUBLISH must fit. ``last_will`` is the
    message the broker publishes in the client's name when the connection dies uncleanly.
    """

    op: Literal["mqtt_publish"]
    broker: Host
    port: Port = 1883
    client_id: ClientId = "racfw"
    topic: Topic
    message: Message | None = None
    value: Name | None = None
    qos: int = Field(default=0, ge=0, le=255, description="0, 1 or 2 (MQTT 3.1.1 §4.3).")
    retain: bool = False
    keep_alive_s: int = Field(default=60, ge=0, le=65535)
    interval_ms: int = Field(default=10_000, ge=100, le=3_600_000)
    subscribe: list[TopicFilter] = Field(default_factory=list, max_length=4)
    username_credential: Name | None = None
    password_credential: Name | None = None
    buffer_bytes: int = Field(default=256, ge=64, le=16384)
    retry: Retry = Field(default_factory=Retry)
    last_will: LastWill | None = None

    rules: ClassVar[tuple[Rule, ...]] = (
        ExactlyOne("publish either a message or an operation's value (exactly one of message, value)",
                   ("message", "value")),
        Implies("MQTT 3.1.1 §3.1.2.9: a password needs a user name (username_credential)",
                Given("password_credential"), Given("username_credential")),
    )  # fmt: skip

    def payload_bytes(self) -> int:
        return len(self.message) if self.message is not None else VALUE_TEXT_BYTES


def _qos(plan: Plan, target: Target, framework: str, index: int, op: MqttPublish) -> list[Evidence]:
    """The publication's QoS and the will's (MQTT 3.1.1 §4.3, §3.1.2.6) are each 0, 1 or 2."""

    levels: list[tuple[Path, int, str]] = [(["operations", index, "qos"], op.qos, op.topic)]
    if op.last_will is not None:
        levels.append((["operations", index, "last_will", "qos"], op.last_will.qos, op.last_will.topic))
    meaning = {2: "exactly once", 1: "at least once", 0: "at most once"}
    return [
        violation(
            "E_NET_MQTT_QOS",
            f"MQTT QoS {qos} does not exist: MQTT 3.1.1 §4.3 defines QoS 0, 1 and 2",
            path,
            [op.name or op.op, topic],
            [measure("qos", qos, "level"), measure("max", 2, "level")],
            [relax(f"publish at QoS {q} ({meaning[q]})", replace(path, q)) for q in (2, 1, 0)],
        )
        for path, qos, topic in levels
        if qos > 2
    ]


def _will_topic(plan: Plan, target: Target, framework: str, index: int, op: MqttPublish) -> list[Evidence]:
    """The broker publishes the will to its topic, so it must be a topic name: a filter's '+' or '#'
    (MQTT 3.1.1 §4.7.1) names no single topic and the broker would refuse the CONNECT."""

    will = op.last_will
    if will is None or re.fullmatch(TOPIC_PATTERN, will.topic):
        return []
    path: Path = ["operations", index, "last_will", "topic"]
    levels = [level for level in will.topic.split("/") if level and "+" not in level and "#" not in level]
    named = "/".join(levels)
    relaxations = [relax(f"publish the will to {named!r} (the filter without its wildcard levels)",
                         replace(path, named))] if named and re.fullmatch(TOPIC_PATTERN, named) else []  # fmt: skip
    if op.topic != named:
        relaxations.append(relax(f"publish the will to the client's own topic {op.topic!r}", replace(path, op.topic)))
    relaxations.append(relax("connect without a last will", remove(["operations", index, "last_will"])))
    return [
        violation(
            "E_NET_MQTT_WILL",
            f"the will topic {will.topic!r} is a subscription filter: a will is published to one topic name, "
            "without '+' or '#' (MQTT 3.1.1 §3.1.3.3, §4.7.1)",
            path,
            [op.name or op.op, will.topic],
            [measure("wildcards", sum(will.topic.count(c) for c in "+#"), "characters")],
            relaxations,
        )
    ]


def _buffer(plan: Plan, target: Target, framework: str, index: int, op: MqttPublish) -> list[Evidence]:

    found: list[Evidence] = []
    path: Path = ["operations", index]
    packet = PUBLISH_OVERHEAD + len(op.topic) + op.payload_bytes()
    if packet > op.buffer_bytes:
        found.append(
            violation(
                "E_NET_BUFFER",
                f"the PUBLISH to {op.topic!r} is {packet} bytes ({len(op.topic)}-byte topic, {op.payload_bytes()}-byte "
                f"payload, {PUBLISH_OVERHEAD} header) but the client buffer holds {op.buffer_bytes}",
                [*path, "buffer_bytes"],
                [op.name or op.op, op.topic],
                [measure("packet", packet, "bytes"), measure("buffer", op.buffer_bytes, "bytes")],
                [relax(f"give the client {packet} bytes of buffer", replace([*path, "buffer_bytes"], packet))],
            )
        )
    return found


def _keep_alive(plan: Plan, target: Target, framework: str, index: int, op: MqttPublish) -> list[Evidence]:
    """The client must talk to the broker within 1.5 keep-alive periods (MQTT 3.1.1 §3.1.2.10), and it
    only runs once per ``interval_ms``."""

    if op.keep_alive_s == 0 or op.interval_ms <= op.keep_alive_s * 1000:
        return []
    path: Path = ["operations", index, "keep_alive_s"]
    needed = -(-op.interval_ms // 1000)
    return [
        violation(
            "E_NET_TIMEOUT",
            f"the client runs every {op.interval_ms} ms but promised the broker a {op.keep_alive_s} s keep-alive: "
            "the broker would drop it between publications",
            path,
            [op.name or op.op],
            [measure("interval", op.interval_ms, "ms"), measure("keep_alive", op.keep_alive_s * 1000, "ms")],
            [relax(f"promise a {needed} s keep-alive", replace(path, needed))],
        )
    ]


def _value(plan: Plan, target: Target, framework: str, index: int, op: MqttPublish) -> list[Evidence]:
    return value_source(plan, op.value, ["operations", index, "value"])


def _credentials(op: MqttPublish) -> list[str]:
    return [c for c in (op.username_credential, op.password_credential) if c is not None]


def _view(b: Any, index: int, op: MqttPublish) -> dict[str, Any]:
    return {
        "broker": c_string(op.broker),
        "host": c_string(op.broker),
        "literal": common.is_ipv4(op.broker),
        "port": op.port,
        "port_text": c_string(str(op.port)),
        "uri": c_string(f"mqtt://{op.broker}:{op.port}"),
        "client_id": c_string(op.client_id),
        "topic": c_string(op.topic),
        "message": c_string(op.message) if op.message is not None else None,
        "subscribe": [c_string(t) for t in op.subscribe],
        "user": f"CONFIG_{kconfig_name(op.username_credential)}" if op.username_credential else None,
        "password": f"CONFIG_{kconfig_name(op.password_credential)}" if op.password_credential else None,
        "buffer": op.buffer_bytes,
        "timeout_ms": 5000,
        "retry": op.retry,
        "will": _will_view(op.last_will),
    }


def _will_view(will: LastWill | None) -> dict[str, Any] | None:
    if will is None:
        return None
    return {"topic": c_string(will.topic), "message": c_string(will.message), "qos": will.qos,
            "retain": will.retain}  # fmt: skip


def _zephyr(b: ZephyrBuilder, index: int, op: MqttPublish) -> dict[str, Any]:
    common.zephyr_base(b, index)
    b.app.need("net", "CONFIG_MQTT_LIB")
    b.app.includes.add("zephyr/net/mqtt.h")
    if _credentials(op):
        b.app.files["Kconfig"] = 'source "Kconfig.zephyr"\n\n' + credentials_kconfig(
            plan_credentials(b.plan), "rac-fw credentials"
        )
    view = _view(b, index, op) | {"setup": False, "step": {"period_ms": op.interval_ms, "count": None}}
    view["value_id"] = b.op_id(op.value) if op.value else None
    return view


def _espidf(b: EspIdfBuild, index: int, op: MqttPublish) -> dict[str, Any]:
    b.requires.add("mqtt")
    if _credentials(op):
        b.files["main/Kconfig.projbuild"] = credentials_kconfig(plan_credentials(b.plan), "rac-fw credentials")
    return _view(b, index, op) | common.espidf_base(b) | {"task": b.thread(None, b.symbol(index, op))}


SPEC = OpSpec(
    model=MqttPublish,
    family="net",
    realizations={
        "zephyr": Realization(template="net", view=_zephyr, available=common.available("zephyr"),
            why_unavailable=common.why_no_interface("zephyr"),
        ),
        "espidf": Realization(template="net", view=_espidf, available=common.available("espidf"),
            why_unavailable=common.why_no_interface("espidf"),
        ),
    },
    checks=(*common.CHECKS, _qos, _will_topic, _buffer, _keep_alive, _value),
    codes=(*common.CODES, "E_NET_MQTT_QOS", "E_NET_MQTT_WILL", "E_NET_BUFFER"),
)
