"""Witnesses of side effects, for the trial tests: real loopback listeners that count what
reaches them (TCP connections, UDP datagrams, HTTP requests) and a snapshot of a folder that
tells what was written, created or removed in it."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path


class TcpWitness:
    """A TCP listener on 127.0.0.1 counting the connections it accepts (and their first
    bytes); an HTTP request gets an empty 200 so clients finish."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.seen: list[bytes] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(0.5)
            try:
                data = conn.recv(4096)
            except OSError:
                data = b""
            with self._lock:
                self.seen.append(data)
            with contextlib.suppress(OSError):
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
            conn.close()

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.seen)

    def close(self) -> None:
        self.sock.close()


class UdpWitness:
    """A UDP socket on 127.0.0.1 counting the datagrams it receives (a DNS server stand-in)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]

    def count(self) -> int:
        """Datagrams waiting (read now)."""
        got = 0
        while True:
            try:
                self.sock.recvfrom(65536)
            except OSError:
                return got
            got += 1

    def close(self) -> None:
        self.sock.close()


def folder_state(root: Path) -> dict[str, tuple[int, int, float]]:
    """Every path under ``root`` with its size, mode and modification time."""
    state = {}
    for path in sorted(root.rglob("*")):
        info = os.lstat(path)
        state[str(path.relative_to(root))] = (info.st_size, info.st_mode, info.st_mtime)
    return state
