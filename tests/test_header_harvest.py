"""The header-model importer reads a user's SDK tree: include graph, declaring header of catalog types, stand-ins.

The tree is written here (a few headers in the STM32Cube HAL layout); the harvester is the real one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rac_fw.domains.firmware.verify.sdk import harvest


def _tree(root: Path) -> Path:
    inc = root / "Inc"
    inc.mkdir(parents=True)
    (inc / "stm32h7xx_hal.h").write_text('#include "stm32h7xx_hal_conf.h"\n')
    (inc / "stm32h7xx_hal_conf_template.h").write_text(
        '#ifdef HAL_UART_MODULE_ENABLED\n  #include "stm32h7xx_hal_uart.h"\n#endif\n'
    )
    (inc / "stm32h7xx_hal_def.h").write_text("typedef enum { HAL_OK = 0 } HAL_StatusTypeDef;\n")
    (inc / "stm32h7xx_hal_uart.h").write_text(
        '#include "stm32h7xx_hal_def.h"\n#include <stdint.h>\n'
        "typedef struct __UART_HandleTypeDef { void *Instance; } UART_HandleTypeDef;\n"
        "HAL_StatusTypeDef HAL_UART_Init(UART_HandleTypeDef *huart);\n"
    )
    return inc


def test_harvest_records_includes_types_and_the_conf_template(tmp_path: Path) -> None:
    out = tmp_path / "headers.json"
    code = harvest.main(["hal", "--variant", "STM32H7", "--sdk", str(_tree(tmp_path / "sdk")), "--out", str(out)])
    assert code == 0
    model = json.loads(out.read_text())
    assert model["includes"]["stm32h7xx_hal.h"] == ["stm32h7xx_hal_conf.h"]
    assert model["includes"]["stm32h7xx_hal_conf_template.h"] == ["stm32h7xx_hal_uart.h"]
    assert model["includes"]["stm32h7xx_hal_uart.h"] == ["stdint.h", "stm32h7xx_hal_def.h"]
    assert model["stand_ins"] == {"stm32h7xx_hal_conf.h": "stm32h7xx_hal_conf_template.h"}
    assert model["types"]["UART_HandleTypeDef"] == "stm32h7xx_hal_uart.h"
    assert model["types"]["HAL_StatusTypeDef"] == "stm32h7xx_hal_def.h"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["hal", "--variant", "STM32X9", "--sdk", "."], "unknown variant"),
        (["hal", "--sdk", "/nonexistent/sdk"], "not a directory"),
    ],
)
def test_harvest_refuses_bad_arguments_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert harvest.main([*argv, "--out", str(tmp_path / "h.json")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "h.json").exists()
