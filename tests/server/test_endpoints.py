"""Named endpoints built from ChapyterExtApp.models and the shared Chapyter settings."""

from __future__ import annotations

import pytest

from chapyter_ext.config import Chapyter
from chapyter_ext.endpoints import EndpointConfigError, ModelRegistry

SHARED_URL = "https://llm.example.com/v1"


@pytest.fixture
def settings() -> Chapyter:
    return Chapyter(
        base_url=SHARED_URL,
        api_key="sk-shared-key-0001",
        model="big-model",
        temperature=0.7,
        extra_headers={"X-Org": "org-secret-0002"},
    )


def test_no_models_means_the_shared_endpoint(settings):
    registry = ModelRegistry.from_config({}, "", settings)
    assert list(registry) == ["big-model"]
    name, endpoint = registry.resolve(None)
    assert (name, endpoint.model, endpoint.api_key) == ("big-model", "big-model", settings.api_key)
    assert registry.public_info() == [
        {"name": "big-model", "model": "big-model", "host": "llm.example.com"}
    ]


def test_entries_inherit_settings_but_not_credentials_for_other_hosts(settings):
    registry = ModelRegistry.from_config(
        {
            "same": {"model": "small-model", "max_tokens": 99},
            "local": {"model": "llama3", "base_url": "http://localhost:11434/v1"},
            "own-key": {"base_url": "http://other:1/v1", "api_key": "sk-other-key-0003"},
        },
        "local",
        settings,
    )
    assert registry.default == "local"
    same, local, own = (registry.resolve(n)[1] for n in ("same", "local", "own-key"))
    assert (same.base_url, same.api_key, same.max_tokens) == (SHARED_URL, settings.api_key, 99)
    assert same.extra_headers == (("X-Org", "org-secret-0002"),)
    assert same.temperature == 0.7
    assert (local.api_key, local.extra_headers, local.temperature) == ("", (), 0.7)
    assert (own.model, own.api_key) == ("own-key", "sk-other-key-0003")
    assert set(registry.secrets()) == {"sk-shared-key-0001", "org-secret-0002", "sk-other-key-0003"}
    info = registry.public_info()
    assert [m["host"] for m in info] == ["llm.example.com", "localhost:11434", "other:1"]
    assert not any(s in str(info) for s in registry.secrets())
    assert not any(s in repr(local) + repr(same) for s in registry.secrets())


@pytest.mark.parametrize(
    ("models", "default"),
    [
        ({"x": {"modle": "typo"}}, ""),
        ({"x": "not a dict"}, ""),
        ({"x": {"model": "m"}}, "y"),
        ({}, "nope"),
        ({"x": {"temperature": "hot", "max_tokens": None, "extra_headers": 3}}, ""),
        ({"x": {"timeout": 0}}, ""),
        ({"x": {"temperature": float("nan")}}, ""),
        ({"x": {"max_tokens": 0}}, ""),
        ({"x": {"base_url": "http://[::1/v1"}}, ""),
        ({"x": {"extra_headers": {"X-A": "one\ntwo"}}}, ""),
    ],
)
def test_bad_configuration_is_refused(settings, models, default):
    with pytest.raises(EndpointConfigError):
        ModelRegistry.from_config(models, default, settings)


def test_unknown_name_is_a_key_error(settings):
    with pytest.raises(KeyError):
        ModelRegistry.from_config({}, "", settings).resolve("missing")


def test_a_model_override_changes_only_the_model(settings):
    registry = ModelRegistry.from_config({}, "", settings)
    name, endpoint = registry.resolve(None, model="other-model")
    assert (name, endpoint.model, endpoint.base_url) == ("big-model", "other-model", SHARED_URL)
    assert registry.model_name(None, model="other-model") == "other-model"
    assert registry.model_name(None) == "big-model"


async def test_aresolve_matches_resolve(settings):
    registry = ModelRegistry.from_config(
        {"a": {"model": "m1"}, "b": {"model": "m2"}}, "b", settings
    )
    assert (
        await registry.aresolve(None) == registry.resolve(None) == ("b", registry.resolve("b")[1])
    )
    with pytest.raises(KeyError):
        await registry.aresolve("c")
    await registry.aclose()  # no local model: nothing to stop
    registry.close()


def test_kernel_registry_and_status_lines(settings):
    from chapyter_ext.endpoints import describe_endpoint, kernel_registry

    registry = kernel_registry(settings)
    assert registry.local is None and list(registry) == ["big-model"]
    lines = describe_endpoint(settings)
    assert lines[:3] == [
        "endpoint: llm.example.com",
        "model:    big-model",
        "api key:  set: this kernel holds the key",
    ]
    assert not any(s in "\n".join(lines) for s in registry.secrets())
