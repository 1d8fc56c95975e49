"""How long ``kernel_context`` takes, and whether that depends on the size of the data.

Times ``kernel_context`` on a live IPython shell whose namespace holds 100 variables, once with a
5,000,000-row and a 2,000-column DataFrame among them and once with small frames in their place,
and prints medians and the large/small ratio (which should stay close to 1); then on the
namespace of ``bench_magic`` (what the ``%%ai`` overhead promise is measured on), with the cost
of redacting its result once more. Not a test: run it by hand from the repository's root,
``python -m benchmarks.bench_context [--repeat N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from benchmarks.bench_magic import make_namespace
from chapyter_ext.context import kernel_context, redact, summarize_dataframe

CELLS = [
    "import pandas as pd\nimport numpy as np",
    "orders.head()",
    "wide.shape",
    "def margin(price, cost=0.0):\n    '''Relative margin.'''\n    return (price - cost) / price",
    "orders['missing']",
]


def frames(large: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two frames that change: huge ones, or small ones of the same kinds."""
    rows = 5_000_000 if large else 100
    orders = pd.DataFrame(
        {
            "order_id": np.arange(rows),
            "price": np.linspace(1.0, 100.0, rows),
            "city": pd.Categorical(np.resize(["Paris", "Oslo", "Lima", "Pune"], rows)),
            "customer": np.resize(np.array(["ann", "bob", "cy"], dtype=object), rows),
        }
    )
    columns = 2000 if large else 20
    wide = pd.DataFrame(np.zeros((50, columns)), columns=[f"feature_{i}" for i in range(columns)])
    return orders, wide


def namespace(large: bool) -> dict:
    """100 variables: the two frames above and 98 ordinary ones."""
    orders, wide = frames(large)
    ns: dict = {"orders": orders, "wide": wide}
    for i in range(98):
        kind = i % 7
        if kind == 0:
            ns[f"n_{i}"] = i
        elif kind == 1:
            ns[f"label_{i}"] = f"text value {i} " * 20
        elif kind == 2:
            ns[f"items_{i}"] = list(range(1000))
        elif kind == 3:
            ns[f"config_{i}"] = {"alpha": 0.1, "steps": [1, 2, 3], "name": f"run {i}"}
        elif kind == 4:
            ns[f"arr_{i}"] = np.arange(10_000, dtype=float).reshape(100, 100)
        elif kind == 5:
            ns[f"small_{i}"] = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
        else:
            ns[f"series_{i}"] = pd.Series(np.arange(1000), name=f"s{i}")
    assert len(ns) == 100
    return ns


def shell_with(ns: dict) -> InteractiveShell:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.reset(new_session=True)
    shell.user_ns.update(ns)
    # The cells' displays and the traceback of the failing one are not the benchmark's output.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for cell in CELLS:
            shell.run_cell(cell, store_history=True)
    return shell


def median_ms(func, repeat: int) -> float:
    func()  # warm caches (lru_cache, compiled regexes, lazy imports)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def import_ms() -> float:
    """Importing chapyter_ext.context in a fresh interpreter that has its bytecode cached.

    As in a kernel: the standard library modules it uses are loaded already. The bytecode goes
    to a temporary prefix (this also works where PYTHONDONTWRITEBYTECODE is set).
    """
    code = (
        "import re, os, itertools, types, functools, time, chapyter_ext\n"
        "t = time.perf_counter()\n"
        "import chapyter_ext.context\n"
        "print((time.perf_counter() - t) * 1000)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        env["PYTHONPYCACHEPREFIX"] = cache
        runs = [
            subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                check=True,
                cwd=Path(__file__).resolve().parents[1],
                env=env,
            ).stdout
            for _ in range(6)
        ]
    return statistics.median(float(out) for out in runs[1:])  # the first one writes the cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per case")
    args = parser.parse_args()

    print("building namespaces…", flush=True)
    large, small = namespace(large=True), namespace(large=False)
    print(f"python {sys.version.split()[0]}, pandas {pd.__version__}, numpy {np.__version__}")

    print("\nsummarize_dataframe alone (median ms):")
    orders_big, wide_big = large["orders"], large["wide"]
    orders_small, wide_small = small["orders"], small["wide"]
    for name, df in [
        ("5,000,000 × 4", orders_big),
        ("100 × 4", orders_small),
        ("50 × 2,000", wide_big),
        ("50 × 20", wide_small),
    ]:
        ms = median_ms(lambda df=df: summarize_dataframe(df), args.repeat)
        print(f"  {name:>14}: {ms:7.3f} ms, {len(summarize_dataframe(df)):5d} chars")

    results = {}
    for label, ns in (("large", large), ("small", small)):
        shell = shell_with(ns)
        text = kernel_context(shell)
        results[label] = median_ms(lambda shell=shell: kernel_context(shell), args.repeat)
        print(f"\nkernel_context, {label} frames: {len(text)} chars (budget 6000)")
    ratio = results["large"] / results["small"]
    print(f"\nkernel_context over 100 variables, median of {args.repeat} runs:")
    print(f"  with a 5,000,000-row and a 2,000-column frame: {results['large']:7.2f} ms")
    print(f"  with small frames instead:                      {results['small']:7.2f} ms")
    print(f"  ratio large/small:                              {ratio:7.2f}")

    shell = shell_with({})
    make_namespace(shell)
    text = kernel_context(shell)
    ms = median_ms(lambda: kernel_context(shell), args.repeat)
    print(f"\nkernel_context on bench_magic's namespace: {ms:7.2f} ms, {len(text)} chars")
    ms = median_ms(lambda: redact(text), args.repeat)
    print(f"redact() of that text once more:           {ms:7.2f} ms")

    print(f"\nimport chapyter_ext.context (bytecode cached): {import_ms():.1f} ms")


if __name__ == "__main__":
    main()
