"""Build the example notebooks of this folder, with their generated cells, provenance, outputs.

Run from the repository root:  .venv/bin/python examples/build_examples.py

No key and no network: the model is chapyter-ext's loopback OpenAI-compatible server
(``chapyter_ext.testing.openai_server``) giving scripted answers, written as a model writes
them. For each example:

1. The notebook is made from the cells below (stable cell ids, seeded data).
2. Generate: nbclient runs it with ``CHAPYTER_REGENERATE=1`` in a real kernel, as
   ``chapyter-ext regenerate`` does; each answer goes below its prompt with exactly the metadata
   the JupyterLab frontend writes (``chapyter_ext.magic.replay.apply_generation`` mirrors links.ts
   ``generatedMetadata``/``promptMetadata``) and runs.
3. An answer that did not change (same request, model and code) keeps the provenance already
   committed, so rebuilding without changes gives no diff.
4. Replay: nbclient runs the notebook again as any batch run does, asking no model; these are
   the outputs committed, the ones ``jupyter nbconvert --execute`` reproduces.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from chapyter_ext.contract import METADATA_KEY
from chapyter_ext.magic.replay import regenerate_notebook
from chapyter_ext.testing.openai_server import FakeOpenAIServer

HERE = Path(__file__).resolve().parent
MODEL = "example-model"
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


@dataclass(frozen=True)
class Ask:
    """A ``%%ai`` cell and the answer the scripted model gives to it."""

    id: str
    request: str
    answer: str
    #: The generated code raises on purpose: tagged so that batch runners go on.
    raises: bool = False


def md(id: str, text: str) -> tuple[str, str, str]:
    return ("markdown", id, text)


def code(id: str, text: str) -> tuple[str, str, str]:
    return ("code", id, text)


SALES = [
    md(
        "intro",
        """\
# Sales analysis with `%%ai`

Each `%%ai` cell is a request in plain language; the cell below it is the code the model \
wrote, linked to it by cell ids in the metadata (key `chapyter`, see \
[docs/reproducibility.md](../docs/reproducibility.md)).

Run it headless with no key and no network, e.g. \
`jupyter nbconvert --to notebook --execute sales_analysis.ipynb`: every `%%ai` cell replays \
(it asks no model and says so in one line) and the committed code below it runs, so the \
results are the ones you see here.""",
    ),
    code("load-extension", "%load_ext chapyter_ext"),
    code(
        "make-data",
        """\
import numpy as np
import pandas as pd

rng = np.random.default_rng(2024)
months = pd.date_range("2024-01-01", periods=12, freq="MS")
base = {"north": 120_000, "south": 95_000, "east": 80_000, "west": 105_000}
trend = {"north": 0.004, "south": 0.012, "east": 0.02, "west": -0.003}
rows = []
for i, month in enumerate(months):
    for region in base:
        amount = base[region] * (1 + trend[region]) ** i * rng.normal(1, 0.06)
        rows.append((month, region, int(rng.integers(300, 900)), round(amount, 2)))
sales = pd.DataFrame(rows, columns=["month", "region", "units", "revenue_eur"])
sales.head()""",
    ),
    Ask(
        "ask-table",
        "monthly revenue per region as a table, one column per region, in thousands of euros, "
        "with a total row",
        """\
Here is a pivot of `sales` by month and region, in thousands of euros, with a total row at \
the bottom:

```python
revenue = sales.pivot_table(index="month", columns="region", values="revenue_eur", aggfunc="sum")
revenue.index = revenue.index.strftime("%Y-%m")
revenue_k = (revenue / 1000).round(1)
revenue_k.loc["total"] = revenue_k.sum().round(1)
revenue_k
```

`revenue` keeps the full values for further analysis.""",
    ),
    Ask(
        "ask-plot",
        "plot monthly revenue per region as a bar chart, one bar per region",
        """\
This draws one group of bars per month, one bar per region, from the `revenue` table:

```python
import matplotlib.pyplot as plt

ax = (revenue / 1000).plot(kind="bar", figsize=(10, 4), width=0.8)
ax.set_xlabel("month")
ax.set_ylabel("revenue (thousand EUR)")
ax.set_title("Monthly revenue per region")
ax.tick_params(axis="x", rotation=45)
ax.legend(title="region", loc="upper left", bbox_to_anchor=(1.01, 1))
plt.tight_layout()
plt.show()
```""",
    ),
    Ask(
        "ask-growth",
        "which region grew most from the first half of the year to the second? print the "
        "growth of each region in percent",
        """\
```python
halves = revenue.groupby(revenue.index < "2024-07").sum()
growth = ((halves.loc[False] / halves.loc[True] - 1) * 100).sort_values(ascending=False)
for region, pct in growth.items():
    print(f"{region:>6}: {pct:+.1f} %")
print(f"Grew most: {growth.index[0]}")
```

`halves.loc[True]` is January to June, `halves.loc[False]` July to December.""",
    ),
]

FIX = [
    md(
        "intro",
        """\
# An error, fixed by a second request

The first answer fails: `order_date` holds text, not dates. The second `%%ai` cell asks for a \
fix; the model sees the last error in the kernel's summary, so a short request is enough. \
The failing cell is tagged `raises-exception`, which tells JupyterLab, \
`jupyter nbconvert --execute` and `jupyter execute` to go on after it (papermill still \
reports the error, once everything has run).""",
    ),
    code("load-extension", "%load_ext chapyter_ext"),
    code(
        "make-data",
        """\
import numpy as np
import pandas as pd

rng = np.random.default_rng(7)
days = pd.date_range("2024-01-01", "2024-12-31", freq="D")
picked = np.sort(rng.choice(len(days), size=300, replace=False))
# As read from a CSV export: dates are text.
orders = pd.DataFrame(
    {
        "order_date": days[picked].strftime("%Y-%m-%d"),
        "amount_eur": rng.gamma(2.0, 30.0, size=len(picked)).round(2),
    }
)
orders.dtypes""",
    ),
    Ask(
        "ask-span",
        "how many days do the orders cover, and what is the average order amount per weekday?",
        """\
```python
span = orders["order_date"].max() - orders["order_date"].min()
print(f"The orders cover {span.days} days.")
orders.groupby(orders["order_date"].dt.day_name())["amount_eur"].mean().round(2)
```""",
        raises=True,
    ),
    Ask(
        "ask-fix",
        "fix the error",
        """\
`order_date` holds strings, so subtracting two of them fails. Converting the column with \
`pd.to_datetime` first fixes it, and makes `.dt` available for the weekdays:

```python
orders["order_date"] = pd.to_datetime(orders["order_date"])
span = orders["order_date"].max() - orders["order_date"].min()
print(f"The orders cover {span.days} days.")
weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
by_day = orders.groupby(orders["order_date"].dt.day_name())["amount_eur"].mean()
by_day.reindex(weekdays).round(2)
```""",
    ),
]

#: The notebook ``scripts/start.sh`` opens (copied to ``notebooks/Start here.ipynb``).
STARTER = [
    md(
        "intro",
        """\
# Start here

chapyter-ext turns a request in plain language into Python that runs in this notebook's kernel. \
This notebook shows the three things to know: `%%ai` cells, the **AI Chat** on the right, and \
**replay**. Run it with *Run > Run All Cells*: nothing here asks a model, so it works offline.

**Which model answers?** `scripts/start.sh` printed it in one line, and `%ai status` in a cell \
says it too. With no key configured it is the bundled **SmolLM2-135M**: tiny and offline, it \
manages small, concrete requests (below) and fails at bigger ones. For a better model, stop \
JupyterLab, `export OPENAI_API_KEY=...` (or `OPENAI_BASE_URL` and `CHAPYTER_MODEL` for Ollama, \
vLLM, LM Studio...) and run `./scripts/start.sh` again; see *Configure* in the README.""",
    ),
    code(
        "load-extension",
        "# Loads %%ai and %ai: kernels started by start.sh have them already, other kernels\n"
        "# get them here (reload prints nothing either way).\n"
        "%reload_ext chapyter_ext",
    ),
    code(
        "make-data",
        """\
import pandas as pd

prices = pd.DataFrame({"item": ["tea", "cake", "soup"], "price": [2.5, 4.0, 6.5], "qty": [3, 1, 2]})
prices""",
    ),
    md(
        "about-ai",
        """\
## 1. `%%ai`: a request becomes a cell

The first line `%%ai`, your request below it. Shift+Enter sends it with a short summary of \
your variables (here `prices` and its columns), and the code lands in the cell right below, \
linked to the prompt. The pair below was made that way.""",
    ),
    Ask(
        "ask-total",
        "add a column total that is price * qty",
        """\
```python
prices["total"] = prices["price"] * prices["qty"]
prices
```""",
    ),
    md(
        "your-turn",
        """\
**Your turn**: edit the request in the cell below (or write a new `%%ai` cell) and press \
Shift+Enter. Small requests work best with the bundled model, for example *mean of price \
into avg*, *rows of prices where qty > 1*, *sort prices by total*. With the bundled model its \
code waits for your review (setting: Local review): it is inserted below, not run; read it, \
then press Shift+Enter on it. If the request fails, the prompt cell says why in one line.""",
    ),
    Ask(
        "ask-mean",
        "mean of price into avg",
        """\
```python
avg = prices["price"].mean()
avg
```""",
    ),
    md(
        "about-chat",
        """\
## 2. The AI Chat

Open it from the chat icon in the right side bar, or *Open AI Chat* in the command palette \
(Ctrl+Shift+C). It sees the active cell and its neighbours, the last error and the kernel's \
variables; the chip above its input shows exactly what is sent (click it to read it). Code \
in an answer has **Insert below** and **Copy** buttons (and **Insert and run** with a model \
configured); code that does not parse, or that reads names your kernel lacks, gets **Copy** \
only, with the reason.""",
    ),
    md(
        "about-fix",
        """\
**Fix, Explain, ghost text, Agent.** Every error gets **Fix** and **Explain** buttons. Try it: \
run `prnt(avg)` in a new cell, then **Fix**: the proposal shows as a diff to accept (with \
the bundled model, **Accept** only: you run it). A slip like that (a misspelt name, column or \
method, one past the end of a list, a missing `)`) is fixed even offline; for anything \
harder the bundled model says in one line that it could not. As you type, a grey \
suggestion may appear: **Tab** takes it (with the bundled model, one line of code or \
nothing). **Agent** mode in the chat runs code for you; with the bundled model it says what \
to expect, takes at most 3 steps and asks before each: configure a model for real analysis.""",
    ),
    md(
        "about-replay",
        """\
## 3. Replay: the same results without asking again

Each generated cell records the request it answers (metadata `chapyter`). Run All, and batch \
runs such as `jupyter nbconvert --to notebook --execute "Start here.ipynb"`, **replay**: a \
prompt whose cell below is up to date asks no model, and the committed code runs, so the \
results are the ones you saw. Shift+Enter on one `%%ai` cell alone (or `%%ai --regenerate`) \
asks the model again.""",
    ),
]

EXAMPLES = {
    "sales_analysis.ipynb": SALES,
    "fix_an_error.ipynb": FIX,
    "start_here.ipynb": STARTER,
}


def make_notebook(spec: list) -> nbformat.NotebookNode:
    cells = []
    for item in spec:
        if isinstance(item, Ask):
            cell = nbformat.v4.new_code_cell(f"%%ai\n{item.request}")
            cell["id"] = item.id
        else:
            kind, cell_id, text = item
            new = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
            cell = new(text)
            cell["id"] = cell_id
        cells.append(cell)
    return nbformat.v4.new_notebook(
        cells=cells, metadata={"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    )


def kernel_env(server: FakeOpenAIServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))}
    env.pop("MPLBACKEND", None)  # the kernel's inline backend, so figures become outputs
    env.update({"OPENAI_BASE_URL": server.base_url, "CHAPYTER_MODEL": MODEL})
    return env


def keep_unchanged_provenance(nb: nbformat.NotebookNode, committed: Path) -> None:
    """An answer identical to the committed one keeps its committed provenance (time, host)."""
    if not committed.exists():
        return
    old = {
        cell["id"]: cell["metadata"][METADATA_KEY]
        for cell in nbformat.read(committed, as_version=4).cells
        if METADATA_KEY in cell.get("metadata", {})
    }
    same = ("generated_from", "prompt_sha256", "model", "code_sha256")
    for cell in nb.cells:
        new = cell.get("metadata", {}).get(METADATA_KEY)
        previous = old.get(cell["id"])
        if new and previous and all(new.get(k) == previous.get(k) for k in same):
            cell["metadata"][METADATA_KEY] = previous


def build(name: str, spec: list) -> Path:
    path = HERE / name
    asks = [item for item in spec if isinstance(item, Ask)]
    raising = {item.id for item in asks if item.raises}
    nb = make_notebook(spec)
    with FakeOpenAIServer(models=(MODEL,)) as server:
        server.script(*(item.answer for item in asks))
        env = kernel_env(server)

        def tag_failing(generated, prompt) -> None:
            if prompt["id"] in raising:
                generated["metadata"]["tags"] = ["raises-exception"]

        regenerate_notebook(
            nb,
            path=str(path),
            cwd=str(HERE),
            env=env,
            timeout=120,
            new_cell_id=lambda prompt_id: f"{prompt_id}-code",
            on_generated=tag_failing,
        )
        if len(server.requests) != len(asks):
            sys.exit(f"{name}: expected {len(asks)} model calls, got {len(server.requests)}")
        keep_unchanged_provenance(nb, path)

        server.clear()
        NotebookClient(
            nb, timeout=120, record_timing=False, resources={"metadata": {"path": str(HERE)}}
        ).execute(env=env)
        if server.requests:
            sys.exit(f"{name}: the replay asked the model {len(server.requests)} times")
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path


def main() -> None:
    for name, spec in EXAMPLES.items():
        print(f"built {build(name, spec).relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
