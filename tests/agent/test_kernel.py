"""In a real kernel: the figure digest (install/take) and the frames of a real traceback."""

from __future__ import annotations

import pytest

from chapyter_ext.agent.observe import observe
from chapyter_ext.agent.results import StepResult
from chapyter_ext.context.figures import INSTALL_CODE, TAKE_EXPRESSION
from chapyter_ext.tracebacks import error_text
from tests.kernel_harness import Kernel


@pytest.fixture(scope="module")
def kernel():
    k = Kernel({})
    yield k
    k.shutdown()


def run_step(kernel: Kernel, code: str) -> tuple[dict, list[dict]]:
    """Run ``code`` as a driver does: the digests read in the same execute_request."""
    outputs: list[dict] = []
    reply = kernel.kc.execute_interactive(
        code,
        user_expressions={"figures": TAKE_EXPRESSION},
        output_hook=outputs.append,
        timeout=60,
    )
    return reply["content"], outputs


def test_install_is_silent_idempotent_and_imports_no_matplotlib(kernel):
    for _ in range(2):
        reply = kernel.kc.execute_interactive(INSTALL_CODE, silent=True, timeout=30)
        assert reply["content"]["status"] == "ok"
    check = kernel.run(
        "import sys\n"
        "from chapyter_ext.context import figures\n"
        "cbs = get_ipython().events.callbacks['post_execute']\n"
        "print(cbs.count(figures._capture), cbs[0] is figures._capture, "
        "'matplotlib' in sys.modules)"
    )
    assert check.stdout == "1 True False\n"
    content, _ = run_step(kernel, "x = 1")
    figures = content["user_expressions"]["figures"]
    assert figures["status"] == "ok" and figures["data"]["application/json"] == []


@pytest.fixture
def plotting_kernel():
    """A kernel whose user imported pyplot before the agent's first step: matplotlib-inline's
    ``flush_figures`` (which closes the figures) is registered BEFORE the digest's callback."""
    k = Kernel({})
    try:
        assert k.run("%matplotlib inline\nimport matplotlib.pyplot as plt").status == "ok"
        reply = k.kc.execute_interactive(INSTALL_CODE, silent=True, timeout=30)
        assert reply["content"]["status"] == "ok"
        yield k
    finally:
        k.shutdown()


def test_figure_digest_from_the_inline_backend(plotting_kernel):
    kernel = plotting_kernel
    code = (
        "import numpy as np\n"
        "fig, (ax1, ax2) = plt.subplots(1, 2)\n"
        "fig.suptitle('Sales report')\n"
        "ax1.plot(range(12), np.arange(12) * 100, label='north')\n"
        "ax1.plot(range(12), [np.nan] * 12, label='south')\n"
        "ax1.set_title('Monthly'); ax1.set_xlabel('month'); ax1.set_ylabel('sales')\n"
        "ax1.set_xlim(0, 11); ax1.set_ylim(0, 1200)\n"
        "ax1.legend()\n"
        "ax2.bar(['a', 'b', 'c'], [3, 1, 2], label='counts')\n"
        "ax2.scatter([1, 2, 3, 4], [1, np.nan, 3, 4])\n"
        "ax2.set_yscale('log')\n"
    )
    content, outputs = run_step(kernel, code)
    assert content["status"] == "ok"
    # The inline backend showed the figure (and closed it) after our digest was taken.
    assert any("image/png" in o["content"].get("data", {}) for o in outputs)
    expression = content["user_expressions"]["figures"]
    assert expression["status"] == "ok"
    (digest,) = expression["data"]["application/json"]
    assert digest["suptitle"] == "Sales report"
    first, second = digest["axes"]
    assert first["title"] == "Monthly"
    assert (first["xlabel"], first["ylabel"]) == ("month", "sales")
    assert first["xlim"] == [0.0, 11.0] and first["ylim"] == [0.0, 1200.0]
    assert first["legend"] == ["north", "south"]
    assert first["series"] == [
        {"kind": "line", "label": "north", "points": 12},
        {"kind": "line", "label": "south", "points": 12, "all_nan": True},
    ]
    assert second["yscale"] == "log"
    assert second["series"] == [
        {"kind": "bars", "label": "counts", "points": 3},
        {"kind": "scatter", "label": None, "points": 4, "some_nan": 1},
    ]
    # Taken once: the next step starts empty (the inline backend closed the figure).
    content, _ = run_step(kernel, "y = 2")
    assert content["user_expressions"]["figures"]["data"]["application/json"] == []

    text = observe(StepResult(figures=[digest]), images=False)[0]["text"]
    assert "line 'south': 12 points ALL NaN" in text
    assert "x 'month' from 0 to 11" in text


def test_figures_closed_by_plt_show_are_digested_and_failed_steps_do_not_leak(plotting_kernel):
    kernel = plotting_kernel
    # plt.show() draws and closes the figure inside the cell, before post_execute.
    code = (
        "plt.plot([1, 2, 3], label='up')\n"
        "plt.title('Shown')\n"
        "plt.show()\n"
        "fig2, ax = plt.subplots()\n"
        "ax.set_title('Left open')\n"
    )
    content, outputs = run_step(kernel, code)
    assert content["status"] == "ok"
    titles = [
        d["axes"][0]["title"]
        for d in content["user_expressions"]["figures"]["data"]["application/json"]
    ]
    assert titles == ["Shown", "Left open"]
    # Our watcher adds nothing to what the cell displays.
    for output in outputs:
        assert not any("chapyter" in mime for mime in output["content"].get("data", {}))

    # A step that shows a figure, then raises: no user expression comes back, and its
    # figure must not be reported as the next step's.
    failed, _ = run_step(kernel, "plt.plot([1]); plt.title('Failed'); plt.show()\n1 / 0")
    assert failed["status"] == "error"
    content, _ = run_step(kernel, "z = 3")
    assert content["user_expressions"]["figures"]["data"]["application/json"] == []


def test_plt_show_in_the_step_that_first_imports_pyplot_is_digested():
    """A stock kernel: the capture is installed before matplotlib was ever imported, and the
    step itself imports pyplot (which pops every formatter's Figure printer as it loads the
    inline backend) and ends with ``plt.show()``, which closes the figure inside the cell."""
    kernel = Kernel({})
    try:
        reply = kernel.kc.execute_interactive(INSTALL_CODE, silent=True, timeout=30)
        assert reply["content"]["status"] == "ok"
        code = (
            "import matplotlib.pyplot as plt\n"
            "plt.plot([3, 1, 2], label='rain')\n"
            "plt.title('Rain by month')\n"
            "plt.show()\n"
        )
        content, outputs = run_step(kernel, code)
        assert content["status"] == "ok"
        assert any("image/png" in o["content"].get("data", {}) for o in outputs)
        (digest,) = content["user_expressions"]["figures"]["data"]["application/json"]
        assert digest["axes"][0]["title"] == "Rain by month"
        assert digest["axes"][0]["series"] == [{"kind": "line", "label": "rain", "points": 3}]
        # And again in a later step, once the inline backend is set up.
        content, _ = run_step(kernel, "plt.bar(['a'], [1]); plt.title('Again'); plt.show()")
        (digest,) = content["user_expressions"]["figures"]["data"]["application/json"]
        assert digest["axes"][0]["title"] == "Again"
    finally:
        kernel.shutdown()


def test_only_the_user_frames_of_a_real_traceback(kernel):
    kernel.run("import pandas as pd\ndf = pd.DataFrame({'a': [1]})")
    failed = kernel.run("def pick(d):\n    return d['missing']\n\nx = 1\npick(df)")
    assert failed.status == "error"
    output = {"output_type": "error", **failed.error}
    text = error_text(output)
    assert text.startswith("KeyError: 'missing'\nTraceback (the frames in the notebook's code):\n")
    assert "\x1b" not in text
    assert "----> 5 pick(df)" in text
    assert "----> 2     return d['missing']" in text
    assert "site-packages" not in text and "pandas/" not in text
    assert "inside libraries not shown)" in text

    syntax = kernel.run("x = (1,\n")
    text = error_text({"output_type": "error", **syntax.error})
    assert text.startswith("SyntaxError: incomplete input")
    assert "x = (1," in text and "\x1b" not in text
