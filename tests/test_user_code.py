"""User code is wired into every generated app and survives regeneration.

Each framework's ``main.c`` includes ``"user.h"`` and calls ``rac_user_init()`` after the boot line and
before the operations; each build compiles ``user.c`` (Zephyr ``target_sources``, ESP-IDF ``SRCS``, the
bare-metal ``build.json``, the HAL README's source list). The bare-metal case is proven end to end: a
``user.c`` that prints a line is built by the gcc backend and run in QEMU through ``rac-fw plan``, and
regenerating keeps the edit.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_tool

from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.facts.load import load_target
from rac_fw.domains.firmware.lower import MANIFEST_NAME, Lowered, write_artifact
from rac_fw.domains.firmware.pipeline import run_plan
from rac_fw.domains.firmware.verify.artifact import verify_sources

REPO = Path(__file__).resolve().parent.parent
PLAN = REPO / "examples" / "uart_hello.yaml"

#: framework → (target, its main.c, where user.c and user.h go, the build file naming user.c, how it does).
CASES = {
    "zephyr": ("stm32f407", "src/main.c", ("src/user.c", "src/user.h"), "CMakeLists.txt",
               "target_sources(app PRIVATE src/main.c src/user.c)"),
    "espidf": ("esp32s3", "main/main.c", ("main/user.c", "main/user.h"), "main/CMakeLists.txt",
               'SRCS "main.c" "user.c"'),
    "hal": ("stm32f407", "Core/Src/main.c", ("Core/Src/user.c", "Core/Inc/user.h"), "README.md", "Core/Src/user.c"),
    "baremetal": ("stm32f407", "src/main.c", ("src/user.c", "include/user.h"), "build.json", '"src/user.c"'),
}  # fmt: skip

#: The statement that ends the boot line in each framework's main.c, and the first line of the operations.
BOOT = {
    "zephyr": ('printk("rac: boot %s\\n", "stm32f407");', "err = app_hello_setup();"),
    "espidf": ('printf("rac: boot %s\\n", "esp32s3");', "start_task("),
    "hal": ("MX_USART2_Init();", "for (;;) {"),
    "baremetal": ('rac_puts("stm32f407");', "op0_print();"),
}


def lowered(framework: str) -> Lowered:
    target = CASES[framework][0]
    result = run_plan(PLAN, target=target, framework=framework)
    assert result.lowered is not None, [e.message for e in result.evidence]
    return result.lowered


@pytest.mark.parametrize("framework", sorted(CASES))
def test_every_framework_includes_calls_and_builds_user_code(framework: str) -> None:
    target, main_path, user_paths, build_file, build_line = CASES[framework]
    tree = lowered(framework)
    assert sorted(tree.user_files) == sorted(user_paths)
    assert not set(tree.user_files) & set(tree.files)  # never generated, never in the manifest's files
    main = tree.files[main_path]
    assert '#include "user.h"' in main
    body = main[main.index("main(void)\n{") :]
    boot, first_operation = BOOT[framework]
    call = body.index("rac_user_init();")
    assert body.index(boot) < call < body.index(first_operation), body[:800]
    assert build_line in tree.files[build_file]
    # In memory (no --out) the tree is judged with the user files write_artifact will create: clean.
    verdict = verify_sources(tree.files, framework, load_target(target))
    assert verdict.ok, [(e.code, e.message) for e in verdict.evidence]


def test_a_tree_on_disk_is_judged_with_the_users_own_files(tmp_path: Path) -> None:
    """The stand-ins are used only while neither user file exists: a user.c that lost the hook is found."""
    tree = lowered("zephyr")
    files = dict(tree.files)
    files["src/user.c"] = '#include "user.h"\n\nvoid my_own(void)\n{\n}\n'
    files["src/user.h"] = usercode.TEXTS[usercode.HEADER]
    verdict = verify_sources(files, "zephyr", load_target("stm32f407"))
    assert not verdict.ok
    assert any(e.code == "E_UNKNOWN_API" and usercode.HOOK in e.message for e in verdict.evidence)
    assert usercode.with_stand_ins(files) is files


def test_hal_user_files_follow_the_cube_layout(tmp_path: Path) -> None:
    manifest = write_artifact(lowered("hal"), tmp_path)
    assert manifest["user_files"] == ["Core/Inc/user.h", "Core/Src/user.c"]
    assert (tmp_path / "Core/Src/user.c").read_text() == usercode.TEXTS[usercode.SOURCE]
    assert (tmp_path / "Core/Inc/user.h").read_text() == usercode.TEXTS[usercode.HEADER]


def rac_fw_plan(out: Path) -> dict:
    run = subprocess.run(
        [sys.executable, "-m", "rac_fw.cli", "plan", str(PLAN), "--target", "stm32f407", "--framework", "baremetal",
         "--out", str(out), "--build", "--run", "qemu", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(run.stdout)


def test_bare_metal_user_code_runs_in_qemu_and_survives_regeneration(tmp_path: Path) -> None:
    require_tool("arm-none-eabi-gcc")
    require_tool("qemu-system-arm")
    out = tmp_path / "app"
    first = rac_fw_plan(out)
    assert first["status"] == "pass" and first["run"]["ok"]
    user_c = out / "src" / "user.c"
    assert user_c.read_text() == usercode.TEXTS[usercode.SOURCE]
    mine = (
        '#include "rac.h"\n#include "user.h"\n\n'
        "void rac_user_init(void)\n{\n    rac_puts(\"user: hello from user.c\\r\\n\");\n}\n"
    )
    user_c.write_text(mine)
    again = rac_fw_plan(out)  # regenerate, rebuild (the edit changes the cache key) and run
    assert again["status"] == "pass" and again["run"]["ok"]
    lines = again["run"]["output"].splitlines()
    assert lines[0] == "rac: boot stm32f407" and lines[1] == "user: hello from user.c" and lines[-1] == "rac: done"
    assert re.search(r"^rac: hello ok ", again["run"]["output"], re.M)
    assert user_c.read_text() == mine  # kept across regeneration
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert "src/user.c" not in {f["path"] for f in manifest["files"]}
    assert manifest["user_files"] == ["include/user.h", "src/user.c"]
