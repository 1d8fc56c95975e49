"""The memory an idle Jupyter server holds with chapyter-ext, against the same server without it.

Run: .venv/bin/python benchmarks/bench_idle_memory.py [--runs N] [--settle S]

Each run starts a fresh `jupyter server` (everything else installed in this environment loads
as usual: JupyterLab and the other server extensions) twice, with chapyter-ext enabled and with
`--ServerApp.jpserver_extensions={"chapyter_ext": False}`, taking turns. Once `api/status`
answers, it waits until the server is idle (`--settle` seconds, then until its RSS moves less
than 0.25 MB in a second), and reads the process's RSS, USS (private pages) and PSS from
`/proc/PID/smaps_rollup`. With chapyter-ext it then sends the page's hint (`POST
chapyter-ext/warm`, as the chat panel does when first shown), waits for idle again and reads
the memory once more: what a user who opens the chat pays. Medians over the runs; a hub
pays the "added" figure once per single-user server. Linux only (`/proc`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chapyter_ext.testing.jupyter_process import JupyterProcess

#: ``smaps_rollup`` fields, in kB, that make up each figure.
FIELDS = {
    "rss": ("Rss",),
    "uss": ("Private_Clean", "Private_Dirty"),
    "pss": ("Pss",),
}
WITHOUT = '--ServerApp.jpserver_extensions={"chapyter_ext": False}'
WITH = '--ServerApp.jpserver_extensions={"chapyter_ext": True}'


def memory_mb(pid: int) -> dict[str, float]:
    """RSS, USS and PSS of process ``pid``, in MB (10^6 bytes)."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if rest.strip().endswith("kB"):
            values[name] = int(rest.split()[0])
    return {k: sum(values[f] for f in fields) * 1024 / 1e6 for k, fields in FIELDS.items()}


def idle_memory(pid: int, settle: float, timeout: float = 60) -> dict[str, float]:
    """The memory once the process stops growing: ``settle`` s, then until RSS moves less than
    0.25 MB in one second (or ``timeout`` s have gone by)."""
    time.sleep(settle)
    deadline = time.monotonic() + timeout
    last = memory_mb(pid)
    while True:
        time.sleep(1.0)
        now = memory_mb(pid)
        if abs(now["rss"] - last["rss"]) < 0.25 or time.monotonic() > deadline:
            return now
        last = now


def one_server(enabled: bool, settle: float, hint: bool) -> dict[str, dict[str, float]]:
    """Start one server, read its idle memory (and, with chapyter-ext, after the hint)."""
    with tempfile.TemporaryDirectory(prefix="chapyter-idle-") as home:
        option = WITH if enabled else WITHOUT
        with JupyterProcess(home, option) as server:
            out = {"idle": idle_memory(server.pid, settle)}
            if enabled and hint:
                status, body = server.request("POST", "chapyter-ext/warm", {})
                if status != 200:
                    raise RuntimeError(f"POST chapyter-ext/warm: {status} {body[:200]!r}")
                out["after_hint"] = idle_memory(server.pid, settle)
            return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="servers started per setting")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds before reading")
    parser.add_argument(
        "--no-hint", action="store_true", help="skip the hint (a version without the route)"
    )
    args = parser.parse_args()
    samples: dict[str, list[dict[str, float]]] = {"without": [], "with": [], "after_hint": []}
    for _ in range(args.runs):
        for enabled in (True, False):
            got = one_server(enabled, args.settle, not args.no_hint)
            samples["with" if enabled else "without"].append(got["idle"])
            if "after_hint" in got:
                samples["after_hint"].append(got["after_hint"])

    def median(name: str, field: str) -> float:
        return round(statistics.median(s[field] for s in samples[name]), 1)

    out: dict[str, dict[str, float] | int] = {}
    for field in FIELDS:
        base = median("without", field)
        row = {
            "without_mb": base,
            "with_idle_mb": median("with", field),
            "added_idle_mb": round(median("with", field) - base, 1),
        }
        if samples["after_hint"]:
            after = median("after_hint", field)
            row.update(with_after_hint_mb=after, added_after_hint_mb=round(after - base, 1))
        out[field] = row
    out["runs"] = args.runs
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
