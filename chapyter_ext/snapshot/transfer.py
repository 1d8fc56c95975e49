"""How values cross from a snapshot's child to the kernel: pickle protocol 5 with out-of-band
buffers (a DataFrame's block, an array's data), never copied per column or object.

First way (:func:`addresses`, :func:`read_direct`): the child pickles and says where the stream
and each buffer lie in its memory; the kernel, its parent, copies them once, straight into one
block of its own memory (``process_vm_readv``), and unpickles with views of it. Where the system
refuses that (ptrace rules), the child writes them into a memory file (``memfd``, :func:`write`)
which the kernel reads whole (:func:`read`). (Mapping that file instead would tie its pages to
the values for good: a later change in place would copy them and keep the file's too, unseen by
Undo's budget.)

Also what no pickle can carry, named in one line each (:func:`why_not`), and the two things the
plain pickle gets wrong here: a function defined in the notebook (pickled by name, it would come
back as the function of that name *now*) crosses as its code; a module crosses as its name.
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import sys
import types
from typing import Any

#: Each buffer starts at a multiple of this (cache lines; NumPy's own alignment).
ALIGN = 64
#: Bytes read from the memory file per call.
CHUNK = 1 << 30


def _function(code: bytes, name: str, qualname: str, defaults: Any, kwdefaults: Any) -> Any:
    """A notebook function rebuilt in the kernel from its code, with the notebook's globals."""
    import marshal

    main = sys.modules["__main__"].__dict__
    function = types.FunctionType(marshal.loads(code), main, name, defaults)
    function.__qualname__, function.__kwdefaults__ = qualname, kwdefaults
    return function


def _module(name: str) -> Any:
    import importlib

    return importlib.import_module(name)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if isinstance(obj, types.ModuleType):
            if sys.modules.get(obj.__name__) is not obj:
                raise pickle.PicklingError("a module that is not imported by its name")
            return _module, (obj.__name__,)
        if kind is types.FunctionType and obj.__module__ == "__main__":
            if obj.__closure__:
                raise pickle.PicklingError("a function of the notebook with a closure")
            import marshal

            return _function, (
                marshal.dumps(obj.__code__),
                obj.__name__,
                obj.__qualname__,
                obj.__defaults__,
                obj.__kwdefaults__,
            )
        if isinstance(obj, type) and obj.__module__ == "__main__":
            raise pickle.PicklingError("a class defined in the notebook")
        return NotImplemented


def dumps(values: dict[str, Any]) -> tuple[bytes, list[pickle.PickleBuffer]]:
    """``values`` pickled (protocol 5): the stream and its out-of-band buffers (not copied)."""
    buffers: list[pickle.PickleBuffer] = []
    stream = io.BytesIO()
    _Pickler(stream, protocol=5, buffer_callback=buffers.append).dump(values)
    return stream.getvalue(), buffers


def why_not(value: Any, err: BaseException) -> str:
    """Why ``value`` cannot come back, in a few words."""
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}".lower()
    if isinstance(value, io.IOBase) or "bufferedreader" in name or "textiowrapper" in name:
        return "an open file"
    if "socket" in name:
        return "a socket"
    if any(word in name for word in ("connection", "cursor", "session", "engine", "client")):
        return "a connection"
    if isinstance(value, (types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType)):
        return "a generator"
    if "lock" in name or "thread" in name or "queue" in name:
        return "a lock or thread"
    if isinstance(value, types.FunctionType) and value.__name__ == "<lambda>":
        return "a lambda" if value.__closure__ else "a lambda that does not pickle"
    if isinstance(err, pickle.PicklingError) and str(err).startswith("a "):
        return str(err)
    text = " ".join(str(err).split())[:80]
    return f"does not pickle ({type(err).__name__}: {text})" if text else "does not pickle"


def write(stream: bytes, buffers: list[pickle.PickleBuffer]) -> tuple[int, list[list[int]]]:
    """A memory file holding ``stream`` then each buffer, aligned: its descriptor and the
    layout (offset, size) of each part, the stream's first."""
    fd = os.memfd_create("chapyter-undo", getattr(os, "MFD_CLOEXEC", 1))
    parts = [memoryview(stream), *(b.raw() for b in buffers)]
    layout: list[list[int]] = []
    offset = 0
    for part in parts:
        layout.append([offset, part.nbytes])
        offset += -(-part.nbytes // ALIGN) * ALIGN
    os.ftruncate(fd, max(offset, 1))
    for part, (start, size) in zip(parts, layout):
        done = 0
        while done < size:  # the kernel copies straight from the value's pages to the file
            done += os.pwrite(fd, part[done:], start + done)
    return fd, layout


def read(fd: int, layout: list[list[int]]) -> dict[str, Any]:
    """The values the child wrote into ``fd``, their buffers views of one block of the
    kernel's own memory, read in whole (the memory file is freed as soon as it is closed)."""
    size = max((start + length for start, length in layout), default=0)
    if size == 0:
        return {}
    data = bytearray(size)  # fresh pages: the read fills them, nothing else touches them
    view = memoryview(data)
    done = 0
    while done < size:
        got = os.preadv(fd, [view[done : done + CHUNK]], done)
        if got <= 0:
            raise EOFError("the snapshot's memory file ended early")
        done += got
    (start, length), *rest = layout
    buffers = [view[s : s + n] for s, n in rest]
    values = pickle.loads(view[start : start + length], buffers=buffers)
    del buffers, view
    return values


class _PyBuffer(ctypes.Structure):
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("suboffsets", ctypes.c_void_p),
        ("internal", ctypes.c_void_p),
    ]


class _IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def addresses(stream: bytes, buffers: list[pickle.PickleBuffer]) -> list[list[int]]:
    """Where ``stream`` and each buffer lie in this process: (address, size) each, for the
    kernel to read them straight from the child's memory (:func:`read_direct`)."""
    get, release = ctypes.pythonapi.PyObject_GetBuffer, ctypes.pythonapi.PyBuffer_Release
    get.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
    release.argtypes = [ctypes.POINTER(_PyBuffer)]
    found = []
    for part in [stream, *(b.raw() for b in buffers)]:
        view = _PyBuffer()
        if get(part, ctypes.byref(view), 0) != 0:  # PyBUF_SIMPLE: contiguous bytes
            raise BufferError("a buffer that is not contiguous")
        found.append([int(view.buf or 0), int(view.len)])
        release(ctypes.byref(view))
    return found


def read_direct(pid: int, remote: list[list[int]]) -> dict[str, Any]:
    """The values whose stream and buffers lie at ``remote`` in the child ``pid``, copied
    once, straight from its memory into one block of the kernel's (``process_vm_readv``: the
    kernel is the child's parent). ``OSError`` where the system refuses it."""
    libc = ctypes.CDLL(None, use_errno=True)
    readv = libc.process_vm_readv
    readv.argtypes = [ctypes.c_int, ctypes.POINTER(_IOVec), ctypes.c_ulong]
    readv.argtypes += [ctypes.POINTER(_IOVec), ctypes.c_ulong, ctypes.c_ulong]
    readv.restype = ctypes.c_ssize_t
    layout, offset = [], 0
    for _, size in remote:
        layout.append([offset, size])
        offset += -(-size // ALIGN) * ALIGN
    data = bytearray(max(offset, 1))
    anchor = ctypes.c_char.from_buffer(data)
    base = ctypes.addressof(anchor)
    for (address, size), (start, _) in zip(remote, layout):
        done = 0
        while done < size:
            length = min(size - done, CHUNK)
            local = _IOVec(base + start + done, length)
            there = _IOVec(address + done, length)
            got = readv(pid, ctypes.byref(local), 1, ctypes.byref(there), 1, 0)
            if got <= 0:
                number = ctypes.get_errno()
                raise OSError(number, os.strerror(number) if number else "nothing read")
            done += got
    del anchor
    view = memoryview(data)
    (start, length), *rest = layout
    buffers = [view[s : s + n] for s, n in rest]
    values = pickle.loads(view[start : start + length], buffers=buffers)
    del buffers, view
    return values
