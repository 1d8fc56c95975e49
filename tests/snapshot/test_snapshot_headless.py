"""``chapyter-ext agent`` and Undo: a turn whose steps fail until it stops leaves the kernel's
variables as it found them (said in one line); ``--keep-state`` leaves them as the steps did.
The loopback model scripts the failing steps; the notebook's kernel is real (nbclient)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from traitlets.config import Config

from chapyter_ext.agent.headless import AgentRun, _Turn
from chapyter_ext.agent.notebook_kernel import NotebookKernel
from chapyter_ext.config import Chapyter
from chapyter_ext.endpoints import kernel_registry
from chapyter_ext.snapshot.store import unavailable
from chapyter_ext.testing.openai_server import Reply
from tests.kernel_harness import python3_notebook
from tests.test_agent_headless import agent_env

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

SETUP = (
    "import pandas as pd\ndf = pd.DataFrame({'a': [1.0, 2.0, 3.0]})\nx = 'kept'\n"
    "_before = df.copy()"
)
FIRST = "df['a'] = df['a'] * 100\ndf['b'] = 1\nx = 'changed'\nmade = 1\nraise ValueError('boom')"
ARGS = ("--yes", "--policy", "never", "--max-steps", "2")
SECOND = "del x\nalso_made = 2\n1 / 0"


def run_code(code: str) -> dict:
    return {"name": "run_code", "arguments": {"code": code, "purpose": "clean the data"}}


@pytest.fixture(autouse=True)
def fresh(server):
    server.clear()
    server.default_reply = Reply(content="(the script ran out)")
    server.script(
        Reply(content="Cleaning.", tool_calls=[run_code(FIRST)]),
        Reply(content="Again.", tool_calls=[run_code(SECOND)]),
        Reply(content="Once more.", tool_calls=[run_code("print('more')")]),
    )


@pytest.fixture
def notebook(tmp_path) -> Path:
    return python3_notebook(tmp_path / "data.ipynb", [nbformat.v4.new_code_cell(SETUP)])


def turn_in(server, notebook: Path, *, keep_state: bool) -> tuple[AgentRun, dict]:
    """One failing turn (two steps, both fail, then the step cap) in the notebook's kernel;
    the report and what the kernel holds afterwards."""
    settings = Chapyter(
        config=Config(
            Chapyter={
                "base_url": server.base_url,
                "api_key": "sk-test-0123456789",
                "model": "fake-model",
                "agent_policy": "never",
                "send_context": False,
            }
        )
    )
    endpoint = kernel_registry(settings).resolve(None)[1]
    nb = nbformat.read(notebook, as_version=4)
    run = AgentRun(str(notebook))
    turn = _Turn(run, settings, False, endpoint, [], cwd=str(notebook.parent))
    turn.keep_state = keep_state
    with NotebookKernel(nb, cwd=str(notebook.parent), timeout=60) as kernel:
        turn.run(kernel, "clean df", yes=True, max_steps=2, on_line=None)
        state = kernel._evaluate(
            "",
            {
                "same": "df.equals(_before)",
                "x": "get_ipython().user_ns.get('x')",
                "made": "[n for n in ('made', 'also_made') if n in get_ipython().user_ns]",
            },
        )
    return run, state


def test_a_failed_turn_leaves_the_data_as_it_found_it(server, notebook):
    run, state = turn_in(server, notebook, keep_state=False)
    assert run.answer is None and "2 steps" in (run.stopped or "")
    assert state == {"same": True, "x": "kept", "made": []}
    assert run.restored == "Restored df, x; removed also_made, made."
    assert run.steps[-1] == "the turn failed; restored df, x; removed also_made, made."


def test_keep_state_leaves_what_the_steps_did(server, notebook):
    run, state = turn_in(server, notebook, keep_state=True)
    assert run.restored is None
    assert state == {"same": False, "x": None, "made": ["made", "also_made"]}


def test_the_command_says_it_restored(server, notebook, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "chapyter_ext.cli", "agent", str(notebook), "clean df", *ARGS],
        capture_output=True,
        text=True,
        env=agent_env(server, tmp_path / "home"),
        timeout=180,
    )
    assert done.returncode == 1, done.stderr
    assert "chapyter-ext agent: the turn failed; restored df, x; removed also_made, made." in (
        done.stdout
    )
