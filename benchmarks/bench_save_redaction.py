"""What the pre-save redaction of outputs costs on a large notebook.

Run: .venv/bin/python benchmarks/bench_save_redaction.py [--cells 200] [--runs 10]

The notebook: ``--cells`` code cells, each with a 20 KB stream, an ``execute_result`` with a
60 KB HTML table and 10 KB of text, and a 100 KB PNG (base64); every tenth cell also an error
with a traceback (about 18 MB of text and 20 MB of images in all). The server's redactor
holds a 164-character ``sk-proj-`` key and a header value, as a configured server does.

1. ``redact_outputs`` alone, the work the pre-save hook adds to every save: on a notebook
   with no secret (the usual save: nothing rewritten), with the key printed in every tenth
   cell, and saved again with the same outputs through the hook's ``CleanValues`` (values
   found clean before are not read again: JupyterLab's autosave of an unchanged notebook).
2. The whole save through a real ``jupyter server`` with chapyter-ext (``PUT
   /api/contents/<path>``, as JupyterLab saves), for scale.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import string
import tempfile
import time
import urllib.request

from loopback import fake_model

from chapyter_ext.redact import CleanValues, Redactor, redact_outputs
from chapyter_ext.testing.jupyter_process import JupyterProcess

KEY = "sk-proj-" + "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=156))
HEADER = "hdr-" + "".join(random.Random(8).choices(string.ascii_letters + string.digits, k=36))


def big_notebook(cells: int, secret: str | None) -> dict:
    rng = random.Random(1)
    words = ["value", "total", "mean", "rain_mm", "city", "Oslo", "Lima", "12.5", "NaN", "id"]

    def text(size: int) -> str:
        out: list[str] = []
        n = 0
        while n < size:
            line = " ".join(rng.choices(words, k=12)) + "\n"
            out.append(line)
            n += len(line)
        return "".join(out)

    png = "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=100_000))
    result = []
    for i in range(cells):
        shown = f"key: {secret}\n" if secret and i % 10 == 0 else ""
        outputs = [
            {"output_type": "stream", "name": "stdout", "text": text(20_000) + shown},
            {
                "output_type": "execute_result",
                "execution_count": i + 1,
                "metadata": {},
                "data": {
                    "text/plain": text(10_000),
                    "text/html": "<table>" + text(60_000).replace("\n", "<br>") + "</table>",
                },
            },
            {"output_type": "display_data", "metadata": {}, "data": {"image/png": png}},
        ]
        if i % 10 == 5:
            outputs.append(
                {
                    "output_type": "error",
                    "ename": "ValueError",
                    "evalue": "bad value",
                    "traceback": [text(300) for _ in range(8)],
                }
            )
        result.append(
            {
                "id": f"cell-{i}",
                "cell_type": "code",
                "source": "df.describe()",
                "metadata": {},
                "execution_count": i + 1,
                "outputs": outputs,
            }
        )
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": result}


def time_redaction(nb: dict, runs: int, warm: bool = False) -> tuple[float, int]:
    """Median ms of ``redact_outputs`` on fresh copies (as each save parses its JSON anew);
    ``warm``: through a ``CleanValues`` that has seen the notebook once."""
    redactor = Redactor([KEY, HEADER])
    clean = CleanValues(redactor)
    if warm:
        redact_outputs(copy.deepcopy(nb), clean)
    times = []
    outputs = 0
    for _ in range(runs):
        fresh = copy.deepcopy(nb)
        start = time.perf_counter()
        outputs = redact_outputs(fresh, clean if warm else redactor).outputs
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, outputs


def time_saves(nb: dict, runs: int) -> float:
    body = json.dumps({"type": "notebook", "format": "json", "content": nb}).encode()
    with fake_model() as model, tempfile.TemporaryDirectory() as home:
        env = {"OPENAI_BASE_URL": f"{model}/v1", "OPENAI_API_KEY": KEY}
        with JupyterProcess(home, env=env) as server:
            times = []
            for _ in range(runs):
                request = urllib.request.Request(
                    f"{server.base}api/contents/big.ipynb",
                    data=body,
                    method="PUT",
                    headers=server.headers,
                )
                start = time.perf_counter()
                with urllib.request.urlopen(request, timeout=300) as response:
                    response.read()
                times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=200)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    clean = big_notebook(args.cells, None)
    keyed = big_notebook(args.cells, KEY)
    size = len(json.dumps(clean)) / 1e6
    print(f"notebook: {args.cells} cells, {size:.1f} MB as JSON")
    ms, _ = time_redaction(clean, args.runs)
    print(f"redact_outputs, no secret:          {ms:7.1f} ms (median of {args.runs})")
    ms, outputs = time_redaction(keyed, args.runs)
    print(f"redact_outputs, key in {outputs:3d} outputs: {ms:7.1f} ms")
    ms, _ = time_redaction(keyed, args.runs, warm=True)
    print(f"the same saved again (CleanValues): {ms:7.1f} ms")
    ms = time_saves(keyed, max(3, args.runs // 3))
    print(f"whole PUT through jupyter server:   {ms:7.1f} ms (with the key; median)")


if __name__ == "__main__":
    main()
