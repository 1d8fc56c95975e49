"""``Chapyter.run_policy``: ``%%ai`` runs the model's code at once only when the policy lets it.

A real kernel and the loopback model: the payload's ``run`` flag is what the frontend obeys,
and the prompt cell's last line says why code waits.
"""

from __future__ import annotations

import pytest

WRITES = "import pandas as pd\ndf = pd.DataFrame({'a': [1]})\ndf.to_csv('out.csv')"
HIDDEN = "r = __import__('shutil').rmtree\nr('data')"
READS = "total = sum(range(10))\nprint(total)"


def generate(server, kernel, code: str, policy: str):
    server.clear()
    server.script(f"```python\n{code}\n```")
    assert kernel.run(f"%config Chapyter.run_policy = '{policy}'").status == "ok"
    run = kernel.run("%%ai\ndo the thing")
    assert run.status == "ok", run.error
    return run.next_input["chapyter"]["run"], run.displays("text/plain")[-1]


def test_never_runs_everything_as_chapyter_does(server, kernel):
    ran, line = generate(server, kernel, WRITES, "never")
    assert ran is True and "inserted below and run" in line


@pytest.mark.parametrize(
    ("code", "why"),
    [(WRITES, "writes files: df.to_csv('out.csv')"), (HIDDEN, "__import__")],
)
def test_risky_holds_what_it_cannot_prove_and_says_why(server, kernel, code, why):
    ran, line = generate(server, kernel, code, "risky")
    assert ran is False
    assert "inserted below, not run:" in line and why in line
    assert "(setting: Run policy;" in line  # the setting by its name, not a trait


def test_risky_runs_code_that_only_computes(server, kernel):
    ran, line = generate(server, kernel, READS, "risky")
    assert ran is True and "inserted below and run" in line


def test_risky_lets_the_notebooks_own_functions_run(server, kernel):
    assert kernel.run("def tidy(x):\n    return x").status == "ok"
    ran, _ = generate(server, kernel, "y = tidy(3)", "risky")
    assert ran is True
    # A function the notebook did not define is not known.
    ran, line = generate(server, kernel, "y = untidy(3)", "risky")
    assert ran is False and "untidy" in line


def test_ask_holds_every_answer(server, kernel):
    ran, line = generate(server, kernel, READS, "ask")
    assert ran is False and "every answer waits for your review" in line


def test_a_bad_policy_is_one_line():
    from traitlets import TraitError

    from chapyter_ext.config import Chapyter

    with pytest.raises(TraitError, match="run_policy must be one of never, risky, ask"):
        Chapyter(run_policy="sometimes")
    assert Chapyter().run_policy == "never"
    assert Chapyter(run_policy="RISKY").run_policy == "risky"
