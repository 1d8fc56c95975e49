"""The chat's and agent's streamed events and request bodies held to their contract
(``tests/vectors/contract.json``, sections ``events`` and ``requests``): what a test reads off a
real stream or builds with the event constructors, and a body it posts, is checked field by
field, so an event or body the contract does not describe fails a test."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "number": (int, float),
    "object": (dict,),
}


def event_types(events: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The contract's event types by name."""
    return {entry["event"]: entry for entry in events["types"]}


def fields_of(entry: dict[str, Any], stream: str) -> list[dict[str, Any]]:
    """The fields an event type has in ``stream`` (chat or agent)."""
    return [f for f in entry["fields"] if stream in f.get("streams", entry["streams"])]


def _type_ok(value: Any, kind: str) -> bool:
    if kind.endswith("[]"):
        return isinstance(value, list) and all(_type_ok(v, kind[:-2]) for v in value)
    if isinstance(value, bool) and kind == "number":
        return False  # JSON true is not a count
    return isinstance(value, _TYPES[kind])


def _problems(fields: list[dict[str, Any]], data: Any, where: str) -> list[str]:
    if not isinstance(data, dict):
        return [f"{where} is not an object"]
    known = {f["name"]: f for f in fields}
    problems = [
        f"{where} has {key!r}, which the contract lacks" for key in data if key not in known
    ]
    for name, spec in known.items():
        if name not in data:
            if spec["required"]:
                problems.append(f"{where} lacks the required {name!r}")
            continue
        value = data[name]
        if value is None and not spec["required"]:
            continue  # a step record's trial: null when none was made
        if not _type_ok(value, spec["type"]):
            problems.append(f"{where}.{name} is not a {spec['type']}: {value!r}")
        elif "items" in spec:
            values = value if isinstance(value, list) else [value]
            for index, item in enumerate(values):
                problems += _problems(spec["items"], item, f"{where}.{name}[{index}]")
    return problems


def event_problems(events: dict[str, Any], name: str, stream: str, data: Any) -> list[str]:
    """What is wrong with one event (its type ``name``, its ``data``) of a ``stream``, as the
    contract's ``events`` section says; empty when nothing is."""
    entry = event_types(events).get(name)
    if entry is None:
        return [f"event {name!r} is not in the contract"]
    if stream not in entry["streams"]:
        return [f"event {name!r} is not part of the {stream} stream"]
    return _problems(fields_of(entry, stream), data, f"{stream} {name}")


def request_routes(requests: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The contract's request routes (``requests`` section) by route, e.g. ``agent/result``."""
    return {entry["route"]: entry for entry in requests["routes"]}


def body_problems(requests: dict[str, Any], route: str, body: Any) -> list[str]:
    """What is wrong with a request ``body`` for ``route``, as the contract's ``requests``
    section says; empty when nothing is."""
    entry = request_routes(requests).get(route)
    if entry is None:
        return [f"route {route!r} is not in the contract"]
    return _problems(entry["fields"], body, f"POST {route}")
