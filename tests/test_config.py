"""Chapyter settings refuse bad values when they are set, with one line naming the setting."""

from __future__ import annotations

import math

import pytest
from traitlets import TraitError

from chapyter_ext.config import Chapyter


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("base_url", "http://[::1/v1", "Chapyter.base_url is not a valid URL"),
        ("base_url", "localhost:11434/v1", "http:// or https://"),
        ("base_url", "http://host:99999/v1", "not a valid URL"),
        ("base_url", "http://host/v1\n", "without spaces"),
        ("api_key", "sk-abc\ndef", "Chapyter.api_key must be printable ASCII"),
        ("model", "", "Chapyter.model must be a model name"),
        ("timeout", 0.0, "Chapyter.timeout must be a number of seconds above 0"),
        ("timeout", -1.0, "above 0"),
        ("timeout", math.inf, "above 0"),
        ("temperature", math.nan, "Chapyter.temperature must be a finite number"),
        ("temperature", math.inf, "finite"),
        ("temperature", -0.1, "0 or more"),
        ("max_tokens", 0, "Chapyter.max_tokens must be a whole number of 1 or more"),
        ("max_retries", -1, "Chapyter.max_retries must be a whole number of 0 or more"),
        ("context_budget", -5, "Chapyter.context_budget must be a whole number of 0 or more"),
        ("extra_headers", {"Bad Name": "v"}, "header name that HTTP does not allow"),
        ("extra_headers", {"X-Ok": "one\r\nX-Evil: two"}, "value for 'X-Ok'"),
        ("extra_headers", {"X-Ok": "caf\u00e9"}, "non-ASCII"),
    ],
)
def test_a_bad_value_is_refused_in_one_line(name, value, says):
    settings = Chapyter(base_url="http://localhost:1/v1", api_key="sk-good-0123")
    before = getattr(settings, name)
    with pytest.raises(TraitError) as caught:
        setattr(settings, name, value)
    message = str(caught.value)
    assert says in message and "\n" not in message.rstrip("\n"), message
    assert getattr(settings, name) == before  # unchanged


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("base_url", ""),
        ("base_url", "http://[::1]:8000/v1"),
        ("base_url", "https://api.example.com/v1"),
        ("api_key", ""),
        ("timeout", 0.5),
        ("temperature", 0.0),
        ("max_tokens", 1),
        ("max_retries", 0),
        ("context_budget", 0),
        ("extra_headers", {"HTTP-Referer": "https://example.com", "X-Title": "my notebook"}),
    ],
)
def test_good_values_pass(name, value):
    settings = Chapyter()
    setattr(settings, name, value)
    assert getattr(settings, name) == value


def test_config_files_are_checked_too():
    from traitlets.config import Config

    config = Config()
    config.Chapyter.timeout = 0
    with pytest.raises(TraitError, match=r"Chapyter\.timeout"):
        Chapyter(config=config)


def test_in_a_kernel_a_bad_value_is_one_line_and_a_bad_environment_too():
    from tests.kernel_harness import Kernel

    kernel = Kernel({"OPENAI_BASE_URL": "http://[::1/v1", "OPENAI_API_KEY": "sk-test-0123"})
    try:
        assert kernel.run("%load_ext chapyter_ext").status == "ok"
        run = kernel.run("%config Chapyter.timeout = 0")
        errors = [
            o["content"]["text"]
            for o in run.outputs
            if o["msg_type"] == "stream" and o["content"]["name"] == "stderr"
        ]
        assert len(errors) == 1 and errors[0].count("\n") == 1, errors
        assert "Chapyter.timeout must be a number of seconds above 0" in errors[0]
        assert kernel.run("%config Chapyter.timeout").outputs[-2]["content"]["data"] == {
            "text/plain": "60.0"
        }
        # The bad OPENAI_BASE_URL is only read on use: one line, no traceback.
        for code in ("%ai status", "%%ai\nplot it"):
            run = kernel.run(code)
            assert run.status == "error" and run.error["ename"] == "ChapyterError", run.error
            assert len(run.error["traceback"]) == 1
            assert "Chapyter.base_url is not a valid URL" in run.error["evalue"]
    finally:
        kernel.shutdown()


# ---------------------------------------------------------------------------------------------
# Secret values are never shown

KEY = "sk-test-CONFIGKEY-0123456789abcdef"
HEADER = "hdr-CONFIG-HEADER-0987654321"


def test_no_repr_help_or_listing_shows_a_secret(monkeypatch, capsys):
    from traitlets.config import Application, Config

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    config = Config()
    config.Chapyter.extra_headers = {"X-Secret": HEADER}
    config.Chapyter.base_url = "https://bob:pa55word-9876@llm.example/v1"
    settings = Chapyter(config=config)
    assert settings.api_key == KEY and settings.extra_headers == {"X-Secret": HEADER}

    class App(Application):
        classes = [Chapyter]  # noqa: RUF012

    App(config=config).print_help(classes=True)  # what --help-all prints
    print(App(config=config).generate_config_file())
    print(Chapyter.class_get_help(settings), settings, repr(settings.extra_headers))
    shown = capsys.readouterr().out + repr(settings.api_key) + repr(settings.base_url)
    assert "Current: <redacted>" in shown and "{'X-Secret': <redacted>}" in shown
    assert "bob:<redacted>@llm.example" in shown
    for secret in (KEY, HEADER, "pa55word-9876", KEY[-10:], HEADER[-10:]):
        assert secret not in shown


def test_a_secret_is_the_string_itself_where_it_is_used():
    import copy
    import json
    import pickle

    settings = Chapyter(api_key=KEY, extra_headers={"X-Secret": HEADER})
    assert f"Bearer {settings.api_key}" == f"Bearer {KEY}" and str(settings.api_key) == KEY
    assert json.dumps([settings.api_key, settings.extra_headers]) == json.dumps(
        [KEY, {"X-Secret": HEADER}]
    )
    assert pickle.loads(pickle.dumps(settings.api_key)) == KEY == copy.deepcopy(settings.api_key)
    settings.extra_headers["X-Later"] = "set-in-place-0123456789"  # shown hidden all the same
    assert "set-in-place" not in repr(settings.extra_headers)


@pytest.mark.parametrize(
    ("name", "value"),
    [("api_key", b"\xff" + KEY.encode()), ("api_key", 42), ("extra_headers", {"X": 42})],
)
def test_a_refused_secret_is_not_quoted(name, value):
    with pytest.raises(TraitError) as caught:
        setattr(Chapyter(), name, value)
    assert "not shown" in str(caught.value) and KEY not in str(caught.value)
    assert "42" not in str(caught.value)


def test_a_key_with_spaces_is_refused():
    with pytest.raises(TraitError, match="without spaces"):
        Chapyter().api_key = "sk-abc def"
