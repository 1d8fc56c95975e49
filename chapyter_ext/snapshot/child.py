"""The snapshot's child: a forked copy of the kernel that keeps the variables as they were and
waits, blocked on its socket, until the kernel asks for some of them (or it is released).

It dies with the kernel (``PR_SET_PDEATHSIG``; and at once if the kernel is already gone),
ignores the Ctrl-C the kernel's process group receives, never touches the kernel's threads or
ZeroMQ sockets (it only reads its own socket), runs no garbage collection (which would write to
every object's page and so copy it), and leaves with ``os._exit`` whatever happens.

Requests, one JSON line each: ``{"op": "check", "names": [...]}`` (which of them would not come
back, and why), ``{"op": "lend", "names": [...]}`` (the values pickled and where they lie in
this process, kept until the next request, ``{"op": "done"}``, for the kernel to read them
from here), ``{"op": "dump", "names": [...]}`` (the same written into a memory file whose
descriptor is passed along, where the system refuses the direct read), ``{"op": "quit"}``.
Each answer is a length-prefixed JSON document.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
from typing import Any, NoReturn

from . import transfer

PR_SET_PDEATHSIG = 1
_HEADER = struct.Struct("<Q")


def die_with(parent: int) -> None:
    """Be killed when ``parent`` (the kernel) exits; exit now if it already has."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


def send(sock: socket.socket, answer: dict[str, Any], fds: list[int] | None = None) -> None:
    body = json.dumps(answer).encode()
    data = _HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [data], fds)
        sock.sendall(data[sent:])
    else:
        sock.sendall(data)


def receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One answer and the descriptors passed with it; ``ConnectionError`` if the peer is gone."""
    data, fds, _, _ = socket.recv_fds(sock, 65536, 4)
    if not data:
        raise ConnectionError("the snapshot's process is gone")
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        more = sock.recv(1 << 20)
        if not more:
            raise ConnectionError("the snapshot's process is gone")
        data += more
    (size,) = _HEADER.unpack_from(data)
    return json.loads(data[_HEADER.size : _HEADER.size + size]), list(fds)


def _cannot(namespace: dict[str, Any], names: list[str]) -> dict[str, str]:
    """Which of ``names`` would not come back, and why (each pickled on its own, dry)."""
    found = {}
    for name in names:
        if name not in namespace:
            continue
        try:
            transfer.dumps({name: namespace[name]})
        except BaseException as err:
            found[name] = transfer.why_not(namespace[name], err)
    return found


def _pickled(namespace: dict[str, Any], names: list[str]) -> tuple[Any, ...]:
    present = [n for n in names if n in namespace]
    values = {n: namespace[n] for n in present}
    try:
        stream, buffers = transfer.dumps(values)  # together: shared objects stay shared
        cannot: dict[str, str] = {}
    except BaseException:
        cannot = _cannot(namespace, present)
        values = {n: v for n, v in values.items() if n not in cannot}
        stream, buffers = transfer.dumps(values)
    return values, stream, buffers, cannot


def _dump(sock: socket.socket, namespace: dict[str, Any], names: list[str]) -> None:
    values, stream, buffers, cannot = _pickled(namespace, names)
    fd, layout = transfer.write(stream, buffers)
    send(sock, {"cannot": cannot, "layout": layout, "names": list(values)}, [fd])
    os.close(fd)


def _lend(sock: socket.socket, namespace: dict[str, Any], names: list[str]) -> tuple[Any, ...]:
    """Pickle ``names`` and say where the pickle lies, for the kernel to read it from this
    process's memory; what must stay alive until it has (the caller keeps it)."""
    values, stream, buffers, cannot = _pickled(namespace, names)
    remote = transfer.addresses(stream, buffers)
    send(sock, {"cannot": cannot, "remote": remote, "names": list(values)})
    return values, stream, buffers


def main(shell: Any, sock: socket.socket, parent: int, others: list[int]) -> NoReturn:
    """The child's life (see the module); never returns."""
    try:
        die_with(parent)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        import gc

        gc.disable()
        for fd in others:  # the kernel's ends of older snapshots' sockets
            with contextlib.suppress(OSError):
                os.close(fd)
        namespace = shell.user_ns
        reader = sock.makefile("rb")
        lent: list[Any] = []  # what the kernel reads from here: alive until the next request
        while True:
            line = reader.readline()
            if not line:
                break
            request = json.loads(line)
            op, names = request.get("op"), [str(n) for n in request.get("names", ())]
            lent.clear()
            if op == "done":
                continue
            if op not in ("check", "dump", "lend"):
                break
            try:
                if op == "check":
                    send(sock, {"cannot": _cannot(namespace, names)})
                elif op == "lend":
                    lent.append(_lend(sock, namespace, names))
                else:
                    _dump(sock, namespace, names)
            except Exception as err:  # said to the kernel, which would wait otherwise
                send(sock, {"error": f"{type(err).__name__}: {err}"[:300]})
    except BaseException:
        pass
    finally:
        os._exit(0)
