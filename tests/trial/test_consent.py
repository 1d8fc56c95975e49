"""The one decision before model code runs (``chapyter_ext.policy.consent``), by policy, level
and trial: what runs at once, what is tried, what asks, and what a trial's report changes."""

from __future__ import annotations

import pytest

from chapyter_ext.policy.consent import ASK, MAGIC_REFUSAL, RUN, TRIAL, after_trial, plan
from chapyter_ext.trial import Attempt, TrialReport

PROVEN = "total = sum(range(10))\nprint(total)"
LIKELY = "session.refresh(df)"  # a safe-sounding method of an object from an earlier cell
UNPROVEN = "import mystery\nmystery.go(df)"
KNOWN = "df.to_csv('out.csv')"
CLEAN = TrialReport(status="ran", stdout="42\n")
TRIED = TrialReport(status="ran", attempts=[Attempt("write", "out.csv", "tried to write out.csv")])
GONE = TrialReport.unavailable("the kernel cannot import chapyter-ext")


@pytest.mark.parametrize(
    ("policy", "code", "trials", "action"),
    [
        ("never", KNOWN, True, RUN),
        ("risky", PROVEN, True, RUN),
        ("risky", LIKELY, True, TRIAL),
        ("risky", UNPROVEN, True, TRIAL),
        ("risky", KNOWN, True, TRIAL),  # for the card's preview; it asks whatever it shows
        ("risky", LIKELY, False, RUN),  # a name-based guess runs where no trial can be made
        ("risky", UNPROVEN, False, ASK),
        ("risky", KNOWN, False, ASK),
        ("ask", PROVEN, True, ASK),
        ("ask", LIKELY, True, TRIAL),
        ("ask", LIKELY, False, ASK),
    ],
)
def test_the_plan(policy, code, trials, action):
    assert plan(policy, code, trials=trials).action == action


def test_a_call_of_ai_is_refused_whatever_the_policy():
    for policy in ("never", "risky", "ask"):
        assert plan(policy, "%ai models").refused == MAGIC_REFUSAL


@pytest.mark.parametrize(
    ("code", "report", "runs"),
    [
        (LIKELY, CLEAN, True),
        (UNPROVEN, CLEAN, True),
        (LIKELY, TRIED, False),
        (KNOWN, CLEAN, False),  # a named harm asks even when its trial shows nothing
        (LIKELY, TrialReport(status="timeout", reason="the trial stopped after 10 s"), False),
        (LIKELY, GONE, True),  # no trial: a guess runs as before trials
        (UNPROVEN, GONE, False),
    ],
)
def test_after_the_trial_under_risky(code, report, runs):
    consent = after_trial(plan("risky", code), report)
    assert consent.run is runs
    # Unasked after a trial means guarded; without a trial there is nothing to hold it to.
    assert consent.guarded is (runs and report is not GONE)


def test_what_asks_says_why_and_what_the_trial_saw():
    consent = after_trial(plan("risky", LIKELY), TRIED)
    assert consent.concerns == ("tried to write out.csv",)
    assert consent.why == "tried to write out.csv"
    assert consent.reasons and "session.refresh" in consent.reasons[0]
    cleared = after_trial(plan("risky", LIKELY), CLEAN)
    assert cleared.reasons == () and cleared.preview == ("prints: 42",)
    assert after_trial(plan("risky", UNPROVEN), GONE).unavailable == (
        "the kernel cannot import chapyter-ext"
    )


def test_under_ask_a_clean_trial_still_asks_with_its_preview():
    consent = after_trial(plan("ask", LIKELY), CLEAN)
    assert not consent.run and consent.preview == ("prints: 42",)
