"""One declaration per setting: the settings reference is generated from the traits, the
validation and the administrator's locks read the traits' metadata, and the browser's own
defaults agree with its schema and with the server's traits they mirror."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from traitlets import Float, Int, TraitError

from chapyter_ext.admin import stricter
from chapyter_ext.config import Chapyter
from chapyter_ext.settings_doc import render

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "labextension" / "schema"
#: Where the frontend keeps the defaults it falls back on, per schema file.
TS_DEFAULTS = {
    "chat.json": (ROOT / "labextension/src/chat/tokens.ts", "DEFAULT_CHAT_SETTINGS"),
    "notebook.json": (ROOT / "labextension/src/tokens.ts", "DEFAULT_NOTEBOOK_SETTINGS"),
}
#: Frontend settings that start from a server trait's value: (schema file, key) -> trait.
MIRRORS = {("chat.json", "sendContext"): "send_context"}


def test_settings_reference_is_generated_from_the_traits() -> None:
    written = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert written == render(), (
        "docs/settings.md drifted from the traits: run "
        "`python -m chapyter_ext.settings_doc > docs/settings.md`"
    )


def test_every_setting_has_one_row_with_its_env_and_lock() -> None:
    text = render()
    for name, trait in Chapyter.class_traits(config=True).items():
        (row,) = [line for line in text.splitlines() if line.startswith(f"| `Chapyter.{name}` ")]
        env = trait.metadata.get("env")
        assert (f"`{env}`" in row) if env else row.split("|")[2].strip() == ""
        assert env is None or f"env {env}" in trait.help  # the help names the same variable
    assert "| `ChapyterExtApp.history_messages_sent` |" in text
    assert "ChapyterExtApp.open_browser" not in text  # jupyter_server's own, not ours


def _numeric() -> list[tuple[str, object]]:
    return [
        (name, trait)
        for name, trait in Chapyter.class_traits(config=True).items()
        if "bounds" in trait.metadata or "above" in trait.metadata
    ]


@pytest.mark.parametrize("name", [name for name, _ in _numeric()])
def test_bounds_metadata_is_what_validation_enforces(name: str) -> None:
    trait = Chapyter.class_traits()[name]
    low, high = trait.metadata.get("bounds", (None, None))
    above = trait.metadata.get("above")
    step = 1 if isinstance(trait, Int) else 0.5
    assert isinstance(trait, (Int, Float))
    settings = Chapyter()
    edges: list[tuple[float, bool]] = []
    if low is not None:
        edges += [(low, True), (low - step, False)]
    if high is not None:
        edges += [(high, True), (high + step, False)]
    if above is not None:
        edges += [(above, False), (above + step, True)]
    assert edges
    for value, fine in edges:
        if fine:
            setattr(settings, name, value)
            assert getattr(settings, name) == value
        else:
            with pytest.raises(TraitError, match=rf"^Chapyter\.{name} must be "):
                setattr(settings, name, value)


def test_choices_metadata_is_what_validation_enforces() -> None:
    settings = Chapyter()
    for name, trait in Chapyter.class_traits(config=True).items():
        choices = trait.metadata.get("choices")
        if not choices:
            continue
        setattr(settings, name, choices[-1].upper())
        assert getattr(settings, name) == choices[-1]
        with pytest.raises(TraitError, match=f"must be one of {', '.join(choices)}, not 'x'"):
            setattr(settings, name, "x")


def test_lock_metadata_is_what_a_lock_holds() -> None:
    for trait in Chapyter.class_traits(config=True).values():
        lock = trait.metadata.get("lock")
        if lock == "lower":
            assert stricter(lock, 1, 2) == 1 and stricter(lock, 3, 2) == 2
        elif lock in ("on", "off"):
            strict = lock == "on"
            assert stricter(lock, strict, not strict) is strict
            assert stricter(lock, not strict, strict) is strict
        elif lock:
            assert stricter(lock, lock[0], lock[-1]) == lock[0]
            assert stricter(lock, lock[-1], lock[0]) == lock[0]
        else:
            assert stricter(lock, "mine", "admin's") == "admin's"


def _ts_defaults(path: Path, const: str) -> dict[str, object]:
    """The object literal ``const`` of a TypeScript module, read as JSON-ish values."""
    text = path.read_text(encoding="utf-8")
    body = re.search(rf"export const {const}\b[^=]*=\s*\{{(.*?)\n\}};", text, re.S)
    assert body, f"{const} not found in {path}"
    values = {}
    for key, raw in re.findall(r"^\s*(\w+):\s*(.+?),?\s*$", body.group(1), re.M):
        values[key] = json.loads(raw.replace("'", '"'))
    return values


@pytest.mark.parametrize("schema", sorted(TS_DEFAULTS))
def test_frontend_defaults_are_the_schema_defaults(schema: str) -> None:
    properties = json.loads((SCHEMA / schema).read_text(encoding="utf-8"))["properties"]
    declared = {key: spec["default"] for key, spec in properties.items()}
    assert _ts_defaults(*TS_DEFAULTS[schema]) == declared


def test_mirrored_frontend_defaults_agree_with_the_traits() -> None:
    for (schema, key), trait in MIRRORS.items():
        properties = json.loads((SCHEMA / schema).read_text(encoding="utf-8"))["properties"]
        assert properties[key]["default"] == Chapyter.class_traits()[trait].default(), key
    # The chat's policy select offers the server's choices, or '' for the server's default.
    agent_policy = json.loads((SCHEMA / "chat.json").read_text(encoding="utf-8"))
    offered = agent_policy["properties"]["agentPolicy"]["enum"]
    assert offered == ["", *Chapyter.class_traits()["agent_policy"].metadata["choices"]]
