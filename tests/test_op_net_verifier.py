"""The static verifier knows the application-protocol APIs of the net family: one bad source per new rule.

Each file ``tests/bad_sources/<framework>/net_*.c`` carries one defect and a ``/* expect: E_CODE */`` marker
on the line the evidence must point at; nothing else may fire. The rules are the fragments
``verify/sdk/<framework>/rules.d/net*.yaml`` (order, fallible calls, secret arguments, and the handles
``verify/static/released.py`` tracks), the signatures ``api.d/net_app.json`` and the header models
``headers.d/net_app.json``. Every generated networking app passes the same rules (tests/test_op_net_app.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rac_fw.domains.firmware.verify.artifact import verify_sources

SOURCES = Path(__file__).resolve().parent / "bad_sources"

#: (framework, bad source) → the support files beside it.
CASES = {
    ("zephyr", "net_socket_leak_on_error"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_addrinfo_leak_on_error"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_tls_credential_literal"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_http_before_connect"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_coap_option_before_init"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_dns_unchecked"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_coap_payload_without_marker"): {"prj.conf": "net_app_prj.conf"},
    ("zephyr", "net_http_no_kconfig"): {"prj.conf": "net_app_no_http_prj.conf"},
    ("espidf", "net_http_leak_on_error"): {"sdkconfig.defaults": "sdkconfig.defaults"},
    ("espidf", "net_socket_leak_on_error"): {"sdkconfig.defaults": "sdkconfig.defaults"},
    ("espidf", "net_socket_leak_in_loop"): {"sdkconfig.defaults": "sdkconfig.defaults"},
    ("espidf", "net_ca_literal"): {"sdkconfig.defaults": "sdkconfig.defaults"},
    ("espidf", "net_static_ip_before_dhcp_stop"): {"sdkconfig.defaults": "sdkconfig.defaults"},
    ("espidf", "net_http_perform_before_init"): {"sdkconfig.defaults": "sdkconfig.defaults"},
    ("espidf", "net_http_header_unchecked"): {"sdkconfig.defaults": "sdkconfig.defaults"},
}

MAIN = {"zephyr": "src/main.c", "espidf": "main/main.c"}


def _expected(text: str) -> tuple[str, int]:
    lines = text.splitlines()
    return next((m.group(1), i + 1) for i, t in enumerate(lines) if (m := re.search(r"expect: (E_\w+)", t)))


def _files(framework: str, name: str, text: str | None = None) -> dict[str, str]:
    support = SOURCES / framework / "support"
    files = {dest: (support / src).read_text() for dest, src in CASES[(framework, name)].items()}
    files[MAIN[framework]] = text if text is not None else (SOURCES / framework / f"{name}.c").read_text()
    return files


@pytest.mark.parametrize(("framework", "name"), sorted(CASES), ids=lambda v: v)
def test_each_net_defect_is_caught_at_its_line(framework: str, name: str) -> None:
    text = (SOURCES / framework / f"{name}.c").read_text()
    code, line = _expected(text)
    result = verify_sources(_files(framework, name), framework, None)
    found = [(e.code, e.location, e.message) for e in result.evidence]
    assert {e.code for e in result.evidence} == {code}, found
    where = "prj.conf" if code == "E_KCONFIG_MISSING" else f"{MAIN[framework]}:{line}"
    assert any(e.location.startswith(where) for e in result.evidence), found


def test_every_net_bad_source_is_exercised() -> None:
    on_disk = {(fw, p.stem) for fw in MAIN for p in (SOURCES / fw).glob("net_*.c")}
    assert on_disk == set(CASES)


#: The defect of each leak source, repaired: the release that was missing.
REPAIRS = {
    ("zephyr", "net_socket_leak_on_error"): ("\t\treturn -errno; /* expect: E_HANDLE_LEAK */",
                                             "\t\tint err = -errno;\n\n\t\t(void)zsock_close(sock);\n\t\treturn err;"),
    ("zephyr", "net_addrinfo_leak_on_error"): ("\t\treturn -errno; /* expect: E_HANDLE_LEAK */",
                                               "\t\tzsock_freeaddrinfo(found);\n\t\treturn -errno;"),
    ("espidf", "net_http_leak_on_error"): ("        return -1; /* expect: E_HANDLE_LEAK */",
                                           "        esp_http_client_cleanup(client);\n        return -1;"),
    ("espidf", "net_socket_leak_on_error"): ("        return -1; /* expect: E_HANDLE_LEAK */",
                                             "        close(sock);\n        return -1;"),
    ("espidf", "net_socket_leak_in_loop"): ("            continue; /* expect: E_HANDLE_LEAK */",
                                            "            close(client);\n            continue;"),
}  # fmt: skip


@pytest.mark.parametrize(("framework", "name"), sorted(REPAIRS), ids=lambda v: v)
def test_the_repaired_leaks_verify_clean(framework: str, name: str) -> None:
    """The release rule fires on the missing release only: the same source with it added is clean."""
    old, new = REPAIRS[(framework, name)]
    text = (SOURCES / framework / f"{name}.c").read_text()
    assert old in text
    result = verify_sources(_files(framework, name, text.replace(old, new)), framework, None)
    assert result.evidence == [], [(e.code, e.location, e.message) for e in result.evidence]


def test_a_guarded_release_and_a_goto_cleanup_count() -> None:
    """A release under ``if (h >= 0)`` covers the block around it; a ``goto`` to a label that releases is fine."""
    text = """#include <zephyr/kernel.h>
#include <zephyr/net/socket.h>
#include <errno.h>

static int guarded(void)
{
	int sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

	if (sock < 0 || zsock_setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, NULL, 0) < 0) {
		if (sock >= 0) {
			(void)zsock_close(sock);
		}
		return -errno;
	}
	return zsock_close(sock);
}

static int with_goto(void)
{
	int err = 0;
	int sock = zsock_socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);

	if (sock < 0) {
		return -errno;
	}
	if (zsock_setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, NULL, 0) < 0) {
		err = -errno;
		goto out;
	}
out:
	(void)zsock_close(sock);
	return err;
}

int main(void)
{
	return guarded() + with_goto();
}
"""
    files = {"src/main.c": text, "prj.conf": (SOURCES / "zephyr" / "support" / "net_app_prj.conf").read_text()}
    result = verify_sources(files, "zephyr", None)
    assert result.evidence == [], [(e.code, e.location, e.message) for e in result.evidence]
    leaky = text.replace("\t\tgoto out;\n", "\t\treturn err;\n")
    codes = [e.code for e in verify_sources({**files, "src/main.c": leaky}, "zephyr", None).evidence]
    assert codes == ["E_HANDLE_LEAK"]
