"""Benchmark of trial runs: what trying a step in a confined copy of the kernel costs, per
step, in a kernel holding 1 GB of DataFrames.

Run: .venv/bin/python benchmarks/bench_trial.py [--runs N] [--gigabytes G]

A real kernel (jupyter_client) holds ``G`` GB of float64 DataFrames (ten frames) and a few small
variables; each sample asks for a trial the way the browser does (a silent execute request
whose user expression runs it) and reads the report's timings:

- **overhead**: the kernel-side trial time (fork to report read) less the step's own time in
  the child (``run_ms``): fork, confinement, the snapshot of the state before and after, the
  report. Target < 50 ms beyond the step.
- **round trip**: the client's wall time of the whole request, and of the same request
  without the trial (the step's expression evaluated directly), for comparison.
- **memory it adds**: the child's private pages at the end (``Private_Dirty``): what it
  copied from the kernel by writing and what it allocated. The kernel's own memory does not
  change (its RSS is printed before and after).

Two steps: one that reads (a sum over a column of one frame), one that writes in place (a
column of one 100 MB frame doubled: its pages are copied into the child).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chapyter_ext.trial.kernel import expression
from tests.kernel_harness import Kernel

STEPS = {
    "reads": "total = frame_0['c0'].sum()\ntotal",
    "writes in place": "frame_1['c1'] = frame_1['c1'] * 2\nframe_1['c1'].iloc[0]",
}


def _silent(kernel: Kernel, expressions: dict[str, str]) -> dict:
    kc = kernel.kc
    msg_id = kc.execute("", silent=True, store_history=False, user_expressions=expressions)
    while True:
        reply = kc.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]["user_expressions"]


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def _rss_mb(kernel: Kernel) -> float:
    value = _silent(kernel, {"r": "int(open('/proc/self/statm').read().split()[1]) * 4096"})
    return int(value["r"]["data"]["text/plain"]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    args = parser.parse_args()
    kernel = Kernel({})
    try:
        rows = int(args.gigabytes * 1e9 / 8 / 10 / 10)  # ten frames of ten float64 columns
        setup = kernel.run(
            "import numpy as np, pandas as pd\n"
            "rng = np.random.default_rng(0)\n"
            "columns = [f'c{i}' for i in range(10)]\n"
            f"frames = [pd.DataFrame(rng.random(({rows}, 10)), columns=columns)"
            " for _ in range(10)]\n"
            "for i, f in enumerate(frames):\n    globals()[f'frame_{i}'] = f\n"
            "small = {'a': 1}\nnames = ['x', 'y']\n"
            "print(sum(f.memory_usage().sum() for f in frames) / 1e9)",
            timeout=600,
        )
        held = float(setup.stdout.strip())
        print(f"kernel holds {held:.2f} GB of DataFrames; RSS {_rss_mb(kernel):.0f} MB")
        for label, code in STEPS.items():
            trial = expression("trial", code, 30.0, 4096, False)
            measured = expression("trial", code, 30.0, 4096, True)
            _silent(kernel, {"t": trial})  # warm: the child's imports are the kernel's now
            overhead, totals, trips, plain, private = [], [], [], [], []
            phases: dict[str, list[float]] = {}
            for _ in range(args.runs):
                started = time.perf_counter()
                value = _silent(kernel, {"t": trial})["t"]
                trips.append((time.perf_counter() - started) * 1000)
                report = value["data"]["application/json"]
                assert report["status"] == "ran", report
                timings = report["timings"]
                totals.append(timings["total_ms"])
                overhead.append(timings["total_ms"] - timings["run_ms"])
                # The memory, in a run of its own (reading it costs milliseconds).
                value = _silent(kernel, {"t": measured})["t"]
                private.append(value["data"]["application/json"]["timings"]["private_kb"] / 1024)
                for key in ("fork_ms", "confine_ms", "snapshot_ms", "run_ms", "compare_ms"):
                    phases.setdefault(key, []).append(timings[key])
                started = time.perf_counter()
                _silent(kernel, {"v": f"exec({code!r}, {{**globals()}})"})
                plain.append((time.perf_counter() - started) * 1000)
            print(f"\nstep that {label}: {code!r}, {args.runs} runs")
            print(
                f"  overhead beyond the step: median {statistics.median(overhead):.1f} ms, "
                f"p90 {_p90(overhead):.1f} ms (trial in the kernel: median "
                f"{statistics.median(totals):.1f} ms)"
            )
            print(
                "  phases (median ms): "
                + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in phases.items())
            )
            print(
                f"  round trip: trial {statistics.median(trips):.1f} ms, the step's expression "
                f"alone {statistics.median(plain):.1f} ms (medians)"
            )
            print(
                f"  memory the child adds: median {statistics.median(private):.1f} MB, "
                f"max {max(private):.1f} MB"
            )
        print(f"\nkernel RSS after the runs: {_rss_mb(kernel):.0f} MB")
        print(json.dumps({"gigabytes": held, "runs": args.runs}))
    finally:
        kernel.shutdown()


if __name__ == "__main__":
    main()
