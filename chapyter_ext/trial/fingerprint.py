"""Cheap fingerprints of the kernel's values: whether a value changed in place (a column added
to a DataFrame, an array filled, a list appended to, a model fitted) without copying or hashing
it whole.

A fingerprint is a tuple that stays equal while the value is unchanged: a DataFrame's shape,
columns, dtypes, index and a hash of a few evenly spaced rows; an array's shape, dtype, buffer
and a few evenly spaced elements; a container's length and the identity of its first and last
items; any other object the identity of its attributes. Its cost does not grow with the value
(the sample is bounded), so a change to an element that no sample reaches goes unseen.
"""

from __future__ import annotations

from typing import Any

#: Rows or elements sampled per value.
SAMPLES = 32
#: Items of a container, attributes of an object, columns of a table looked at.
ITEMS = 16

_id, _len, _type, _hash, _tuple, _repr = id, len, type, hash, tuple, repr


def _positions(n: int) -> list[int]:
    if n <= SAMPLES:
        return list(range(n))
    step = (n - 1) / (SAMPLES - 1)
    return sorted({round(i * step) for i in range(SAMPLES)})


def _digest(data: Any) -> int:
    try:
        return _hash(bytes(memoryview(data)))
    except (TypeError, ValueError, BufferError):
        return _hash(_repr(data))


def _blocks(value: Any) -> tuple:
    """A DataFrame's data, sampled block by block (pandas keeps columns of one dtype in one 2-D
    block): each block's dtype, buffer and a few evenly spaced rows. Microseconds, where a
    sample of rows through ``iloc`` takes about half a millisecond."""
    picked = _positions(value.shape[0])
    found: list[tuple] = []
    for block in value._mgr.blocks:
        data = block.values
        if getattr(data, "ndim", 0) == 2 and hasattr(data, "__array_interface__"):
            sample = data[:, picked]
            digest = _digest(sample) if data.dtype.kind != "O" else _hash(_repr(sample.tolist()))
            found.append((str(data.dtype), data.__array_interface__["data"][0], digest))
        else:  # an extension array (categorical, nullable, arrow): its sampled values
            found.append((str(data.dtype), _hash(_repr([data[i] for i in picked]))))
    return tuple(found)


def _frame(value: Any) -> tuple:
    columns = value.columns
    try:
        return (
            "frame",
            value.shape,
            _tuple(str(c) for c in columns[: ITEMS * 8]),
            _id(value.index),
            _blocks(value),
        )
    except Exception:  # another pandas: the public way, slower
        pass
    rows = value.iloc[_positions(value.shape[0])]
    try:
        hashing = __import__("pandas").util.hash_pandas_object  # never imported here first
        sample = _digest(hashing(rows, index=True).to_numpy())
    except Exception:  # unhashable cells (lists, dicts): their text
        sample = _hash(_repr(rows.to_numpy().tolist()))
    columns = value.columns
    return (
        "frame",
        value.shape,
        _tuple(str(c) for c in columns[: ITEMS * 8]),
        _tuple(str(d) for d in value.dtypes.iloc[: ITEMS * 8]),
        _id(value.index),
        sample,
    )


def _series(value: Any) -> tuple:
    rows = value.iloc[_positions(value.shape[0])]
    try:
        sample = _digest(rows.to_numpy())
    except Exception:
        sample = _hash(_repr(rows.tolist()))
    return ("series", value.shape, str(value.dtype), str(value.name), _id(value.index), sample)


def _array(value: Any) -> tuple:
    flat = value.reshape(-1) if value.flags.c_contiguous else value.ravel(order="K")
    picked = flat[_positions(flat.shape[0])] if flat.shape[0] else flat
    sample = _digest(picked) if value.dtype.kind != "O" else _hash(_repr(picked.tolist()))
    address = value.__array_interface__["data"][0]
    return ("array", value.shape, str(value.dtype), address, sample)


def _container(value: Any) -> tuple:
    size = _len(value)
    if isinstance(value, dict):
        keys = list(value)
        picked = keys[:ITEMS] + keys[-ITEMS:] if size > 2 * ITEMS else keys
        return ("dict", size, _tuple((str(k), _id(value[k])) for k in picked))
    if isinstance(value, (set, frozenset)):
        return ("set", size)
    items = list(value[:ITEMS]) + list(value[-ITEMS:]) if size > 2 * ITEMS else list(value)
    return ("seq", size, _tuple(_id(v) for v in items))


def _object(value: Any) -> tuple:
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict):
        return ("object",)
    items = list(attributes.items())[: ITEMS * 4]
    return ("object", _len(attributes), _tuple((k, _id(v)) for k, v in items))


def fingerprint(value: Any) -> tuple:
    """The value's fingerprint (see the module); ``("?",)`` when it cannot be taken."""
    kind = _type(value)
    name = kind.__name__
    module = getattr(kind, "__module__", "") or ""
    try:
        if isinstance(value, (int, float, complex, str, bytes, bool, type(None))):
            return ("value",)  # immutable: a change is a new object, seen by its identity
        if module.startswith("pandas"):
            if name == "DataFrame":
                return _frame(value)
            if name == "Series":
                return _series(value)
        if name == "ndarray" and module == "numpy":
            return _array(value)
        if isinstance(value, (list, tuple, dict, set, frozenset)):
            return _container(value)
        return _object(value)
    except Exception:  # any object may fail in any way: only its identity is then compared
        return ("?",)
