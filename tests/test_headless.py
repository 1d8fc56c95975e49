"""Headless runs replay: nbclient, papermill, nbconvert and ``jupyter execute`` on the examples
with no key, against a loopback server that must see no request; regeneration only when asked;
how the kernel tells a batch run from a person; ``%%ai --run`` in terminal IPython."""

from __future__ import annotations

import base64
import copy
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient

from chapyter_ext.contract import FRONTEND_MARKER, code_sha256
from chapyter_ext.magic.replay import REPLAY_LINE, identify_caller
from chapyter_ext.notebook_check import check_notebook
from chapyter_ext.testing.openai_server import Reply
from tests.kernel_harness import execute_request

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.ipynb"))
BIN = Path(sys.executable).parent
ANSWER = "Sure:\n```python\nprint('regenerated', 6 * 7)\n```"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module", autouse=True)
def batch_env(server):
    """As on a CI machine: no key, no chapyter settings; the only endpoint is the recorder."""
    with pytest.MonkeyPatch.context() as mp:
        for name in list(os.environ):
            if name.startswith(("OPENAI_", "CHAPYTER_")) or name == "MPLBACKEND":
                mp.delenv(name)
        mp.setenv("OPENAI_BASE_URL", server.base_url)
        mp.setenv("CHAPYTER_MODEL", "fake-model")
        mp.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        yield


@pytest.fixture(autouse=True)
def fresh(server):
    server.clear()
    server.default_reply = Reply(content=ANSWER)


# -- comparing runs with the committed examples -----------------------------------------------


def outputs_of(nb) -> dict[str, list]:
    """Each code cell's outputs in a comparable form: text exact, images as "PNG present"."""
    result = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        items: list = []
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                if items and items[-1][0] == "stream" and items[-1][1] == out.name:
                    items[-1] = ("stream", out.name, items[-1][2] + out.text)
                else:
                    items.append(("stream", out.name, out.text))
            elif out.output_type == "error":
                items.append(("error", out.ename, out.evalue))
            else:
                data = dict(out.get("data", {}))
                images = {}
                for mime in [m for m in data if m.startswith("image/")]:
                    raw = base64.b64decode(data.pop(mime))
                    images[mime] = raw.startswith(PNG) and len(raw) > 1000
                items.append((out.output_type, data, images))
        result[cell.id] = items
    return result


def assert_replayed_like_committed(ran, committed_path: Path) -> None:
    committed = nbformat.read(committed_path, as_version=4)
    expected, got = outputs_of(committed), outputs_of(ran)
    assert list(got) == list(expected), "the run added or lost cells"
    for cell_id, items in expected.items():
        assert got[cell_id] == items, cell_id
    prompts = [c for c in ran.cells if c.cell_type == "code" and c.source.startswith("%%ai")]
    assert prompts
    for prompt in prompts:
        assert [o.get("text") for o in prompt.outputs] == [REPLAY_LINE + "\n"], prompt.id
    images = [i for items in got.values() for *_, i in items if isinstance(i, dict) and i]
    for found in images:
        assert all(found.values()), "an image output is not a PNG"
    # Same cells, same links, same provenance as committed: nothing regenerated.
    assert [c.metadata.get("chapyter") for c in ran.cells] == [
        c.metadata.get("chapyter") for c in committed.cells
    ]
    assert [str(f) for f in check_notebook(ran, "ran")] == []


def test_examples_exist_with_their_generated_cells():
    names = {p.name for p in EXAMPLES}
    assert {"sales_analysis.ipynb", "fix_an_error.ipynb"} <= names
    for path in EXAMPLES:
        nb = nbformat.read(path, as_version=4)
        generated = [
            c for c in nb.cells if c.metadata.get("chapyter", {}).get("role") == "generated"
        ]
        assert generated and all(c.get("outputs") for c in generated), path.name
    sales = outputs_of(nbformat.read(EXAMPLES_DIR / "sales_analysis.ipynb", as_version=4))
    assert any("image/png" in i for items in sales.values() for *_, i in items if i)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_nbclient_replays_without_calling_the_model(example, server):
    nb = nbformat.read(example, as_version=4)
    NotebookClient(
        nb, timeout=120, record_timing=False, resources={"metadata": {"path": str(EXAMPLES_DIR)}}
    ).execute()
    assert server.requests == []
    assert_replayed_like_committed(nb, example)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_papermill_replays_without_calling_the_model(example, server, tmp_path):
    import papermill
    from papermill.exceptions import PapermillExecutionError

    out = tmp_path / example.name
    try:
        papermill.execute_notebook(
            str(example), str(out), cwd=str(EXAMPLES_DIR), progress_bar=False, log_output=False
        )
    except PapermillExecutionError as err:
        # papermill reports any error output, even of a cell tagged raises-exception, once
        # every cell has run; only the example's intended error may be it.
        assert example.name == "fix_an_error.ipynb" and err.ename == "TypeError"
    assert server.requests == []
    ran = nbformat.read(out, as_version=4)
    ran.cells = [
        c for c in ran.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])
    ]
    assert_replayed_like_committed(ran, example)


def test_nbconvert_and_jupyter_execute_replay(server, tmp_path):
    """The two command lines people use, side by side (each a kernel of its own)."""
    sales = EXAMPLES_DIR / "sales_analysis.ipynb"
    fix = tmp_path / "fix_an_error.ipynb"
    shutil.copy(EXAMPLES_DIR / fix.name, fix)
    nbconvert = ["nbconvert", "--to", "notebook", "--execute", "--output-dir", str(tmp_path)]
    commands = [
        [str(BIN / "jupyter"), *nbconvert, str(sales)],
        [str(BIN / "jupyter"), "execute", "--inplace", str(fix)],
    ]
    procs = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    assert server.requests == []
    assert_replayed_like_committed(nbformat.read(tmp_path / sales.name, as_version=4), sales)
    assert_replayed_like_committed(nbformat.read(fix, as_version=4), EXAMPLES_DIR / fix.name)


# -- regenerating, only when asked ------------------------------------------------------------


def small_notebook() -> nbformat.NotebookNode:
    """One prompt and its committed generated cell, as JupyterLab saved them."""
    example = nbformat.read(EXAMPLES_DIR / "fix_an_error.ipynb", as_version=4)
    prompt = copy.deepcopy(next(c for c in example.cells if c.id == "ask-fix"))
    generated = copy.deepcopy(next(c for c in example.cells if c.id == "ask-fix-code"))
    # The same request and provenance, simpler code, so no data is needed.
    generated.source = "print('committed code')"
    generated.metadata.chapyter["code_sha256"] = code_sha256(generated.source)
    load = nbformat.v4.new_code_cell("%load_ext chapyter_ext")
    load["id"] = "load"
    nb = nbformat.v4.new_notebook(cells=[load, prompt, generated])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for cell in nb.cells:
        cell.outputs, cell.execution_count = [], None
    return nb


def test_regenerate_env_var_asks_the_model_in_a_batch_run(server, monkeypatch):
    nb = small_notebook()
    monkeypatch.setenv("CHAPYTER_REGENERATE", "1")
    NotebookClient(nb, timeout=60, record_timing=False).execute()
    assert len(server.requests) == 1
    by_id = {c.id: c for c in nb.cells}
    (final,) = [o for o in by_id["ask-fix"].outputs if o.output_type == "display_data"]
    assert final.data["text/plain"].startswith("↻ regenerated in a batch run (not reproducible)")
    # nbclient ignores set_next_input: the committed cell runs, once, and the new code does not.
    assert outputs_of(nb)["ask-fix-code"] == [("stream", "stdout", "committed code\n")]


def provenance_for(code: str, request: str = "fix the error") -> dict:
    from chapyter_ext.contract import generated_metadata, request_sha256

    return generated_metadata(
        prompt_sha256=request_sha256(request),
        model="fake-model",
        endpoint="127.0.0.1:1",
        parameters={"temperature": 0.2, "max_tokens": 2048},
        context_chars=10,
        attempts=1,
        code=code,
    )


def test_apply_generation_mirrors_the_frontend():
    from chapyter_ext.magic.replay import apply_generation

    def new_cell(code, metadata):
        cell = nbformat.v4.new_code_cell(code, metadata=metadata)
        cell["id"] = "new-id"
        return cell

    nb = small_notebook()
    prompt_index = 1
    del nb.cells[2]  # no generated cell yet: inserted right below the prompt
    nb.cells.append(nbformat.v4.new_code_cell("after = 1"))
    index, outcome = apply_generation(
        nb.cells, prompt_index, "x = 1", provenance_for("x = 1"), new_cell=new_cell
    )
    assert (index, outcome) == (2, "inserted")
    assert nb.cells[1].metadata.chapyter == {
        "schema": 1,
        "role": "prompt",
        "generated_cell": "new-id",
    }
    assert list(nb.cells[2].metadata.chapyter)[:5] == [
        "schema",
        "role",
        "source",
        "generated_from",
        "prompt_sha256",
    ]
    assert nb.cells[2].metadata.chapyter["generated_from"] == "ask-fix"
    assert nb.cells[3].source == "after = 1"
    # The same answer again: nothing changes, not even the time.
    before = copy.deepcopy(nb.cells[2].metadata)
    later = {**provenance_for("x = 1"), "created": "2099-01-01T00:00:00Z"}
    assert apply_generation(nb.cells, 1, "x = 1", later, new_cell=new_cell)[1] == "unchanged"
    assert nb.cells[2].metadata == before
    # Another answer replaces code and provenance in the same cell.
    _, outcome = apply_generation(nb.cells, 1, "x = 2", provenance_for("x = 2"), new_cell=new_cell)
    assert outcome == "replaced"
    assert nb.cells[2].source == "x = 2" and len(nb.cells) == 4
    # Code edited by hand is kept, and marked.
    nb.cells[2].source = "x = 3  # mine"
    _, outcome = apply_generation(nb.cells, 1, "x = 4", provenance_for("x = 4"), new_cell=new_cell)
    assert outcome == "kept-edited"
    assert nb.cells[2].source == "x = 3  # mine" and nb.cells[2].metadata.chapyter["edited"]
    assert [str(f) for f in check_notebook(nb, "nb")] == [
        "nb:cell 3 (new-id): warning: code edited by hand since it was generated from cell 2 "
        "(regenerating would replace the edits)"
    ]


def test_chapyter_ext_regenerate_writes_the_new_code(server, tmp_path, capsys):
    from chapyter_ext.cli import main

    path = tmp_path / "small.ipynb"
    nbformat.write(small_notebook(), path)
    assert main(["regenerate", str(path)]) == 0
    assert "1 replaced, 0 inserted" in capsys.readouterr().out
    assert len(server.requests) == 1
    nb = nbformat.read(path, as_version=4)
    by_id = {c.id: c for c in nb.cells}
    assert by_id["ask-fix-code"].source == "print('regenerated', 6 * 7)"
    assert outputs_of(nb)["ask-fix-code"] == [("stream", "stdout", "regenerated 42\n")]
    assert by_id["ask-fix"].metadata.chapyter["generated_cell"] == "ask-fix-code"
    assert by_id["ask-fix-code"].metadata.chapyter["generated_from"] == "ask-fix"
    assert [str(f) for f in check_notebook(nb, "nb", strict=True)] == []


def test_regenerate_with_a_syntax_error_answer_fails_and_runs_nothing(server, tmp_path, capsys):
    # In a batch: the broken answer is neither run nor written silently.
    from chapyter_ext.cli import main

    server.default_reply = Reply(content="```python\nprint('broken'\n```")
    path = tmp_path / "small.ipynb"
    nbformat.write(small_notebook(), path)
    before = path.read_bytes()
    assert main(["regenerate", str(path)]) != 0
    err = capsys.readouterr().err
    assert "syntax error" in err and "without running it" in err
    assert path.read_bytes() == before, "a failed regeneration leaves the file as it was"


# -- how the kernel tells a batch run from a person -------------------------------------------


def fake_shell(content: dict | None = None, metadata: dict | None = None, kernel: bool = True):
    request = {"content": content or {}, "metadata": metadata or {}}
    if not kernel:
        return SimpleNamespace(kernel=None)
    return SimpleNamespace(kernel=SimpleNamespace(get_parent=lambda channel=None: request))


@pytest.mark.parametrize(
    ("content", "metadata", "kind", "frontend"),
    [
        ({"allow_stdin": False}, {}, "batch", False),  # nbclient: nbconvert, papermill, ...
        (
            {"allow_stdin": True},
            {"cellId": "c1", "chapyter": {"role": "prompt"}},
            "interactive",
            False,
        ),
        (
            {"allow_stdin": True},
            {"cellId": "vscode-notebook-cell:/a.ipynb#X1"},
            "interactive",
            False,
        ),
        ({"allow_stdin": True}, {}, "interactive", False),  # jupyter console, qtconsole
        ({"allow_stdin": False}, {"cellId": "c1"}, "interactive", False),
        (
            {"allow_stdin": True},
            {"cellId": "c1", FRONTEND_MARKER: {"version": 1}},
            "interactive",
            True,
        ),
        ({}, {FRONTEND_MARKER: {"version": 1}}, "interactive", True),
    ],
    ids=["nbclient", "jupyterlab", "vscode", "console", "cell-id-only", "our-frontend", "marker"],
)
def test_identify_caller(content, metadata, kind, frontend):
    caller = identify_caller(fake_shell(content, metadata))
    assert (caller.kind, caller.frontend_runs_code) == (kind, frontend)


@pytest.mark.parametrize(
    ("marker", "batch_mode", "replays"),
    [
        ({"version": 1, "replay": True}, "replay", True),
        ({"version": 1, "replay": True}, "regenerate", True),  # Run All of an up-to-date prompt
        ({"version": 1, "replay": "yes"}, "replay", False),
        ({"version": 1}, "replay", False),
    ],
)
def test_our_frontend_asks_for_a_replay(marker, batch_mode, replays):
    caller = identify_caller(fake_shell({"allow_stdin": True}, {FRONTEND_MARKER: marker}))
    assert caller.replays(batch_mode) is replays


def test_the_frontend_prints_the_same_replay_line():
    # One wording: without a kernel, JupyterLab's Run All writes the kernel's line itself.
    source = (ROOT / "labextension" / "src" / "notebook" / "executor.ts").read_text("utf-8")
    assert f"'{REPLAY_LINE}'" in source
    assert "Up to date: replaying" not in source


def test_identify_caller_without_a_kernel_is_the_terminal():
    assert identify_caller(fake_shell(kernel=False)).kind == "terminal"


@pytest.fixture(scope="module")
def kernel(server, batch_env):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def execute(kc, code: str, *, allow_stdin: bool, metadata: dict | None = None):
    """An execute_request shaped like a given frontend's; returns (reply, stdout, displays)."""
    run = execute_request(kc, code, allow_stdin=allow_stdin, metadata=metadata)
    return run.reply["content"], run.stdout, run.displays("text/plain")


def next_input(reply: dict) -> dict | None:
    items = [p for p in reply.get("payload", []) if p.get("source") == "set_next_input"]
    return items[0] if items else None


def test_kernel_replays_for_nbclient_shaped_requests(kernel, server):
    assert execute(kernel, "%load_ext chapyter_ext", allow_stdin=False)[0]["status"] == "ok"
    reply, stdout, _ = execute(kernel, "%%ai\nadd two numbers", allow_stdin=False)
    assert reply["status"] == "ok"
    assert stdout == REPLAY_LINE + "\n"
    assert next_input(reply) is None
    assert server.requests == []


@pytest.mark.parametrize(
    "metadata",
    [{"cellId": "abc", "chapyter": {"role": "prompt"}}, {"cellId": "vscode-notebook-cell:x"}, {}],
    ids=["jupyterlab", "vscode", "console"],
)
def test_kernel_generates_for_interactive_frontends(kernel, server, metadata):
    execute(kernel, "%load_ext chapyter_ext", allow_stdin=True)
    reply, stdout, displays = execute(
        kernel, "%%ai\nadd two numbers", allow_stdin=True, metadata=metadata
    )
    assert reply["status"] == "ok"
    assert len(server.requests) == 1
    assert next_input(reply)["text"] == "print('regenerated', 6 * 7)"
    assert next_input(reply)["chapyter"]["run"] is True
    assert "regenerated 42" not in stdout, "the kernel must leave running to the frontend"
    assert displays[-1].endswith("inserted below and run.")


def test_run_option_in_a_kernel_without_our_frontend(kernel, server):
    reply, stdout, displays = execute(
        kernel, "%%ai --run\nadd two numbers", allow_stdin=True, metadata={"cellId": "c"}
    )
    assert reply["status"] == "ok"
    assert "regenerated 42" in stdout
    assert next_input(reply)["chapyter"]["run"] is False, "ran here: the frontend must not rerun"
    assert displays[-1].endswith("run here and inserted below.")


def test_run_option_in_a_kernel_runs_a_cell_the_history_records(kernel, server):
    # The code runs as an input of its own, after the %%ai cell, so the
    # history has it and the execution count the frontend shows is that input's.
    before, _, _ = execute(kernel, "pass", allow_stdin=True, metadata={"cellId": "c"})
    reply, stdout, _ = execute(
        kernel, "%%ai --run\nadd two numbers", allow_stdin=True, metadata={"cellId": "c"}
    )
    assert reply["status"] == "ok"
    assert stdout.count("regenerated 42") == 1
    count = reply["execution_count"]
    assert count == before["execution_count"] + 2, "the %%ai cell and the code: one input each"
    probe = (
        "raw = get_ipython().history_manager.input_hist_raw\n"
        f"print(repr(raw[{count - 1}]))\nprint(repr(raw[{count}]))"
    )
    _, history, _ = execute(kernel, probe, allow_stdin=True, metadata={"cellId": "c"})
    magic_line, code_line = history.splitlines()
    assert magic_line.startswith("'%%ai --run")
    assert code_line == repr("print('regenerated', 6 * 7)")
    after, _, _ = execute(kernel, "pass", allow_stdin=True, metadata={"cellId": "c"})
    assert after["execution_count"] == count + 2


def test_run_option_with_our_frontend_runs_nothing_in_the_kernel(kernel, server):
    metadata = {"cellId": "c", FRONTEND_MARKER: {"version": 1}}
    reply, stdout, _ = execute(
        kernel, "%%ai --run\nadd two numbers", allow_stdin=True, metadata=metadata
    )
    assert "regenerated 42" not in stdout
    assert next_input(reply)["chapyter"]["run"] is True


def test_replay_marker_replays_with_an_execution_count(kernel, server):
    # JupyterLab's Run All of an up-to-date prompt: the batch run's line, no model asked, and
    # a count like any cell that ran (the prompt never shows `[ ]:`).
    metadata = {"cellId": "c", FRONTEND_MARKER: {"version": 1, "replay": True}}
    reply, stdout, _ = execute(kernel, "%%ai\nadd two numbers", allow_stdin=True, metadata=metadata)
    assert reply["status"] == "ok"
    assert isinstance(reply["execution_count"], int) and reply["execution_count"] > 0
    assert stdout == REPLAY_LINE + "\n"
    assert next_input(reply) is None and server.requests == []


def test_run_option_in_a_batch_run_replays(kernel, server):
    _, stdout, _ = execute(kernel, "%%ai --run\nadd two numbers", allow_stdin=False)
    assert stdout == REPLAY_LINE + "\n" and server.requests == []


def test_batch_mode_trait_regenerates(kernel, server):
    execute(kernel, '%config Chapyter.batch_mode = "regenerate"', allow_stdin=False)
    try:
        reply, stdout, displays = execute(kernel, "%%ai\nadd two numbers", allow_stdin=False)
    finally:
        execute(kernel, '%config Chapyter.batch_mode = "replay"', allow_stdin=False)
    assert len(server.requests) == 1
    assert displays[-1].startswith("↻ regenerated in a batch run (not reproducible)")
    assert "regenerated 42" not in stdout, "a batch run goes on to the committed cell"
    assert next_input(reply)["text"] == "print('regenerated', 6 * 7)"


def test_run_and_no_run_exclude_each_other(kernel, server):
    reply, _, _ = execute(kernel, "%%ai --run --no-run\nx", allow_stdin=True)
    assert reply["status"] == "error" and "contradict" in reply["evalue"]
    assert server.requests == []


# -- terminal IPython -------------------------------------------------------------------------


def test_in_process_shell_run_option(server, tmp_path):
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "chapyter_ext")
        shell.run_cell("%%ai\\nadd two numbers", store_history=True)
        print("NEXT:", repr(shell.rl_next_input))
        shell.rl_next_input = None
        shell.run_cell("%%ai --run\\nadd two numbers", store_history=True)
        print("NEXT:", repr(shell.rl_next_input))
        history = [src for _, _, src in shell.history_manager.get_range()]
        print("HISTORY:", history)
        print("COUNT:", shell.execution_count)
        """
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    # Without --run: at the next prompt, not run.
    assert "NEXT: \"print('regenerated', 6 * 7)\"" in lines
    assert lines.count("regenerated 42") == 1
    # With --run: run once, as its own input after the %%ai cell, and not left at the prompt.
    assert lines.index("regenerated 42") > lines.index("NEXT: \"print('regenerated', 6 * 7)\"")
    assert "NEXT: None" in lines
    history = next(line for line in lines if line.startswith("HISTORY:"))
    assert history.endswith("\"print('regenerated', 6 * 7)\"]")
    assert "COUNT: 4" in lines
    assert len(server.requests) == 2


def test_in_process_shell_keeps_a_syntax_error_answer_at_the_prompt(server, tmp_path):
    server.default_reply = Reply(content="```python\nprint('broken'\n```")
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "chapyter_ext")
        result = shell.run_cell("%%ai --run\\nadd two numbers", store_history=True)
        print("FAILED:", type(result.error_in_exec).__name__)
        print("NEXT:", repr(shell.rl_next_input))
        """
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    # Shown at the next prompt to fix, never run, even with --run; the error is one line.
    assert "FAILED: ChapyterError" in out.stdout
    assert "NEXT: \"print('broken'\"" in out.stdout
    assert "broken\n" not in out.stdout.replace("'broken'", "")
    assert "without running it" in out.stdout + out.stderr


def test_terminal_ipython_run_option(server, tmp_path):
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "IPYTHONDIR": str(tmp_path), "TERM": "dumb"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "IPython", "--simple-prompt", "--no-banner", "--colors=NoColor"],
        env=env,
        encoding="utf-8",
        timeout=30,
    )
    try:
        child.expect(r"In \[1\]: ")
        child.sendline("%load_ext chapyter_ext")
        child.expect(r"In \[2\]: ")
        child.sendline("%%ai --run")
        child.sendline("add two numbers")
        child.sendline("")  # a cell magic ends with two blank lines at a terminal prompt
        child.sendline("")
        child.expect("running it:")
        child.expect("regenerated 42")
        child.expect(r"In \[4\]: ")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert len(server.requests) == 1
