"""Streamable HTTP for the MCP server: loopback by default, a bearer token required anywhere else.

A rac-fw session belongs to the MCP session that started it, so the server speaks the stateful
(initialize-handshake) streamable HTTP only: there the SDK issues each connection an
``mcp-session-id`` and routes a request only to the connection holding it. Requests of the sessionless
protocol era (a ``mcp-protocol-version`` header outside the handshake versions) are answered 400, which
``mode="auto"`` clients take as the cue to fall back to the handshake. This module also decides who may
connect at all and as whom (:class:`Credentials`). With ``--token-file`` (one ``NAME TOKEN`` line per
client) every request must carry ``Authorization: Bearer <token>`` of a known client or is answered 401
with evidence, before the MCP layer sees it; the client's name is its credential, to which its MCP
sessions are bound (a replayed ``mcp-session-id`` with another credential gets 403) and by which its
bounds are counted (``mcp/sessions.py``). Without tokens every client is ``anonymous``: one credential
for all, so give each client its own token when several share the server. Binding an address other than
loopback without a token is refused: anyone who can reach the port could otherwise drive the server.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

from rac_fw.contract import Evidence
from rac_fw.limits import current_limits

#: The header that carries the authenticated client's name to the MCP layer (set here, never by a client).
IDENTITY = b"x-rac-fw-client"


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


#: What a client's name in a token file may look like.
CLIENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def load_tokens(path: Path) -> dict[bytes, str]:
    """The bearer tokens of a token file, token → client name, or ``ServeError``.

    One client per line: ``NAME TOKEN`` (or a bare ``TOKEN``, named ``default``); blank lines and ``#``
    comments are skipped. A token is at least 16 printable ASCII characters without spaces; names and
    tokens are unique. Each client's name is its credential: its sessions, episode and proposal bounds.
    """
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ServeError(Evidence(code="E_FILE", message=f"cannot read the token file: {exc.strerror or exc}",
                                  location=str(path))) from None
    tokens: dict[bytes, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            continue
        parts = line.split()
        name, token = (b"default", parts[0]) if len(parts) == 1 else (parts[0], parts[-1])
        where = f"{path}:{number}"
        if len(parts) > 2 or len(token) < 16 or any(c < 0x21 or c > 0x7E for c in token):
            raise ServeError(Evidence(code="E_TOKEN", location=where, message="a line is NAME TOKEN (or one TOKEN); "
                                      "a bearer token is at least 16 printable ASCII characters without spaces"))
        client = name.decode("ascii", "replace")
        if not CLIENT_NAME.fullmatch(client) or token in tokens or client in tokens.values():
            raise ServeError(Evidence(code="E_TOKEN", location=where, objects=[client] if CLIENT_NAME.fullmatch(
                client) else [], message="each client has one unique name (letters, digits, '_', '.', '-') and "
                "one unique token"))
        tokens[token] = client
    if not tokens:
        raise ServeError(Evidence(code="E_TOKEN", location=str(path), message="the token file holds no token"))
    return tokens


def check_bind(host: str, tokens: dict[bytes, str] | None) -> None:
    """Refuse a non-loopback bind without a token."""
    if tokens is None and not is_loopback(host):
        raise ServeError(Evidence(
            code="E_UNSAFE_BIND", location="--host", objects=[host],
            message=f"refusing to serve on {host}, which is not a loopback address, without a bearer token: "
            "anyone who reaches the port could drive sessions and read traces; give --token-file FILE"))


class Credentials:
    """ASGI middleware: who a request is, and which MCP sessions it may use.

    With tokens, every HTTP request must carry ``Authorization: Bearer <token>`` of a known client (each
    token compared in constant time; 401 otherwise); without, every request is the ``anonymous`` client
    (loopback only). The client's name goes to the MCP layer as the ``x-rac-fw-client`` header — any
    such header a request brings is dropped first. The ``mcp-session-id`` the SDK issues is bound to the
    client it was issued to: the same id from another credential is answered 403 before the SDK routes it.
    """

    #: Bindings kept (the oldest are forgotten first; the SDK's own sessions are far fewer).
    KEPT = 65536

    def __init__(self, app: Any, tokens: dict[bytes, str] | None):
        self.app, self.tokens = app, tokens
        self.owners: OrderedDict[bytes, str] = OrderedDict()

    def _client(self, given: bytes) -> str | None:
        if self.tokens is None:
            return "anonymous"
        found = None
        for token, name in self.tokens.items():  # every token is compared: no early exit to time
            if hmac.compare_digest(given, b"Bearer " + token):
                found = name
        return found

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != IDENTITY]
        client = self._client(dict(headers).get(b"authorization", b""))
        if client is None:
            await _reject(send, 401, Evidence(
                code="E_AUTH", location="Authorization header",
                message="missing or wrong bearer token: this server requires 'Authorization: Bearer <token>'"),
                [(b"www-authenticate", b"Bearer")])
            return
        session = dict(headers).get(b"mcp-session-id")
        if session is not None and self.owners.get(session, client) != client:
            await _reject(send, 403, Evidence(
                code="E_SESSION_OWNER", location="mcp-session-id header",
                message="this MCP session was opened with another credential; a session is usable only by the "
                "client that opened it"))
            return

        async def bind(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                for key, value in message.get("headers") or []:
                    if key.lower() == b"mcp-session-id" and value not in self.owners:
                        self.owners[value] = client
                        while len(self.owners) > self.KEPT:
                            self.owners.popitem(last=False)
            await send(message)

        await self.app({**scope, "headers": [*headers, (IDENTITY, client.encode())]}, receive, bind)


async def _reject(send: Any, status: int, evidence: Evidence, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer the request with ``status`` and the evidence, before the MCP layer sees it."""
    body = json.dumps({"status": "invalid", "evidence": [evidence.model_dump(mode="json")]}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


class StatefulOnly:
    """ASGI middleware: only handshake-era (stateful) MCP requests reach the server."""

    def __init__(self, app: Any):
        from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

        self.app, self.versions = app, {v.encode() for v in HANDSHAKE_PROTOCOL_VERSIONS}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            version = dict(scope.get("headers") or []).get(b"mcp-protocol-version")
            if version is not None and version not in self.versions:
                await _reject(send, 400, Evidence(
                    code="E_PROTOCOL", location="mcp-protocol-version header",
                    message="rac-fw binds each episode to the MCP session that started it: connect with the "
                    "initialize handshake (stateful streamable HTTP)"))
                return
        await self.app(scope, receive, send)


def serve_http(server: Any, host: str, port: int, tokens: dict[bytes, str] | None) -> None:
    """Run the server's streamable HTTP app with uvicorn (blocking)."""
    import uvicorn

    check_bind(host, tokens)
    # The body limit sits above the payload limit, so an oversized call reaches the tool boundary and is
    # answered E_TOO_LARGE with evidence; only far larger bodies get the transport's plain 413.
    body_limit = max(4 * current_limits().payload_bytes, 16 << 20)
    app: Any = StatefulOnly(
        server.streamable_http_app(streamable_http_path="/mcp", max_request_body_size=body_limit, host=host))
    uvicorn.run(Credentials(app, tokens), host=host, port=port, log_level="warning")
