"""Small network peers on 127.0.0.1 for tests of networked apps: UDP echo, MQTT 3.1.1 broker, HTTP server.

A generated networked app (``udp_send``, ``tcp_client``, ``mqtt_publish``, ``http_request``) talks to peers
its plan names; a test starts these on loopback, points the plan at their ports and judges what they saw
(``peer.log``). Only the protocol a client needs is served: the broker acknowledges CONNECT, PUBLISH (QoS 0/1),
SUBSCRIBE and PINGREQ and records every publication; the HTTP server answers every request with 200 and a
small JSON body and records method, path and body.

Where they run the app: on a native_sim build (``west build -b native_sim/native/64``), whose offloaded sockets
are the host's, so ``127.0.0.1`` is this machine — ``tests/test_net_peers.py`` does that when a west workspace
is present. Without one (CI: no registry carries Zephyr) the peers are exercised by real protocol clients and
by the exchange the generated app's own literals define. By hand::

    python tests/net_peers.py --udp 4243 --mqtt 1883 --http 8080   # then run build/zephyr/zephyr.exe
"""

from __future__ import annotations

import argparse
import socket
import socketserver
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

LOOPBACK = "127.0.0.1"


@dataclass
class Event:
    """One thing a peer saw: what kind (``datagram``, ``connect``, ``publish``, ``subscribe``, ``request``)."""

    kind: str
    detail: dict[str, Any] = field(default_factory=dict)


class _Peer:
    """Start/stop around a socketserver running in a daemon thread; ``log`` is what it saw, in order."""

    server: socketserver.BaseServer

    def __init__(self) -> None:
        self.log: list[Event] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])  # type: ignore[attr-defined]

    def record(self, kind: str, **detail: Any) -> None:
        with self._lock:
            self.log.append(Event(kind, detail))

    def events(self, kind: str) -> list[Event]:
        with self._lock:
            return [e for e in self.log if e.kind == kind]

    def wait_for(self, kind: str, count: int = 1, timeout_s: float = 5.0) -> list[Event]:
        """The first ``count`` events of ``kind``, waiting at most ``timeout_s`` (fewer when time runs out)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and len(self.events(kind)) < count:
            time.sleep(0.01)
        return self.events(kind)[:count]

    def __enter__(self) -> _Peer:
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class UdpEcho(_Peer):
    """Echoes every datagram back to its sender (the ``udp_send reply: true`` peer)."""

    def __init__(self, port: int = 0) -> None:
        super().__init__()
        peer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                data, sock = self.request
                peer.record("datagram", data=bytes(data), sender=self.client_address)
                sock.sendto(data, self.client_address)

        self.server = socketserver.ThreadingUDPServer((LOOPBACK, port), Handler)


def _remaining_length(stream: socket.socket) -> int | None:
    value, shift = 0, 0
    for _ in range(4):
        byte = stream.recv(1)
        if not byte:
            return None
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value
        shift += 7
    return None


def _read_exact(stream: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _string(body: bytes, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from(">H", body, at)
    return body[at + 2 : at + 2 + length].decode("utf-8", errors="replace"), at + 2 + length


class MqttBroker(_Peer):
    """An MQTT 3.1.1 broker for one test: acknowledges what a client sends and records the publications."""

    def __init__(self, port: int = 0) -> None:
        super().__init__()
        peer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.settimeout(30)
                client = ""
                try:
                    while True:
                        head = sock.recv(1)
                        length = _remaining_length(sock) if head else None
                        body = _read_exact(sock, length) if length is not None else None
                        if not head or body is None:
                            return
                        kind, flags = head[0] >> 4, head[0] & 0x0F
                        if kind == 1:  # CONNECT: protocol name, level, flags, keep-alive, client id
                            _, at = _string(body, 0)
                            keep_alive = struct.unpack_from(">H", body, at + 2)[0]
                            client, _ = _string(body, at + 4)
                            peer.record("connect", client=client, keep_alive_s=keep_alive)
                            sock.sendall(b"\x20\x02\x00\x00")
                        elif kind == 3:  # PUBLISH
                            qos = (flags >> 1) & 0x03
                            topic, at = _string(body, 0)
                            packet = struct.unpack_from(">H", body, at)[0] if qos else None
                            payload = body[at + (2 if qos else 0) :]
                            peer.record("publish", client=client, topic=topic, payload=payload, qos=qos)
                            if qos == 1 and packet is not None:
                                sock.sendall(b"\x40\x02" + struct.pack(">H", packet))
                        elif kind == 8:  # SUBSCRIBE: packet id, (filter, qos)*
                            packet = struct.unpack_from(">H", body, 0)[0]
                            at, granted, filters = 2, b"", []
                            while at < len(body):
                                topic, at = _string(body, at)
                                filters.append(topic)
                                granted += bytes([min(body[at], 1)])
                                at += 1
                            peer.record("subscribe", client=client, filters=filters)
                            sock.sendall(bytes([0x90, 2 + len(granted)]) + struct.pack(">H", packet) + granted)
                        elif kind == 12:  # PINGREQ
                            sock.sendall(b"\xd0\x00")
                        elif kind == 14:  # DISCONNECT
                            peer.record("disconnect", client=client)
                            return
                except OSError:
                    return

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.server = Server((LOOPBACK, port), Handler)


class HttpServer(_Peer):
    """Answers every request with ``200`` and ``{"ok": true}`` and records method, path and body."""

    def __init__(self, port: int = 0) -> None:
        super().__init__()
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                peer.record("request", method=self.command, path=self.path, body=body, host=self.headers.get("Host"))
                reply = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the base class's name)
                return

        self.server = ThreadingHTTPServer((LOOPBACK, port), Handler)


def main() -> None:
    """Run the peers by hand beside a native_sim app (``zephyr.exe``) until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--udp", type=int, default=4243)
    parser.add_argument("--mqtt", type=int, default=1883)
    parser.add_argument("--http", type=int, default=8080)
    args = parser.parse_args()
    with UdpEcho(args.udp) as udp, MqttBroker(args.mqtt) as mqtt, HttpServer(args.http) as http:
        print(f"udp echo :{udp.port}  mqtt :{mqtt.port}  http :{http.port}  (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            for peer in (udp, mqtt, http):
                for event in peer.log:
                    print(event.kind, event.detail)


if __name__ == "__main__":
    main()
