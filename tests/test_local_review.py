"""Review first with the bundled local model (``Chapyter.local_review``): its code is inserted
below, not run, and the progress line says so; configured endpoints run as before."""

from __future__ import annotations

import os
import time

import pytest

from chapyter_ext.config import Chapyter
from chapyter_ext.contract import PROGRESS_MIME, parse_magic_line
from chapyter_ext.endpoints import describe_endpoint
from chapyter_ext.magic.magics import REVIEW_NOTE, review_first
from tests.kernel_harness import Kernel
from tests.test_local_model import needs_local_model


@pytest.fixture
def no_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "CHAPYTER_")):
            monkeypatch.delenv(name)


def test_review_first_only_for_the_bundled_local_model(no_endpoint_env):
    plain = parse_magic_line("")
    assert review_first(Chapyter(), plain) is True
    # An explicit --run still runs; the setting turns it off; --no-run is review anyway.
    assert review_first(Chapyter(), parse_magic_line("--run")) is False
    assert review_first(Chapyter(local_review=False), plain) is False
    # A configured endpoint (a key, or a base URL such as Ollama's) runs at once.
    assert review_first(Chapyter(api_key="sk-test"), plain) is False
    assert review_first(Chapyter(base_url="http://127.0.0.1:11434/v1"), plain) is False
    # The local model turned off: nothing local answers, nothing to review.
    assert review_first(Chapyter(local_model=False), plain) is False


def test_local_review_is_a_documented_setting():
    trait = Chapyter.class_traits()["local_review"]
    assert trait.default_value is True and "local model" in trait.help


@needs_local_model
def test_ai_status_says_the_local_model_is_review_first(no_endpoint_env):
    said = [line for line in describe_endpoint(Chapyter()) if line.startswith("review:")]
    assert said == [
        "review:   its code waits below for your review, not run "
        "(setting: Local review, Chapyter.local_review)"
    ]
    off = describe_endpoint(Chapyter(local_review=False))
    assert not [line for line in off if line.startswith("review:")]


@needs_local_model
def test_ai_with_the_bundled_model_inserts_for_review(tmp_path):
    kernel = Kernel({"JUPYTER_RUNTIME_DIR": str(tmp_path)})  # strips every OPENAI_*/CHAPYTER_*
    try:
        assert kernel.run("%load_ext chapyter_ext").status == "ok"
        assert kernel.run("%config Chapyter.max_tokens = 64").status == "ok"
        started = time.monotonic()
        run = kernel.run("%%ai --no-context\nset x to 42", timeout=300)
        print(f"%%ai with the bundled model: {run.status} in {time.monotonic() - started:.1f} s")
        if run.status != "ok":  # the tiny model wrote no code: one clear line, nothing inserted
            assert run.error["ename"] == "ChapyterError" and run.next_input is None
            pytest.skip(f"the bundled model wrote no usable code: {run.error['evalue']}")
        assert run.next_input["chapyter"]["run"] is False
        done = run.displays(PROGRESS_MIME)[-1]
        assert done["state"] == "done"
        plain = run.displays("text/plain")[-1]
        # Words a newcomer understands: the setting by its name, no trait.
        assert "inserted below: it waits for your review (setting: Local review)" in plain
        assert REVIEW_NOTE in plain and "Chapyter." not in plain
    finally:
        kernel.shutdown()
