"""Static checks of generated C, judged from the source files alone (tree-sitter-c, no preprocessor).

The package follows the seams of the analysis: ``preprocess`` (make a file tree-sitter-parseable without
moving a line), ``model`` (the program: units, functions, calls, declarations, local macros expanded),
``sites`` (where a call acts on an object, through helpers), ``context`` (what all checks of one artifact
share) and ``registry`` (every rule by its key, and the checks registered for it). Each check module
registers its checks; this module imports them in verdict order.

The checks (each failure is located ``Evidence`` naming the file, line and enclosing function):

1. the C parses (no ERROR/MISSING nodes) — ``E_C_PARSE``;
2. every SDK call is known for the framework and version, with the declared number of arguments —
   ``E_UNKNOWN_API``, ``E_API_ARITY``, ``E_DEPRECATED_API``; a call into another framework's API is
   ``E_FOREIGN_API``;
3. required calls come first on the same object (init → configure → start, readiness before use) —
   ``E_CALL_ORDER``/``E_CALL_MISSING``; STM32 peripheral clocks are enabled — ``E_CLOCK_NOT_ENABLED``;
   forbidden calls (disabling a watchdog) — ``E_FORBIDDEN_CALL``; a socket, descriptor or client handle
   opened in a function is released on every error path out of it — ``E_HANDLE_LEAK``; on a core with a
   D-cache, each DMA source buffer is cleaned before its start and each destination invalidated on the completion path,
   over the whole transfer — ``E_CACHE_FLUSH_MISSING``, ``E_CACHE_INVALIDATE_MISSING``, ``E_CACHE_ORDER``,
   ``E_CACHE_RANGE``;
4. interrupt-context bodies neither block, sleep, log, allocate nor call thread-only APIs —
   ``E_ISR_BLOCKING``, ``E_ISR_LOGGING``, ``E_ISR_ALLOCATION``, ``E_ISR_UNSAFE_CALL``;
5. file-scope state written in interrupt context and used by thread code is volatile or atomic —
   ``E_ISR_SHARED_NOT_VOLATILE``;
6. results of fallible calls are tested — ``E_UNCHECKED_RETURN``.

Known limits (documented, deliberate): conditional compilation other than ``__cplusplus`` is not
evaluated (both branches are judged), ordering across functions is judged only through calls of helpers
(a prerequisite in an unrelated function counts as present), writes to array elements are not treated as
shared scalar state (lock-free rings keep their indices atomic instead), and a DMA buffer is named only
through a start call's arguments or Zephyr's block configuration (bare-metal stream registers are not
"""

from __future__ import annotations

from rac_fw.domains.firmware.verify.static import (  # noqa: F401  (imported to register their checks)
    api,
    clocks,
    declared,
    dma_cache,
    isr,
    order,
    released,
    returns,
    secret_keys,
    shared_state,
    syntax,
    unused,
)
from rac_fw.domains.firmware.verify.static.context import Context
from rac_fw.domains.firmware.verify.static.isr import isr_functions
from rac_fw.domains.firmware.verify.static.model import C_SUFFIXES, Call, Program, build_program, finding, object_key
from rac_fw.domains.firmware.verify.static.registry import CHECKS, RULES, Check, Rule, checks_of

__all__ = [
    "C_SUFFIXES",
    "CHECKS",
    "RULES",
    "Call",
    "Check",
    "Context",
    "Program",
    "Rule",
    "build_program",
    "checks_of",
    "finding",
    "isr_functions",
    "object_key",
]
