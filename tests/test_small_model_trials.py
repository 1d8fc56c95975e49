"""The small model's candidates tried before they are offered: in a real kernel
against the loopback server, a candidate that passes the checks but raises in its confined
trial is refused and the next one asked; when all raise, one honest line; without trials
(``Chapyter.trials = False``, as where no fork can be confined) the candidate is offered as
before. The candidate loop hands its trial to the consent decision, never trying twice."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from chapyter_ext.llm import Endpoint
from chapyter_ext.local_model import LOCAL_MODEL_NAME
from chapyter_ext.magic.candidates import (
    NoPassingCandidate,
    first_passing_candidate,
    raised_in_trial,
)
from chapyter_ext.trial import CRASHED, RAN, TIMEOUT, TrialReport
from chapyter_ext.trial.confine import unavailable

needs_trials = pytest.mark.skipif(
    unavailable() is not None, reason=f"no confined trial here: {unavailable()}"
)

RAISES = "avg = sales['price'].mean(axis=2)"  # passes every check, raises ValueError
ALSO_RAISES = "avg = sales['price'].mean() + sales['city'].iloc[5]"  # IndexError
GOOD = "avg = sales['price'].mean()"


@pytest.fixture(scope="module")
def models() -> tuple[str, ...]:
    return (LOCAL_MODEL_NAME,)


@pytest.fixture(scope="module")
def kernel_env(kernel_env: dict[str, str]) -> dict[str, str]:
    # The model name the bundled server answers to: prompt_style 'auto' picks small.
    return {**kernel_env, "CHAPYTER_MODEL": LOCAL_MODEL_NAME}


@pytest.fixture(scope="module")
def kernel_setup() -> str:
    return (
        "%config Chapyter.timeout = 10.0\n"
        "import pandas as pd\n"
        "sales = pd.DataFrame({'city': ['Paris', 'Rome'], 'price': [1.0, 3.0]})"
    )


@pytest.fixture
def fresh(server):
    server.clear()


def block(code: str) -> str:
    return f"```python\n{code}\n```"


def asked(server) -> int:
    return len([r for r in server.requests if r.path.endswith("/chat/completions")])


@needs_trials
def test_a_candidate_that_raises_in_its_trial_is_refused_and_the_next_offered(
    server, kernel, fresh
):
    server.script(block(RAISES), block(GOOD))
    run = kernel.run("%%ai --no-run\nmean of price into avg", timeout=60)
    assert run.status == "ok", run.error
    assert run.next_input["text"] == f"{GOOD}\navg"
    assert asked(server) == 2
    # Tried in a confined copy: nothing of the trial reached the kernel.
    assert kernel.run("print('avg' in globals())").stdout.strip() == "False"


@needs_trials
def test_when_every_candidate_raises_one_honest_line_and_nothing_inserted(server, kernel, fresh):
    server.script(block(RAISES), block(ALSO_RAISES), block(RAISES))
    run = kernel.run("%%ai\nmean of price into avg", timeout=60)
    assert run.status == "error" and run.error["ename"] == "ChapyterError"
    evalue = run.error["evalue"]
    assert "\n" not in evalue and evalue.startswith("the small local model could not write this")
    assert "it raised ValueError" in evalue and "when tried" in evalue
    assert run.next_input is None
    assert asked(server) == 3


SPY = """
import chapyter_ext.trial as _trial_package
_tried, _real_run_trial = [], _trial_package.run_trial
def _counting_run_trial(shell, code, limits=None, **options):
    _tried.append(code)
    return _real_run_trial(shell, code, limits, **options)
_trial_package.run_trial = _counting_run_trial
class Box:
    def total(self):
        return 3
box = Box()
"""


@needs_trials
def test_the_candidates_trial_serves_the_consent_decision_without_a_second_trial(
    server, kernel, fresh
):
    # A call of the notebook's own method: under 'risky' it runs only once a trial cleared it.
    assert kernel.run(SPY).status == "ok"
    kernel.run("%config Chapyter.run_policy = 'risky'")
    server.script(block("x = box.total()"))
    try:
        run = kernel.run("%%ai --run\ntotal of box into x", timeout=60)
        assert run.status == "ok", run.error
        assert kernel.run("print(x, _tried)").stdout.strip() == "3 ['x = box.total()\\nx']"
    finally:
        kernel.run("_trial_package.run_trial = _real_run_trial")


def test_without_trials_the_candidate_is_offered_as_before(server, kernel, fresh):
    server.script(block(RAISES))
    kernel.run("%config Chapyter.trials = False")
    try:
        run = kernel.run("%%ai --no-run\nmean of price into avg", timeout=60)
    finally:
        kernel.run("%config Chapyter.trials = True")
    assert run.status == "ok", run.error
    assert run.next_input["text"] == f"{RAISES}\navg"
    assert asked(server) == 1


# -- the loop itself: which trials refuse, and the report handed on --------------------------


def _report(status: str, error: dict | None = None) -> TrialReport:
    return TrialReport(status=status, error=error)


@pytest.mark.parametrize(
    ("report", "refused"),
    [
        (None, False),
        (TrialReport.unavailable("no Landlock"), False),
        (_report(TIMEOUT), False),
        (_report(CRASHED), False),
        (_report(RAN), False),
        (_report(RAN, {"ename": "PermissionError", "evalue": "x", "refused": True}), False),
        (_report(RAN, {"ename": "MemoryError", "evalue": "", "memory": True}), False),
        (_report(RAN, {"ename": "KeyError", "evalue": "'cost'"}), True),
    ],
)
def test_only_an_error_of_the_code_itself_refuses_a_candidate(report, refused):
    assert (raised_in_trial(report) is not None) is refused


def test_the_winning_candidates_trial_is_returned_and_each_tried_once():
    import pandas as pd

    namespace = {"pd": pd, "sales": pd.DataFrame({"city": ["Paris"], "price": [1.0]})}
    answers = iter([block(RAISES), block(GOOD)])
    tried: list[str] = []

    def trial(code: str) -> TrialReport:
        tried.append(code)
        error = {"ename": "ValueError", "evalue": "No axis named 2"} if "axis" in code else None
        return _report(RAN, error)

    code, _, _, report = first_passing_candidate(
        Endpoint(base_url="http://127.0.0.1:1/v1", model=LOCAL_MODEL_NAME),
        lambda endpoint, extra: SimpleNamespace(text=next(answers)),
        namespace,
        "mean of price into avg",
        restart=lambda note: None,
        trial=trial,
    )
    assert code == f"{GOOD}\navg" and report is not None and report.error is None
    assert tried == [f"{RAISES}\navg", f"{GOOD}\navg"]
    with pytest.raises(NoPassingCandidate, match="it raised ValueError: No axis named 2"):
        first_passing_candidate(
            Endpoint(base_url="http://127.0.0.1:1/v1", model=LOCAL_MODEL_NAME),
            lambda endpoint, extra: SimpleNamespace(text=block(RAISES)),
            namespace,
            "mean of price into avg",
            restart=lambda note: None,
            trial=trial,
        )


# -- positions offered for sorted values (the check, without the model) ------------------------


@pytest.mark.parametrize(
    ("code", "request_text", "refused"),
    [
        (
            "x = sorted(range(len(prices)), key=lambda i: prices['price'][i], reverse=True)",
            "prices sorted by price descending",
            True,
        ),
        ("order = prices['price'].argsort()", "prices sorted by price", True),
        ("s = sorted(prices.index, key=lambda i: prices['qty'][i])", "prices sorted by qty", True),
        ("top = prices.sort_values('price', ascending=False)", "prices sorted by price", False),
        ("order = prices['price'].argsort()", "the positions of prices sorted by price", False),
        ("s = sorted(nums)", "nums in ascending order", False),
        ("order = prices['price'].argsort()", "mean of price", False),
    ],
)
def test_sorted_positions_are_refused_where_values_are_asked(code, request_text, refused):
    import pandas as pd

    from chapyter_ext.guards import check_candidate

    frame = pd.DataFrame({"item": ["tea", "cake"], "price": [2.5, 4.0], "qty": [3, 1]})
    checked = check_candidate(code, {"pd": pd, "prices": frame, "nums": [3, 1]}, request_text)
    problem = checked.problem or ""
    assert problem.startswith("it sorts positions") is refused, problem


@pytest.mark.parametrize(
    ("code", "refused"),
    [
        ("largest = [row['qty'] for row in prices if isinstance(id, int)]", True),
        ("for row in prices:\n    print(row.qty)", True),
        ("names = [c.upper() for c in prices]", False),
        ("for i, row in prices.iterrows():\n    print(row['qty'])", False),
        ("largest = max(r['qty'] for r in records)", False),
    ],
)
def test_a_frame_iterated_as_rows_is_refused(code, refused):
    import pandas as pd

    from chapyter_ext.guards import check_candidate

    frame = pd.DataFrame({"item": ["tea", "cake"], "price": [2.5, 4.0], "qty": [3, 1]})
    namespace = {"pd": pd, "prices": frame, "records": [{"qty": 1}]}
    problem = check_candidate(code, namespace).problem or ""
    assert problem.startswith("it iterates over prices") is refused, problem
