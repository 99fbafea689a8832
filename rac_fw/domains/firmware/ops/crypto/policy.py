"""The obligations every crypto operation shares: the backend computes the algorithm, the key exists,
has a valid size for its type and a policy that allows this use, and the algorithm is not a weak one.

The crypto op modules list these in their ``checks``; the facts (``facts.crypto``) say which backend a
framework uses on the chip and what it computes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rac_fw.contract import Evidence
from rac_fw.domains.firmware.facts.crypto import KEY_BITS, backend
from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.plan import evidence as ev

if TYPE_CHECKING:
    from rac_fw.domains.firmware.plan.model import Plan
    from rac_fw.domains.firmware.plan.resources import Key

UNSUPPORTED = "E_CRYPTO_UNSUPPORTED"
KEY = "E_CRYPTO_KEY"
KEY_SIZE = "E_CRYPTO_KEY_SIZE"
KEY_USAGE = "E_CRYPTO_KEY_USAGE"
WEAK = "E_CRYPTO_WEAK"
BLOCK = "E_CRYPTO_BLOCK"
STACK = "E_CRYPTO_STACK"

#: Stack the calling thread needs for mbedTLS/PSA operations (key schedules, hash and HMAC contexts on
#: the stack): the nRF Connect SDK crypto samples set CONFIG_MAIN_STACK_SIZE=4096 for the same calls.
STACK_BYTES = 4096

#: The codes the crypto checks emit that the current facts can produce (every backend here computes every
#: algorithm the ops offer, so UNSUPPORTED waits for a pack whose backend lacks one).
CODES = (KEY, KEY_SIZE, KEY_USAGE, WEAK, BLOCK, STACK)

#: Algorithms refused for security uses and the choice to make instead.
SAFER = {"md5": "sha256", "sha1": "sha256", "aes-ecb": "aes-gcm"}


def key(plan: Plan, name: str) -> Key | None:
    return next((k for k in plan.resources.keys if k.name == name), None)


def supported(target: Target, framework: str, index: int, algorithm: str, field: str) -> list[Evidence]:
    """E_CRYPTO_UNSUPPORTED when ``framework``'s backend on ``target`` does not compute ``algorithm``."""
    found = backend(target, framework)
    if found is not None and algorithm in found.algorithms:
        return []
    others = [
        f for f in target.frameworks if f != framework and (b := backend(target, f)) and algorithm in b.algorithms
    ]
    offered = ", ".join(found.algorithms) if found else "nothing"
    return [ev.violation(
        UNSUPPORTED,
        f"{algorithm} is not computed by {found.name if found else framework} on {target.id} (it offers: {offered})",
        ["operations", index, field], [algorithm, target.id, framework],
        relaxations=[ev.relax(f"use framework {f}", ev.replace(["framework"], f)) for f in others],
    )]  # fmt: skip


def key_fits(plan: Plan, index: int, name: str, kind: str, uses: tuple[str, ...]) -> list[Evidence]:
    """The key exists, is a ``kind`` key of a valid size, and its policy allows every one of ``uses``."""
    where: ev.Path = ["operations", index, "key"]
    found = key(plan, name)
    if found is None or found.type != kind:
        fitting = [k.name for k in plan.resources.keys if k.type == kind]
        what = "no key in resources.keys" if found is None else f"an {found.type} key, not an {kind} key"
        options = [ev.relax(f"use key {k}", ev.replace(where, k)) for k in fitting]
        fresh = name if found is None else f"{name[:26]}_{kind}"
        if fresh not in {k.name for k in plan.resources.keys}:
            new = {"name": fresh, "type": kind, "bits": KEY_BITS[kind][0], "usage": list(uses)}
            steps = [ev.add(["resources", "keys", -1], new)]
            if fresh != name:
                steps.append(ev.replace(where, fresh))
            options.append(ev.relax(f"declare {kind} key {fresh} ({new['bits']} bits)", *steps))
        return [ev.violation(KEY, f"{name} is {what}", where, [name], relaxations=options)]
    position = plan.resources.keys.index(found)
    at: ev.Path = ["resources", "keys", position]
    problems: list[Evidence] = []
    valid = KEY_BITS[kind]
    if found.bits not in valid:
        nearest = sorted(valid, key=lambda b: (abs(b - found.bits), b))
        problems.append(ev.violation(
            KEY_SIZE,
            f"{kind} key {name} has {found.bits} bits; valid {kind} key sizes: {', '.join(map(str, valid))} bits",
            [*at, "bits"], [name, kind],
            [ev.measure("key_bits", found.bits, "bits"), ev.measure("nearest_valid", nearest[0], "bits")],
            [ev.relax(f"make {name} a {b}-bit key", ev.replace([*at, "bits"], b)) for b in nearest],
        ))  # fmt: skip
    missing = [u for u in uses if u not in found.usage]
    if missing:
        problems.append(ev.violation(
            KEY_USAGE,
            f"key {name}'s policy allows {', '.join(found.usage)}; operations[{index}] needs {', '.join(missing)}",
            [*at, "usage"], [name, *missing],
            relaxations=[ev.relax(f"allow {', '.join(missing)} on {name}",
                                  ev.replace([*at, "usage"], [*found.usage, *missing]))],
        ))  # fmt: skip
    return problems


def stack(plan: Plan, index: int) -> list[Evidence]:
    """E_CRYPTO_STACK, once per plan (at its first crypto operation), when the main stack is too small."""
    from rac_fw.domains.firmware.plan.registry import spec

    first = next(i for i, o in enumerate(plan.operations) if spec(o.op).family == "crypto")
    if index != first or plan.stack_bytes >= STACK_BYTES:
        return []
    return [ev.violation(
        STACK, f"crypto operations run on the main thread, whose {plan.stack_bytes}-byte stack is below the "
        f"{STACK_BYTES} bytes mbedTLS/PSA calls need", ["stack_bytes"], ["stack_bytes", plan.operations[index].op],
        [ev.measure("stack", plan.stack_bytes, "bytes"), ev.measure("needed", STACK_BYTES, "bytes")],
        [ev.relax(f"give the main thread {STACK_BYTES} bytes of stack", ev.replace(["stack_bytes"], STACK_BYTES))],
    )]  # fmt: skip


def strong(index: int, algorithm: str, field: str, value: str) -> list[Evidence]:
    """E_CRYPTO_WEAK for an algorithm that is broken for security uses, naming the safer choice."""
    if algorithm not in SAFER:
        return []
    return [ev.violation(
        WEAK, f"{algorithm} is not acceptable for security uses; use {SAFER[algorithm]}",
        ["operations", index, field], [algorithm, SAFER[algorithm]],
        relaxations=[ev.relax(f"use {SAFER[algorithm]}", ev.replace(["operations", index, field], value))],
    )]  # fmt: skip


def psa_config(b: Any, *wanted: str) -> None:
    """Zephyr: enable mbedTLS's PSA Crypto core, the entropy source it seeds from and ``wanted`` PSA_WANT_* symbols."""
    b.app.includes.add("psa/crypto.h")
    b.app.need("crypto", "CONFIG_MBEDTLS", "CONFIG_MBEDTLS_PSA_CRYPTO_C", "CONFIG_ENTROPY_GENERATOR",
               "CONFIG_MBEDTLS_ENABLE_HEAP", *(f"CONFIG_PSA_WANT_{w}" for w in wanted))  # fmt: skip
    b.app.setting("crypto", "CONFIG_MBEDTLS_HEAP_SIZE", "8192")


def idf_headers(b: Any, *headers: str) -> list[str]:
    """ESP-IDF: the headers this operation's globals must include that no earlier operation's did (the
    project skeleton has no include list of its own; each header appears once)."""
    seen = {h for view in b.views for h in view.get("headers", ())}
    return [h for h in headers if h not in seen]


def has_backend(framework: str) -> Any:
    def available(target: Target) -> bool:
        return backend(target, framework) is not None

    return available
