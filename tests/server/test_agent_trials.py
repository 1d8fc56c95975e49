"""Trials through the real server (``agent/trial``): a step the analysis cannot prove harmless
carries the user expression that tries it in the kernel; the browser posts the kernel's report
and the server answers whether the step asks, with what the trial saw, and the guard to arm
when it runs unasked. A kernel that cannot make trials is told once per chat.

The test plays the browser (:mod:`.agent_browser`): the reports are what a kernel gives for
the step (their making is tested against real kernels in ``tests/trial``)."""

from __future__ import annotations

import ast
import asyncio
import json
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply

from .agent_browser import CLEAN_TRIAL, Browser, agent_body, run_code, stdout
from .conftest import API_KEY

UNPROVEN = "import mystery\nmystery.go(df)"  # a call the lists do not know: the trial decides
LIKELY = "session.refresh(df)"  # a method of an object from an earlier cell, named like a read
KNOWN = "df.to_csv('out.csv')"
WROTE = {
    "status": "ran",
    "attempts": [{"kind": "write", "target": "out.csv", "line": "tried to write out.csv"}],
    "stdout": "done\n",
}


@pytest.fixture
def browser(jp_fetch: Any, get_json: Any) -> Browser:
    return Browser(jp_fetch, get_json)


def trial_call(expression: str) -> tuple[str, tuple]:
    """The function the trial expression calls and its literal arguments."""
    tree = ast.parse(expression, mode="eval").body
    assert isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute)
    outer = tree.func.value
    assert isinstance(outer, ast.Call) and ast.literal_eval(outer.args[0]) == (
        "chapyter_ext.trial.kernel"
    )
    return tree.func.attr, tuple(ast.literal_eval(a) for a in tree.args[1:])


async def test_unproven_code_is_tried_and_runs_unasked_when_clean(browser, fake):
    fake.script(Reply(tool_calls=[run_code(UNPROVEN)]), Reply(content="done"))
    await browser.run(agent_body(policy="risky"), lambda step: stdout("ok\n"))
    (step,) = browser.steps()
    assert step["needs_approval"] is True  # until the trial says otherwise
    function, arguments = trial_call(step["trial"])
    assert function == "trial" and arguments == (UNPROVEN, 10.0, 2048)
    decision = browser.decisions[step["step_id"]]
    assert decision["needs_approval"] is False
    assert trial_call(decision["guard"]) == ("arm", (UNPROVEN,))
    assert decision["concerns"] == [] and decision["reasons"] == []


async def test_what_the_trial_tried_makes_it_ask_and_says_so(browser, fake, get_json):
    fake.script(Reply(tool_calls=[run_code(UNPROVEN)]), Reply(content="not run"))
    browser.trial_report = lambda step: {"report": WROTE}
    reader = await browser.run(agent_body(policy="risky"), lambda step: {"status": "skipped"})
    (step,) = browser.steps()
    decision = browser.decisions[step["step_id"]]
    assert decision["needs_approval"] is True and decision["guard"] is None
    assert decision["concerns"] == ["tried to write out.csv"]
    assert decision["preview"] == ["prints: done"]
    assert any("mystery" in line for line in decision["reasons"])
    # The history keeps what the trial saw with the step.
    (record,) = reader.first("done")["steps"]
    assert record["trial"] == {
        "status": "ran",
        "concerns": ["tried to write out.csv"],
        "preview": ["prints: done"],
        "ran": False,
    }


@pytest.mark.parametrize("policy", ["risky", "ask"])
async def test_known_harm_and_policy_ask_always_ask_with_the_preview(browser, fake, policy):
    fake.script(Reply(tool_calls=[run_code(KNOWN)]), Reply(content="ok"))
    await browser.run(agent_body(policy=policy), lambda step: {"status": "skipped"})
    (step,) = browser.steps()
    assert step["trial"]
    decision = browser.decisions[step["step_id"]]
    assert decision["needs_approval"] is True and decision["guard"] is None
    assert decision["reasons"] and "writes files" in decision["reasons"][0]


async def test_a_kernel_without_trials_is_told_once_and_the_analysis_decides(
    browser, fake, get_json
):
    fake.script(
        Reply(tool_calls=[run_code(LIKELY)]),
        Reply(tool_calls=[run_code(UNPROVEN)]),
        Reply(content="first turn"),
        Reply(tool_calls=[run_code(LIKELY + "\n")]),
        Reply(content="second turn"),
    )
    failure = {"failure": {"ename": "ModuleNotFoundError", "evalue": "No module named 'x'"}}
    browser.trial_report = lambda step: failure
    reader = await browser.run(
        agent_body(policy="risky"),
        lambda step: stdout("ok\n") if not step["needs_approval"] else {"status": "skipped"},
    )
    first, second = browser.steps()
    decision = browser.decisions[first["step_id"]]
    # A name-based guess runs as it did before trials; the trial's absence is said once.
    assert decision["needs_approval"] is False and decision["guard"] is None
    assert "the kernel cannot import chapyter-ext" in decision["notice"]
    notices = [e["message"] for e in reader.all("notice")]
    assert sum("No trial runs here" in n for n in notices) == 1
    # Trials are off for the rest of the turn: unproven code asks at once.
    assert "trial" not in second and second["needs_approval"] is True
    chat_id = reader.first("start")["chat_id"]
    again = Browser(browser.jp_fetch, browser.get_json)
    again.trial_report = lambda step: failure
    reader = await again.run(
        agent_body(policy="risky", chat_id=chat_id), lambda step: stdout("ok\n")
    )
    (step,) = again.steps()
    assert again.decisions[step["step_id"]]["notice"] is None
    assert not any("No trial runs here" in e["message"] for e in reader.all("notice"))


async def test_what_the_trial_printed_is_redacted(browser, fake):
    fake.script(Reply(tool_calls=[run_code(UNPROVEN)]), Reply(content="ok"))
    leaky = {**WROTE, "stdout": f"key={API_KEY}\n"}
    browser.trial_report = lambda step: {"report": leaky}
    await browser.run(agent_body(policy="risky"), lambda step: {"status": "skipped"})
    (step,) = browser.steps()
    assert API_KEY not in json.dumps(browser.decisions[step["step_id"]])


async def test_a_trial_nobody_waits_for_is_refused(get_json):
    report = {"message_id": "gone", "step_id": "step-1", "report": CLEAN_TRIAL}
    status, body = await get_json("chapyter-ext", "agent", "trial", method="POST", body=report)
    assert status == 404 and "No agent turn" in body["error"]["message"]
    report["report"] = {"status": "bogus"}
    status, body = await get_json("chapyter-ext", "agent", "trial", method="POST", body=report)
    assert status == 400 and "'trial'" in body["error"]["message"]


async def test_a_second_report_for_the_same_step_is_refused(browser, fake, get_json):
    fake.script(Reply(tool_calls=[run_code(UNPROVEN)]), Reply(content="ok"))
    browser.start(agent_body(policy="risky"))
    while not browser.steps():
        await asyncio.sleep(0.01)
    (step,) = browser.steps()
    ids = {"message_id": browser.message_id, "step_id": step["step_id"]}
    posted = [
        await get_json(
            "chapyter-ext", "agent", "trial", method="POST", body={**ids, "report": CLEAN_TRIAL}
        )
        for _ in range(2)
    ]
    assert [status for status, _ in posted] == [200, 404]
    assert await browser.post_result({**ids, "status": "skipped"}) == (200, {"ok": True})
    assert browser.task is not None
    assert (await browser.task).code == 200


@pytest.mark.chapyter_config({"Chapyter": {"trials": False}})
async def test_trials_off_means_the_analysis_alone_decides(browser, fake):
    fake.script(Reply(tool_calls=[run_code(LIKELY)]), Reply(content="ok"))
    await browser.run(agent_body(policy="risky"), lambda step: stdout("ok\n"))
    (step,) = browser.steps()
    assert "trial" not in step and step["needs_approval"] is False
