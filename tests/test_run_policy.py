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


OBJECTS = """
import os
KERNEL = os.getpid()
class Store:
    def refresh(self):
        open('refreshed.txt', 'w').write('x')
class Sneaky:
    def refresh(self):
        # Harmless only where it is not the kernel: a step that tells a trial apart.
        if os.getpid() == KERNEL:
            open('sneaky.txt', 'w').write('x')
class Counter:
    n = 0
    def refresh(self):
        Counter.n += 1
store, sneaky, counter = Store(), Sneaky(), Counter()
"""


def test_risky_tries_what_it_can_only_guess_at_and_holds_what_the_trial_saw(
    server, kernel, tmp_path
):
    assert kernel.run(f"import os\nos.chdir({str(tmp_path)!r})\n{OBJECTS}").status == "ok"
    # A method of an object from an earlier cell: its name is only a guess.
    ran, line = generate(server, kernel, "store.refresh()", "risky")
    assert ran is False
    assert "inserted below, not run: tried to write refreshed.txt" in line
    assert not (tmp_path / "refreshed.txt").exists()
    ran, line = generate(server, kernel, "counter.refresh()", "risky")
    assert ran is True and "inserted below and run" in line
    # The trial changed nothing in the kernel.
    assert kernel.run("print(Counter.n)").stdout == "0\n"


def test_code_its_trial_cleared_runs_guarded(server, kernel, tmp_path):
    assert kernel.run(f"import os\nos.chdir({str(tmp_path)!r})\n{OBJECTS}").status == "ok"
    ran, _ = generate(server, kernel, "sneaky.refresh()", "risky")
    assert ran is True  # in the trial it did nothing
    run = kernel.run("sneaky.refresh()")  # the frontend runs the cell below, as shown
    assert run.error is not None and run.error["ename"] == "GuardStop"
    assert "tried to write sneaky.txt, which its confined trial did not show" in run.error["evalue"]
    assert not (tmp_path / "sneaky.txt").exists()
    # The guard held that one run: the user's own run of the same code is theirs.
    assert kernel.run("sneaky.refresh()").status == "ok"
    assert (tmp_path / "sneaky.txt").exists()


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


def test_risky_holds_a_read_of_a_configured_secret_variable(server, kernel):
    """``Chapyter.secret_names`` (names or patterns) and any variable holding the configured
    key are secrets to the analysis, whatever their names."""
    setup = kernel.run(
        "import os\n"
        "os.environ['MYCORP_DSN'] = 'postgres://u:p@db/x'\n"
        "os.environ['LLM_SETTING_A'] = 'sk-test-KERNEL-0123456789'"  # the kernel's key
    )
    assert setup.status == "ok", setup.error
    ran, _ = generate(server, kernel, "dsn = os.environ['MYCORP_DSN']", "risky")
    assert ran is True  # neither named like a secret nor configured: it runs
    ran, line = generate(server, kernel, "k = os.environ['LLM_SETTING_A']", "risky")
    assert ran is False and "reads a secret: os.environ['LLM_SETTING_A']" in line, line
    assert kernel.run("%config Chapyter.secret_names = ['MYCORP_*']").status == "ok"
    ran, line = generate(server, kernel, "dsn = os.environ['MYCORP_DSN']", "risky")
    assert ran is False and "reads a secret: os.environ['MYCORP_DSN']" in line, line
    assert kernel.run("%config Chapyter.secret_names = []").status == "ok"
