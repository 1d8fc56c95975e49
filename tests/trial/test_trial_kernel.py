"""Trials and the guard in a real kernel, asked the way the browser and the headless driver
ask (a silent execute request with a user expression): the kernel shows nothing of a trial,
keeps its count, history and variables, stays healthy after many, can be interrupted in one;
and a step armed after a clean trial is stopped at its first attempt, its threads too."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from chapyter_ext.trial.confine import unavailable
from chapyter_ext.trial.kernel import expression
from tests.kernel_harness import Kernel

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


@pytest.fixture(scope="module")
def kernel_setup(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("trial-kernel")
    return (
        f"import os, pandas as pd\nos.chdir({str(folder)!r})\ndf = pd.DataFrame({{'a': [1, 2, 3]}})"
    )


def silent(kernel: Kernel, expressions: dict[str, str], timeout: float = 60) -> tuple[dict, list]:
    """A silent request as JupyterLab's kernel reads send it: the reply and every IOPub
    message it caused."""
    kc = kernel.kc
    msg_id = kc.execute(
        "", silent=True, store_history=False, user_expressions=expressions, allow_stdin=False
    )
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    seen = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=10)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return reply, seen


def trial(kernel: Kernel, code: str, time_limit: float = 10.0) -> tuple[dict[str, Any], list]:
    reply, seen = silent(kernel, {"t": expression("trial", code, time_limit, 1024)})
    value = reply["content"]["user_expressions"]["t"]
    assert value["status"] == "ok", value
    return value["data"]["application/json"], seen


def test_a_trial_shows_nothing_and_keeps_the_kernel_as_it_was(kernel):
    before = kernel.run("n, h = get_ipython().execution_count, len(In)")
    step = (
        "df['b'] = 2\nprint('hello')\nfrom IPython.display import display\ndisplay(42)\n"
        "import os\nos.chdir('/')\nz = 1"
    )
    report, seen = trial(kernel, step)
    assert before.status == "ok"
    assert [m["msg_type"] for m in seen] == ["status", "status"]
    assert report["status"] == "ran" and report["stdout"] == "hello\n"
    assert report["displays"] and report["displays"][0]["text/plain"] == "42"
    after = kernel.run(
        "print(get_ipython().execution_count - n, len(In) - h, list(df.columns), 'z' in dir(),"
        " os.getcwd() != '/')"
    )
    # Only the cell reading them counted and entered the history.
    assert after.stdout.split() == ["1", "1", "['a']", "False", "True"]


def test_the_kernel_stays_healthy_after_many_trials(kernel):
    for i in range(15):
        report, _ = trial(
            kernel, f"x = {i}\nimport socket\nsocket.socket()" if i % 3 else f"x = {i}"
        )
        assert report["status"] == "ran"
    done = kernel.run("from IPython.display import display\ndisplay('still here')\nprint(1 + 1)")
    assert done.status == "ok" and done.stdout == "2\n"
    assert done.displays("text/plain") == ["'still here'"]


def test_an_interrupt_stops_the_trial_and_its_child(kernel):
    kc = kernel.kc
    msg_id = kc.execute(
        "",
        silent=True,
        store_history=False,
        user_expressions={"t": expression("trial", "import time\ntime.sleep(120)", 120.0, 512)},
    )
    time.sleep(1.0)
    children = _children(kernel.km.provisioner.process.pid)
    assert children, "the trial's child did not start"
    started = time.monotonic()
    kernel.km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=30)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=30)
    assert time.monotonic() - started < 15
    time.sleep(0.3)
    assert not [c for c in children if Path(f"/proc/{c}").exists()]
    assert kernel.run("print('ok')").stdout == "ok\n"


def _children(pid: int) -> list[int]:
    import subprocess

    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def arm(kernel: Kernel, code: str) -> None:
    reply, _ = silent(kernel, {"a": expression("arm", code)})
    assert reply["content"]["user_expressions"]["a"]["status"] == "ok"


def test_an_armed_step_is_stopped_at_its_first_attempt(kernel, tmp_path):
    target = tmp_path / "guarded.txt"
    code = f"print('before')\nopen({str(target)!r}, 'w').write('x')\nprint('after')"
    arm(kernel, code)
    run = kernel.run(code)
    assert run.stdout == "before\n"
    assert run.error is not None and run.error["ename"] == "GuardStop"
    assert run.error["evalue"].startswith("chapyter-ext stopped this step: it tried to write")
    assert not target.exists()
    # Armed for one cell only: the same code run again is the user's own run.
    assert kernel.run(code).status == "ok" and target.exists()


def test_the_guard_is_for_exactly_the_armed_code(kernel, tmp_path):
    target = tmp_path / "other.txt"
    arm(kernel, "x = 1")
    run = kernel.run(f"open({str(target)!r}, 'w').write('x')")
    assert run.status == "ok" and target.exists()
    # ... and the other cell disarmed it.
    target.unlink()
    run = kernel.run("x = 1")
    assert run.status == "ok"


def test_threads_a_guarded_step_starts_stay_guarded(kernel, tmp_path):
    target = tmp_path / "late.txt"
    code = (
        "import threading, time\n"
        "def later():\n"
        "    time.sleep(0.5)\n"
        f"    open({str(target)!r}, 'w').write('x')\n"
        "threading.Thread(target=later, daemon=True).start()"
    )
    arm(kernel, code)
    assert kernel.run(code).status == "ok"
    time.sleep(1.5)
    assert not target.exists()
    # The kernel's own thread is free again: a trial writes its scratch folder as usual.
    report, _ = trial(kernel, "x = 1")
    assert report["status"] == "ran"
    kernel.run("pass")
    assert kernel.run(f"open({str(tmp_path / 'mine.txt')!r}, 'w').write('x')").status == "ok"
