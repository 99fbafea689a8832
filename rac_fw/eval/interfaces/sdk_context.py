"""Which SDK headers a source-writing baseline is shown: chosen from the task *statement*, never the answer.

The baselines (``rawsdk``, ``signatures``, ``sourcelite``) get excerpts of the SDK the verifier harvested
(``verify/sdk/<framework>/api*.json``). Which headers is decided here from what an engineer handed the
requirement would have: the requirement text, the framework and the target's facts. Never from the
reference plan or its lowering — that would hand the baseline part of the answer. This module therefore
takes no task object and imports nothing that can produce one (no pipeline, no lowering, no task suite;
``tests/test_eval_context.py`` runs it with those imports blocked). The selection:

1. the APIs the statement names (``memcmp``, ``HAL_UART_Transmit``): their headers first;
2. the framework's base headers (kernel, logging, the HAL umbrella) — what every application includes;
3. retrieval over the catalog: each header is a document of the words in its path and its API names
   (``esp_async_memcpy`` → esp, async, memcpy); the statement's words, widened by a small vocabulary of
   the field's synonyms (watchdog → wdt, iwdg; copy → memcpy, dma), are scored by inverse document
   frequency; the best ``HEADERS`` headers are kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import cache

from rac_fw.domains.firmware.facts.model import Target
from rac_fw.domains.firmware.verify.sdk import Catalog

#: Headers retrieved by score (besides the named APIs' headers and the base headers).
HEADERS = 6

#: What every application of a framework includes (the retrieval adds the task's own): the kernel, the
#: console, utility macros; for the HAL the umbrella, clocks and power (every HAL main configures them).
BASE = {
    "zephyr": ("zephyr/kernel.h", "zephyr/device.h", "zephyr/sys/printk.h", "zephyr/devicetree.h",
               "zephyr/sys/util.h", "zephyr/sys/atomic.h"),
    "espidf": ("freertos/FreeRTOS.h", "freertos/task.h", "freertos/projdefs.h", "esp_log.h", "esp_err.h",
               "esp_timer.h"),
    "hal": ("stm32f4xx_hal.h", "stm32h7xx_hal.h", "stm32f4xx_hal_cortex.h", "stm32h7xx_hal_cortex.h",
            "stm32f4xx_hal_gpio.h", "stm32h7xx_hal_gpio.h", "stm32f4xx_hal_uart.h", "stm32h7xx_hal_uart.h",
            "stm32f4xx_hal_rcc.h", "stm32h7xx_hal_rcc.h", "stm32f4xx_hal_pwr.h", "stm32h7xx_hal_pwr.h",
            "stm32h7xx_hal_pwr_ex.h", "cmsis_gcc.h", "m-profile/armv7m_cachel1.h"),
}

#: A header declaring more names than this is shown narrowed: its functions, and the macros whose words
#: meet the statement's (the H7 RCC header alone declares 2,281 names, mostly per-peripheral clock macros).
BIG_HEADER = 150
#: Words too common in macro names to say what a macro is about.
_GENERIC = frozenset({"hal", "rcc", "clk", "enable", "disable", "is", "get", "set", "it", "ex", "config", "reset",
                      "force", "release", "sleep", "lp", "flag", "source", "stm32", "ll", "enabled", "disabled"})

#: The field's vocabulary: a word of a requirement → words SDK headers and APIs use for it.
SYNONYMS = {
    "copy": ("memcpy", "dma"), "transfer": ("dma",), "memory": ("mem",), "watchdog": ("wdt", "wdg", "iwdg", "twdt"),
    "timer": ("tim", "gptimer", "counter", "timer"), "periodic": ("timer", "tim"), "tick": ("timer", "tim"),
    "delay": ("sleep", "timer"), "analog": ("adc",), "voltage": ("adc",), "millivolts": ("adc",), "mv": ("adc",),
    "sample": ("adc", "sensor"), "flash": ("flash", "nvs", "partition"), "file": ("fs", "littlefs", "vfs"),
    "record": ("nvs", "settings"), "settings": ("settings", "nvs"), "button": ("gpio", "input"),
    "led": ("gpio", "led", "pwm"), "blink": ("gpio",), "pin": ("gpio",), "console": ("uart", "printk", "log"),
    "print": ("printk", "printf", "log", "uart"), "line": ("uart",), "serial": ("uart", "usart"),
    "uart": ("uart", "usart"), "thread": ("thread", "task", "kernel"), "queue": ("msgq", "queue"),
    "interrupt": ("irq", "isr", "nvic"), "sensor": ("sensor", "i2c"), "temperature": ("sensor", "temp"),
    "bluetooth": ("bt", "bluetooth", "gap", "gatt", "ble"), "ble": ("bt", "bluetooth", "gap", "gatt"),
    "sleep": ("pm", "sleep", "poweroff"), "power": ("pm", "pwr"), "random": ("rng", "random", "entropy"),
    "hash": ("sha", "hash", "md"), "digest": ("sha", "hash"), "encrypt": ("aes", "cipher", "psa"),
    "wifi": ("wifi", "wlan", "netif", "event"), "network": ("net", "netif", "socket", "event", "ip"),
    "socket": ("socket", "net"),
    "pwm": ("pwm", "ledc", "tim"), "fade": ("pwm", "ledc"), "duty": ("pwm", "ledc"), "i2c": ("i2c",),
    "spi": ("spi",), "can": ("can", "twai"), "mutex": ("mutex", "semphr"), "semaphore": ("sem", "semphr"),
    "cache": ("cache", "scb"), "clock": ("clock", "rcc"), "image": ("dfu", "ota", "mcuboot", "boot"),
    "update": ("ota", "dfu"), "heap": ("heap", "malloc", "caps"),
}

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def words(text: str) -> list[str]:
    """Lower-case words (identifiers split at ``_`` and case changes) of a text, a path or an API name."""
    pieces = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).replace("_", " ")
    return [w.lower() for w in _WORD.findall(pieces) if len(w) >= 2]


@cache
def _documents(catalog: Catalog) -> tuple[dict[str, frozenset[str]], dict[str, list[str]], dict[str, float]]:
    """Per header: its words, its API names; and each word's inverse document frequency."""
    names: dict[str, list[str]] = {}
    for name, (header, _kind) in catalog.entries.items():
        names.setdefault(header, []).append(name)
    docs = {h: frozenset(words(h.rsplit(".", 1)[0]) + [w for n in ns for w in words(n)]) for h, ns in names.items()}
    frequency = Counter(w for doc in docs.values() for w in doc)
    idf = {w: math.log(1 + len(docs) / n) for w, n in frequency.items()}
    return docs, {h: sorted(ns) for h, ns in names.items()}, idf


def _query(requirement: str) -> dict[str, float]:
    """The statement's words with weight 1, their synonyms with weight 0.5."""
    query: dict[str, float] = {}
    for word in words(requirement):
        query[word] = 1.0
        for synonym in SYNONYMS.get(word, ()):
            query.setdefault(synonym, 0.5)
    return query


def select_headers(requirement: str, framework: str, target: Target | None, catalog: Catalog,
                   limit: int = HEADERS) -> dict[str, list[str]]:
    """Header → the catalog names it declares, for the headers a baseline is shown (see the module docstring).

    ``target`` contributes what its facts show an engineer (peripheral names the statement uses, a D-cache
    where DMA is involved); ``catalog`` is the framework's harvested catalog for the target.
    """
    docs, names, idf = _documents(catalog)
    named = [n for n in _IDENTIFIER.findall(requirement) if n in catalog.entries]
    chosen = list(dict.fromkeys(catalog.entries[n][0] for n in named))
    chosen += [h for h in BASE.get(framework, ()) if h in names and h not in chosen]
    query = _query(requirement)
    if target is not None:
        said = set(words(requirement))
        for peripheral in (p.lower() for p in target.peripherals if p.lower() in said):
            query.setdefault(peripheral, 1.0)
        if target.core.dcache is not None and {"dma", "buffer"} & said:
            query.setdefault("cache", 0.5)  # the facts show a D-cache: DMA buffers need its maintenance
    scores = {h: sum(weight * idf.get(w, 0.0) for w, weight in query.items() if w in doc)
              for h, doc in docs.items() if h not in chosen}
    ranked = sorted((h for h, score in scores.items() if score > 0), key=lambda h: (-scores[h], len(names[h]), h))
    chosen += ranked[:limit]
    return {h: _narrow(names[h], query, catalog) if len(names[h]) > BIG_HEADER else names[h] for h in chosen}


def _narrow(names: list[str], query: dict[str, float], catalog: Catalog) -> list[str]:
    """A big header's functions, and its macros sharing a specific word (or its prefix) with the query."""
    asked = [q for q in query if len(q) >= 3]
    return [n for n in names if catalog.entries[n][1] == "function"
            or any(w.startswith(q) for w in set(words(n)) - _GENERIC for q in asked)]
