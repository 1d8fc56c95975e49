"""What the model sees of a step: budget, frames, ANSI, redaction, images vs digests."""

from __future__ import annotations

from chapyter_ext.agent.observe import describe_figure, observe, outcome
from chapyter_ext.agent.results import StepResult
from chapyter_ext.redact import Redactor
from chapyter_ext.tracebacks import error_text, strip_ansi

KEY = "sk-proj-OBSERVE0123456789abcdefghijKLMN"
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E"
    "rkJggg=="
)
DIGEST = {
    "suptitle": "Sales",
    "axes": [
        {
            "title": "by month",
            "xlabel": "month",
            "ylabel": "sales",
            "xlim": [0.0, 11.0],
            "ylim": [None, 1200.0],
            "series": [
                {"kind": "line", "label": "north", "points": 12},
                {"kind": "line", "label": "south", "points": 12, "all_nan": True},
            ],
            "legend": ["north", "south"],
        }
    ],
}


def text_of(parts: list[dict]) -> str:
    assert parts[0]["type"] == "text"
    return parts[0]["text"]


def test_streams_results_and_displays_in_order():
    result = StepResult(
        outputs=[
            {"output_type": "stream", "name": "stdout", "text": "a\n"},
            {"output_type": "stream", "name": "stdout", "text": ["b\n", "c\n"]},
            {"output_type": "stream", "name": "stderr", "text": "warning: x\n"},
            {"output_type": "display_data", "data": {"text/plain": "shown"}, "metadata": {}},
            {
                "output_type": "execute_result",
                "execution_count": 4,
                "data": {"text/plain": "   a\n0  1", "text/html": "<table>"},
                "metadata": {},
            },
        ],
        execution_count=4,
    )
    text = text_of(observe(result, images=False))
    assert text == "Ran as cell [4].\na\nb\nc\n[stderr]\nwarning: x\nshown\nOut[4]:\n   a\n0  1"
    assert outcome(result) == "Out: a (+1 lines); displayed shown; printed 4 lines"


def test_progress_bars_keep_their_last_state_and_ansi_is_stripped():
    result = StepResult(
        outputs=[
            {"output_type": "stream", "name": "stdout", "text": "10%\r50%\r100%\n"},
            {"output_type": "stream", "name": "stdout", "text": "\x1b[31mred\x1b[0m done\n"},
        ]
    )
    assert text_of(observe(result, images=False)) == "100%\nred done"
    assert strip_ansi("\x1b]8;;file:///x\x1b\\link\x1b]8;;\x1b\\ \x1b[1;32mok\x1b[0m") == "link ok"


def test_budget_keeps_the_start_and_the_end():
    lines = "".join(f"line {i}\n" for i in range(2000))
    result = StepResult(
        outputs=[
            {"output_type": "stream", "name": "stdout", "text": lines},
            {
                "output_type": "error",
                "ename": "ValueError",
                "evalue": "bad",
                "traceback": ["Cell In[2], line 3\n----> 3 raise ValueError('bad')\n"],
            },
        ]
    )
    text = text_of(observe(result, budget=500, images=False))
    assert len(text) <= 500
    assert text.startswith("line 0\nline 1\n")
    assert "characters cut" in text
    assert text.endswith("----> 3 raise ValueError('bad')")  # the error, at the end, is kept
    assert outcome(result) == "ValueError: bad"


def test_a_key_in_the_output_is_redacted():
    result = StepResult(
        outputs=[
            {"output_type": "stream", "name": "stdout", "text": f"key={KEY}\n"},
            {"output_type": "execute_result", "data": {"text/plain": f"'{KEY}'"}, "metadata": {}},
            {"output_type": "error", "ename": "E", "evalue": KEY, "traceback": []},
        ]
    )
    text = text_of(observe(result, images=False))
    assert KEY not in text and text.count("<redacted>") == 3
    assert KEY not in outcome(result)
    # A verbatim secret the driver knows (the configured key) is redacted though it looks plain.
    plain = StepResult(outputs=[{"output_type": "stream", "name": "stdout", "text": "hunter22"}])
    assert "hunter22" not in text_of(observe(plain, images=False, redactor=Redactor(["hunter22"])))


def test_only_the_user_frames_of_a_traceback():
    output = {
        "output_type": "error",
        "ename": "KeyError",
        "evalue": "'missing'",
        "traceback": [
            "\x1b[31m-----------\x1b[39m",
            "\x1b[31mKeyError\x1b[39m          Traceback (most recent call last)",
            "\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[2]\x1b[39m\x1b[32m, line 5\x1b[39m\n"
            "\x1b[32m----> \x1b[39m\x1b[32m5\x1b[39m f(df)\n",
            "\x1b[36mFile \x1b[39m\x1b[32m/venv/pandas/core/frame.py:4330\x1b[39m, in "
            "DataFrame.__getitem__\n-> 4330 indexer = self.columns.get_loc(key)\n",
            "\x1b[31mKeyError\x1b[39m: 'missing'",
        ],
    }
    assert error_text(output) == (
        "KeyError: 'missing'\n"
        "Traceback (the frames in the notebook's code):\n"
        "Cell In[2], line 5\n----> 5 f(df)\n"
        "(1 frame inside libraries not shown)"
    )


def test_figures_as_image_parts_or_as_digests():
    figure_output = {
        "output_type": "display_data",
        "data": {"image/png": PNG, "text/plain": "<Figure>"},
    }
    result = StepResult(outputs=[figure_output], figures=[DIGEST], images=[PNG])

    with_images = observe(result, images=True)
    assert text_of(with_images) == "[1 figure: attached as image]"
    assert with_images[1:] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    ]

    digest = observe(result, images=False)
    assert len(digest) == 1
    assert text_of(digest) == (
        "Figure 1 'Sales'\n"
        "  title 'by month'; x 'month' from 0 to 11; y 'sales' from ? to 1200; "
        "legend: north, south\n"
        "    line 'north': 12 points\n"
        "    line 'south': 12 points ALL NaN"
    )
    assert outcome(result) == "1 figure"

    # The PNGs of the outputs stand in when the driver sent none separately.
    only_outputs = StepResult(outputs=[figure_output])
    assert observe(only_outputs, images=True)[1]["image_url"]["url"].endswith(PNG)
    assert "no description" in text_of(observe(only_outputs, images=False))


def test_describe_figure_flags_empty_series_and_counts_axes():
    two = {
        "suptitle": None,
        "axes": [
            {"series": [{"kind": "bars", "points": 0, "empty": True}], "xlim": [0, 1]},
            {"series": [{"kind": "scatter", "label": "pts", "points": 5, "some_nan": 2}]},
        ],
    }
    text = describe_figure(two, 2)
    assert text.startswith("Figure 2: 2 axes\n  axes 1: x (no label) from 0 to 1; y (no label)")
    assert "    bars: 0 points EMPTY" in text
    assert "    scatter 'pts': 5 points (2 NaN)" in text


def test_a_step_that_could_not_run_and_an_empty_one():
    broken = StepResult(error=f"the kernel died ({KEY})")
    assert (
        text_of(observe(broken, images=True))
        == "The code could not be run: the kernel died (<redacted>)"
    )
    assert outcome(broken) == "could not run: the kernel died (<redacted>)"
    assert text_of(observe(StepResult(), images=False)) == "(the cell ran without output)"
    assert outcome(StepResult()) == "ran, no output"


def test_outcome_of_a_display():
    shown = StepResult(
        outputs=[{"output_type": "display_data", "data": {"text/plain": "region  total\n..."}}]
    )
    assert outcome(shown) == "displayed region total"


def test_a_key_in_a_figure_digest_is_redacted_also_in_part():
    # Titles, labels and legends are text like any output.
    digest = {
        "suptitle": f"run with {KEY}",
        "axes": [{"title": f"key ends {KEY[-10:]}", "legend": [KEY[8:20]], "series": []}],
    }
    result = StepResult(figures=[digest])
    text = text_of(observe(result, images=False, redactor=Redactor([KEY])))
    assert "Figure 1" in text and text.count("<redacted>") == 3
    assert KEY not in text and KEY[-10:] not in text and KEY[8:20] not in text
