"""The approval policy against its corpus (``tests/vectors/policy_corpus.json``, which
``benchmarks/bench_policy.py`` measures too): every disguised risky snippet asks under
``risky``, at most 5% of everyday analysis snippets do, and every side-effecting step gets a
reason from ``analyse`` at the level recorded with it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from chapyter_ext.parsing.syntax import try_parse_cell
from chapyter_ext.policy import KNOWN, LIKELY, UNPROVEN_LEVEL, analyse, approval, defined_functions

CORPUS = json.loads((Path(__file__).parents[1] / "vectors" / "policy_corpus.json").read_text())
RISKY = [(e["label"], "\n".join(e["code"])) for e in CORPUS["risky"]]
EVERYDAY = [(e["label"], "\n".join(e["code"])) for e in CORPUS["everyday"]]
SETUP = "\n".join(CORPUS["side_effects_setup"])
STEPS = CORPUS["side_effects"]
MAX_FALSE_ALARMS = 0.05
RANK = {LIKELY: 0, UNPROVEN_LEVEL: 1, KNOWN: 2}
#: The classes of side effect the steps must cover.
CLASSES = {
    "file-write", "file-delete", "file-rename", "network", "dns", "process", "module-state",
    "render", "deserialisation", "native-plugin", "archive", "backend", "logger-progress",
    "earlier-object", "format-string", "probe", "install", "dynamic",
}  # fmt: skip


def test_the_corpus_is_as_large_as_promised():
    assert len(RISKY) >= 60 and len(EVERYDAY) >= 120 and len(STEPS) >= 120
    labels = [label for label, _ in RISKY + EVERYDAY] + [step["label"] for step in STEPS]
    assert len(set(labels)) == len(labels), "labels name one snippet each"


@pytest.mark.parametrize(("label", "code"), RISKY, ids=[label for label, _ in RISKY])
def test_every_risky_snippet_asks_with_one_line_reasons(label, code):
    needs, reasons = approval("risky", code)
    assert needs, f"{label}: ran unasked"
    assert all(reason and "\n" not in reason and len(reason) < 140 for reason in reasons)


def test_everyday_analysis_rarely_asks():
    asked = [(label, approval("risky", code)[1]) for label, code in EVERYDAY]
    asked = [(label, reasons) for label, reasons in asked if reasons]
    for label, reasons in asked:
        print(f"asked: {label}: {'; '.join(reasons)}")
    rate = len(asked) / len(EVERYDAY)
    print(f"everyday asked {len(asked)} of {len(EVERYDAY)} ({rate:.1%})")
    assert rate <= MAX_FALSE_ALARMS, asked


@pytest.mark.parametrize("policy", ["ask", "never"])
def test_ask_and_never_do_not_depend_on_the_code(policy):
    for _, code in RISKY[:10] + EVERYDAY[:10]:
        assert approval(policy, code)[0] is (policy == "ask")


def test_the_side_effect_steps_are_described_for_a_real_kernel():
    assert {step["class"] for step in STEPS} == CLASSES
    assert try_parse_cell(SETUP) is not None
    for step in STEPS:
        effect, code = step["effect"], "\n".join(step["code"])
        assert effect["kind"] in {"file", "connect", "dns", "process", "state", "render"}
        if "path" in effect:  # relative to the test's working folder, inside it
            assert not effect["path"].startswith(("/", "~")) and ".." not in effect["path"]
        if "port_var" in effect:
            assert effect["port_var"] in ("PORT", "DNS_PORT")
            assert effect["port_var"] in code or effect["kind"] in ("dns", "connect")
        if effect["kind"] == "state":
            compile(effect["check"], step["label"], "eval")
        assert "localhost" not in code and all(
            host in ("127.0.0.1", "leak.example", "www.w3.org") for host in _hosts(code)
        ), f"{step['label']}: loopback only"


def _hosts(code: str) -> list[str]:
    """The hosts a step names in an address (//host), for the loopback check."""
    hosts = []
    for piece in code.split("//")[1:]:
        host = piece.split("/")[0].split(":")[0].split('"')[0].split("'")[0]
        if host and host[0].isalnum() and "." in host:
            hosts.append(host if not host.endswith("leak.example") else "leak.example")
    return hosts


@pytest.mark.parametrize("step", STEPS, ids=[step["label"] for step in STEPS])
def test_every_side_effect_gets_a_reason_at_its_recorded_level(step):
    code = "\n".join(step["code"])
    reasons = analyse(code, known_functions=defined_functions([SETUP]))
    assert reasons, f"{step['label']}: nothing found"
    assert all(reason.text and "\n" not in reason.text for reason in reasons)
    strongest = max((reason.level for reason in reasons), key=RANK.__getitem__)
    assert strongest == step["level"], [reason.text for reason in reasons]


def test_side_effect_levels_are_reported():
    levels = Counter(step["level"] for step in STEPS)
    print(f"side effects: {dict(levels)} of {len(STEPS)}")
    assert set(levels) <= {KNOWN, UNPROVEN_LEVEL, LIKELY}
    assert levels[KNOWN] > len(STEPS) / 2  # most are named harms; the trial decides the rest


def test_knowing_the_setups_types_only_sharpens_the_levels():
    """With what the kernel holds after the setup (``known_types``), a step known to do harm
    stays known, and most of the rest become known too (a session's ``get``, an image's
    ``show``, an archive's ``extractall``)."""
    types = CORPUS["side_effects_setup_types"]
    known_functions = defined_functions([SETUP])
    sharper = 0
    for step in STEPS:
        code = "\n".join(step["code"])
        reasons = analyse(code, known_functions=known_functions, known_types=types)
        strongest = max((r.level for r in reasons), key=RANK.__getitem__, default=None)
        if step["level"] == KNOWN:
            assert strongest == KNOWN, (step["label"], [r.text for r in reasons])
        elif strongest == KNOWN:
            sharper += 1
    print(f"known once typed: {sharper} more")
    assert sharper >= 5
