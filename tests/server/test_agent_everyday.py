"""Everyday analysis under ``risky`` with trials: an analysis session of our own
(``tests/vectors/everyday_session.json``: load, clean, group, plot, test, fit) run by the agent
through the real server and a real kernel, nobody approving, runs unasked (what the analysis
cannot prove is tried first and runs under the guard) and gives exactly the results the same
steps give when a person runs them in a kernel of their own."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.testing.openai_server import Reply
from chapyter_ext.trial.confine import unavailable
from tests.kernel_harness import Kernel

from .agent_browser import agent_body, run_code
from .kernel_browser import KernelBrowser, KernelThread, nbformat_outputs

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

SESSION = json.loads((Path(__file__).parents[1] / "vectors" / "everyday_session.json").read_text())
SETUP = "\n".join(SESSION["setup"])
STEPS = ["\n".join(step["code"]) for step in SESSION["steps"]]
#: What may differ between two runs of the same code: addresses, and every number of a
#: timing (``%timeit``).
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _quiet(text: str) -> str:
    text = _ADDRESS.sub("0x…", text)
    if "per loop" not in text:
        return text
    # %timeit's warning about a slow first run comes and goes with the machine's load.
    kept = [line for line in text.splitlines() if "slowest run" not in line]
    return _NUMBER.sub("#", "\n".join(kept))


def _kernel(folder: Path) -> Kernel:
    kernel = Kernel({"CHAPYTER_MODEL": "fake-model"})
    for code in (f"import os\nos.chdir({str(folder)!r})", SETUP, "%matplotlib inline"):
        ran = kernel.run(code)
        assert ran.status == "ok", ran.error
    return kernel


def _shown(outputs: list[dict[str, Any]]) -> list[Any]:
    """What a person sees of outputs, less the noise (images by kind only)."""
    seen: list[Any] = []
    for output in outputs:
        if output["output_type"] == "stream":
            seen.append(("stream", output["name"], _quiet(output["text"])))
        elif output["output_type"] == "error":
            seen.append(("error", output["ename"], output["evalue"]))
        else:
            data = output["data"]
            text = _quiet(data.get("text/plain", ""))
            seen.append(("data", sorted(data), text if "image/png" not in data else ""))
    return seen


def _direct(kernel: Kernel, steps: list[str]) -> list[list[Any]]:
    return [_shown(nbformat_outputs(kernel.run(code).outputs)) for code in steps]


@pytest.mark.chapyter_config(
    {"Chapyter": {"agent_max_steps": 100, "agent_time_limit": 1800.0, "agent_policy": "risky"}}
)
async def test_everyday_analysis_runs_unasked_with_the_same_results(
    tmp_path, fake, jp_fetch, get_json
):
    agent_folder, own_folder = tmp_path / "agent", tmp_path / "own"
    agent_folder.mkdir()
    own_folder.mkdir()
    thread = KernelThread()
    agent_kernel = await thread.call(_kernel, agent_folder)
    own_kernel = await thread.call(_kernel, own_folder)
    try:
        browser = KernelBrowser(jp_fetch, get_json, agent_kernel, thread)
        fake.script(*[Reply(tool_calls=[run_code(code)]) for code in STEPS], Reply(content="ok"))
        reader = await browser.turn(agent_body("Analyse the sales.", policy="risky"))
        assert reader.first("done")["status"] == "complete", reader.first("done")
        handled = browser.handled
        assert len(handled) == len(STEPS)
        ran = [h for h in handled if h.ran]
        asked = [(h.step["code"], h.decision or h.step["reasons"]) for h in handled if h.asked]
        tried = sum(1 for h in ran if h.decision is not None)
        print(
            f"everyday session: {len(handled)} steps, {len(ran)} ran unasked "
            f"({tried} after a clean trial), {len(asked)} asked: {asked}"
        )
        assert len(ran) / len(handled) >= 0.95, asked
        # The same steps run by a person in a kernel of their own show the same.
        own = await thread.call(_direct, own_kernel, [h.step["code"] for h in ran])
        for item, expected in zip(ran, own):
            assert _shown(item.outputs) == expected, item.step["code"]
        assert not [h for h in ran if any(o["output_type"] == "error" for o in h.outputs)]
    finally:
        await thread.call(agent_kernel.shutdown)
        await thread.call(own_kernel.shutdown)
        thread.close()
