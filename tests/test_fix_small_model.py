"""Fix with the real bundled model, as the benchmark measures it (its short form): a failing
cell's real error from a kernel, the server's Fix path with nothing configured, and each
proposal offered as runnable run in a fresh kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_local_model import needs_local_model

ROOT = Path(__file__).resolve().parents[1]


@needs_local_model
def test_fix_with_the_bundled_model_offers_no_code_that_fails(tmp_path):
    """Not a success rate (that is ``benchmarks/bench_fix_small.py``): a slip a repair fixes
    is fixed, a cell the model cannot fix says so in one line, and nothing offered raises."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path)
    out = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_fix_small.py"),
            "--short",
            "--json",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    print(done.stdout)
    data = json.loads(out.read_text())
    by_name = {r["name"]: r for r in data["results"]}
    assert data["counts"]["invalid"] == 0, done.stdout
    # A slip the cheap repairs know: fixed, shown to accept, held for review.
    assert by_name["print-typo"]["outcome"] == "fixed"
    assert by_name["print-typo"]["hold"] == "waits for your review (setting: Local review)"
    # What the model must fix itself: a fix that passes every check, or the one line.
    bad = by_name["bad-literal"]
    assert bad["outcome"] in ("cannot", "fixed"), bad
    if bad["outcome"] == "cannot":
        assert bad["code"] == ""
        assert bad["said"].startswith("the small local model could not write a fix for this")
        assert "\n" not in bad["said"]
