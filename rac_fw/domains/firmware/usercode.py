"""The user-code contract: two files of the user's own beside every generated app, and one hook.

Every generated ``main.c`` includes ``"user.h"`` and calls :data:`HOOK` once, after the boot line and
before the plan's operations start; every generated build compiles ``user.c``. ``write_artifact``
creates the two files once, when absent, and never rewrites or deletes them (they are not in the
manifest's ``files``), so regenerating an app keeps the user's work.

The lowerings (which place the files) and the verifier (which judges a tree as lowered, before the
files exist) both read this module, so the contract is stated once.
"""

from __future__ import annotations

import re

HEADER = "user.h"
SOURCE = "user.c"
HOOK = "rac_user_init"

#: What ``write_artifact`` creates when a file is absent (keyed by file name).
TEXTS: dict[str, str] = {
    HEADER: (
        "/* Your code: rac-fw created this file once and never rewrites it. */\n"
        "#ifndef RAC_USER_H\n#define RAC_USER_H\n\n"
        "/* Called once from main() after the boot line, before the plan's operations start. */\n"
        f"void {HOOK}(void);\n\n#endif /* RAC_USER_H */\n"
    ),
    SOURCE: (
        "/* Your code: rac-fw created this file once and never rewrites it. */\n"
        f'#include "{HEADER}"\n\nvoid {HOOK}(void)\n{{\n}}\n'
    ),
}

_INCLUDES_HEADER = re.compile(rf'^[ \t]*#[ \t]*include[ \t]*"{re.escape(HEADER)}"', re.M)


def placement(source_dir: str, header_dir: str | None = None) -> dict[str, str]:
    """The user files of a tree whose sources live in ``source_dir`` (and headers in ``header_dir``,
    default the same): artifact-relative path → the text created when absent."""
    def at(folder: str, name: str) -> str:
        return f"{folder}/{name}" if folder else name

    return {at(source_dir, SOURCE): TEXTS[SOURCE], at(header_dir or source_dir, HEADER): TEXTS[HEADER]}


def with_stand_ins(files: dict[str, str]) -> dict[str, str]:
    """``files`` plus the user files it would get on disk, when it includes ``user.h`` and holds neither.

    A tree as lowered (in memory, before ``write_artifact``) lacks the user files its ``main.c``
    includes and its build compiles; on disk they always exist. The stand-ins are the files
    ``write_artifact`` creates, next to the first unit that includes the header. A tree that has one
    of them (a user's tree on disk) is judged as it is.
    """
    names = {path.rsplit("/", 1)[-1] for path in files}
    if HEADER in names or SOURCE in names:
        return files
    includer = next((p for p in sorted(files) if p.endswith(".c") and _INCLUDES_HEADER.search(files[p])), None)
    if includer is None:
        return files
    return files | placement(includer.rpartition("/")[0])
