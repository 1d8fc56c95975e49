"""The agent under ``risky``, with nobody to approve, over a corpus of side-effecting steps
(``tests/vectors/policy_corpus.json``'s ``side_effects``): through the real server, a real
kernel and the frontend's way of trying, arming and running steps (:mod:`.kernel_browser`),
not one of them changes anything outside the kernel's memory. After every step the world is
checked, not the report: the working folder, a loopback TCP listener, a loopback UDP
listener standing in for DNS, the markers programs would leave, the session's own state.

Every step either asked (its trial or the analysis named what it would do) or ran unasked
after a clean trial, under the guard. Steps that only change the notebook's own objects (a
column added to ``df``) are analysis, not side effects: they may run, and their trial's
preview names the change.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply
from chapyter_ext.trial.confine import unavailable
from tests.kernel_harness import Kernel
from tests.trial.witnesses import TcpWitness, UdpWitness, folder_state

from .agent_browser import agent_body, run_code
from .kernel_browser import Handled, KernelBrowser, KernelThread, silent_value

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

CORPUS = json.loads((Path(__file__).parents[1] / "vectors" / "policy_corpus.json").read_text())
SETUP = "\n".join(CORPUS["side_effects_setup"])
STEPS = CORPUS["side_effects"]
#: Steps per turn (the step cap is at most 100).
PER_TURN = 90
#: Steps that change the notebook's own objects: analysis, shown in the preview.
OWN_OBJECT_STEPS = {"notes.append(len(df))", 'df.columns = ["c", "d"]', 'df["leak"] = 1'}


def _kernel(folder: Path, setup: str) -> Kernel:
    """A kernel in ``folder`` that ran ``setup`` (blocking: called in a thread, as jupyter_client's
    blocking client cannot run on the test's event loop)."""
    kernel = Kernel({"CHAPYTER_MODEL": "fake-model"})
    for code in (f"import os\nos.chdir({str(folder)!r})", setup):
        ran = kernel.run(code)
        assert ran.status == "ok", ran.error
    return kernel


@pytest.fixture
def witnesses():
    tcp, udp = TcpWitness(), UdpWitness()
    yield tcp, udp
    tcp.close()
    udp.close()


async def _check(browser: KernelBrowser, expression: str) -> bool:
    entry = await browser.thread.call(silent_value, browser.kernel, f"bool({expression})")
    return entry.get("status") == "ok" and entry["data"]["text/plain"] == "True"


@pytest.mark.chapyter_config(
    {"Chapyter": {"agent_max_steps": 100, "agent_time_limit": 1800.0, "agent_policy": "risky"}}
)
async def test_no_side_effect_runs_unasked(witnesses, tmp_path, fake, jp_fetch, get_json):
    tcp, udp = witnesses
    folder = tmp_path / "work"
    folder.mkdir()
    ports = f"PORT, DNS_PORT = {tcp.port}, {udp.port}\n"
    thread = KernelThread()
    kernel = await thread.call(_kernel, folder, ports + SETUP)
    try:
        browser = KernelBrowser(jp_fetch, get_json, kernel, thread)
        await _run_corpus(browser, folder, tcp, udp, fake)
    finally:
        await thread.call(kernel.shutdown)
        thread.close()


async def _run_corpus(browser: KernelBrowser, folder, tcp, udp, fake) -> None:
    effects: list[str] = []
    own: list[Handled] = []
    before: dict[str, Any] = {}

    async def look(index: int) -> None:
        """The world before step ``index``."""
        before["folder"], before["tcp"] = folder_state(folder), tcp.count
        if index < len(STEPS) and STEPS[index]["effect"]["kind"] == "state":
            before["state"] = await _check(browser, STEPS[index]["effect"]["check"])

    async def after(handled: Handled) -> None:
        index = len(browser.handled) - 1
        step = STEPS[index]
        effect, label = step["effect"], step["label"]
        mine = handled.ran and "\n".join(step["code"]) in OWN_OBJECT_STEPS
        if mine:
            own.append(handled)
        if folder_state(folder) != before["folder"]:
            effects.append(f"{label}: the folder changed")
        if tcp.count != before["tcp"]:
            effects.append(f"{label}: a connection reached the listener")
        if udp.count():
            effects.append(f"{label}: a datagram reached the DNS listener")
        state = effect["kind"] == "state" and not mine and not before["state"]
        if state and await _check(browser, effect["check"]):
            effects.append(f"{label}: {effect['check']}")
        if effect["kind"] == "render" and handled.ran:
            effects.append(f"{label}: rendering content that fetches ran unasked")
        await look(index + 1)

    await look(0)
    for start in range(0, len(STEPS), PER_TURN):
        chunk = STEPS[start : start + PER_TURN]
        fake.script(
            *[Reply(tool_calls=[run_code("\n".join(step["code"]))]) for step in chunk],
            Reply(content="done"),
        )
        reader = await browser.turn(agent_body("Do these steps.", policy="risky"), after)
        assert reader.first("done")["status"] == "complete", reader.first("done")
    handled = browser.handled
    assert len(handled) == len(STEPS) >= 100
    outcome = Counter(
        "asked after its trial" if h.asked and h.decision else "asked" if h.asked else "ran"
        for h in handled
    )
    print(f"side-effect corpus: {len(handled)} steps, {dict(outcome)}, effects: {effects}")
    # No trial failed to start: every one of them ran (the guard's threads included).
    assert not [h for h in handled if h.decision and h.decision["notice"]]
    assert effects == []
    # Everything that ran unasked ran after a clean trial, under the guard.
    for item in handled:
        if item.ran:
            assert item.decision is not None and item.decision["guard"], item.step["code"]
    for item in own:
        assert item.decision is not None
        assert any(line.startswith("changes") for line in item.decision["preview"])
