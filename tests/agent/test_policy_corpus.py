"""The approval policy against its corpus (``tests/vectors/policy_corpus.json``, which
``benchmarks/bench_policy.py`` measures too): every disguised risky snippet asks under
``risky``, and at most 5% of everyday analysis snippets do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapyter_ext.policy import approval

CORPUS = json.loads((Path(__file__).parents[1] / "vectors" / "policy_corpus.json").read_text())
RISKY = [(e["label"], "\n".join(e["code"])) for e in CORPUS["risky"]]
EVERYDAY = [(e["label"], "\n".join(e["code"])) for e in CORPUS["everyday"]]
MAX_FALSE_ALARMS = 0.05


def test_the_corpus_is_as_large_as_promised():
    assert len(RISKY) >= 60 and len(EVERYDAY) >= 120
    labels = [label for label, _ in RISKY + EVERYDAY]
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
