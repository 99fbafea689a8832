"""Streamable HTTP for the MCP server: loopback by default, a bearer token required anywhere else.

A rac-fw session belongs to the MCP session that started it, so the server speaks the stateful
(initialize-handshake) streamable HTTP only: there the SDK issues each connection an
``mcp-session-id`` and routes a request only to the connection holding it. Requests of the sessionless
protocol era (a ``mcp-protocol-version`` header outside the handshake versions) are answered 400, which
``mode="auto"`` clients take as the cue to fall back to the handshake. This module also decides who may
connect at all. With ``--token-file`` every request must carry
``Authorization: Bearer <token>`` (compared in constant time) or is answered 401 with evidence, before
the MCP layer sees it. Binding an address other than loopback without a token is refused: anyone who
can reach the port could otherwise drive the server.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from pathlib import Path
from typing import Any

from rac_fw.contract import Evidence
from rac_fw.limits import current_limits


class ServeError(ValueError):
    """The server cannot be started as asked; ``evidence`` says why."""

    def __init__(self, evidence: Evidence):
        self.evidence = [evidence]
        super().__init__(evidence.message)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def load_token(path: Path) -> bytes:
    """The bearer token from a file (whitespace stripped); at least 16 bytes, or ``ServeError``."""
    try:
        token = path.read_bytes().strip()
    except OSError as exc:
        raise ServeError(Evidence(code="E_FILE", message=f"cannot read the token file: {exc.strerror or exc}",
                                  location=str(path))) from None
    if len(token) < 16 or any(c < 0x21 or c > 0x7e for c in token):
        raise ServeError(Evidence(code="E_TOKEN", location=str(path),
                                  message="a bearer token is at least 16 printable ASCII characters without spaces"))
    return token


def check_bind(host: str, token: bytes | None) -> None:
    """Refuse a non-loopback bind without a token."""
    if token is None and not is_loopback(host):
        raise ServeError(Evidence(
            code="E_UNSAFE_BIND", location="--host", objects=[host],
            message=f"refusing to serve on {host}, which is not a loopback address, without a bearer token: "
            "anyone who reaches the port could drive sessions and read traces; give --token-file FILE"))


class BearerAuth:
    """ASGI middleware: every HTTP request must carry the bearer token."""

    def __init__(self, app: Any, token: bytes):
        self.app, self.expected = app, b"Bearer " + token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                for message in _reject(401, Evidence(
                        code="E_AUTH", location="Authorization header",
                        message="missing or wrong bearer token: this server requires 'Authorization: Bearer <token>'"),
                        [(b"www-authenticate", b"Bearer")]):
                    await send(message)
                return
        await self.app(scope, receive, send)


def _reject(status: int, evidence: Evidence, extra: list[tuple[bytes, bytes]] | None = None) -> tuple[dict, dict]:
    body = json.dumps({"status": "invalid", "evidence": [evidence.model_dump(mode="json")]}).encode()
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), *(extra or [])]}
    return start, {"type": "http.response.body", "body": body}


class StatefulOnly:
    """ASGI middleware: only handshake-era (stateful) MCP requests reach the server."""

    def __init__(self, app: Any):
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        self.app, self.versions = app, {v.encode() for v in HANDSHAKE_PROTOCOL_VERSIONS}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            version = dict(scope.get("headers") or []).get(b"mcp-protocol-version")
            if version is not None and version not in self.versions:
                for message in _reject(400, Evidence(
                        code="E_PROTOCOL", location="mcp-protocol-version header",
                        message="rac-fw binds each episode to the MCP session that started it: connect with the "
                        "initialize handshake (stateful streamable HTTP)")):
                    await send(message)
                return
        await self.app(scope, receive, send)


def serve_http(server: Any, host: str, port: int, token: bytes | None) -> None:
    """Run the server's streamable HTTP app with uvicorn (blocking)."""
    import uvicorn

    check_bind(host, token)
    # The body limit sits above the payload limit, so an oversized call reaches the tool boundary and is
    # answered E_TOO_LARGE with evidence; only far larger bodies get the transport's plain 413.
    body_limit = max(4 * current_limits().payload_bytes, 16 << 20)
    app: Any = StatefulOnly(
        server.streamable_http_app(streamable_http_path="/mcp", max_request_body_size=body_limit, host=host))
    if token is not None:
        app = BearerAuth(app, token)
    uvicorn.run(app, host=host, port=port, log_level="warning")
