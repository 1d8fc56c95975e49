"""What the server's model route adds to a warm ``%%ai``: the same cell in a kernel the Jupyter
server started, timed calling the model through the server (the default: the kernel holds a
credential, the server the key) and calling it directly (the kernel holding the key, as with
``Chapyter.kernel_keys``), in turn, in the same kernel and the same run.

Run: .venv/bin/python benchmarks/bench_kernel_route.py [--runs N]

A real ``jupyter server`` (``chapyter_ext.testing.jupyter_process``) relays to the zero-latency
loopback model (``chapyter_ext.testing.openai_server``, in this process). The kernel is
started through ``api/kernels`` and reached over its connection file; each sample is one
``%%ai`` timed inside the kernel (``time.perf_counter`` around ``run_cell_magic``), sent as
JupyterLab sends a cell (with a ``cellId``, so it asks the model). Both paths stream the same
answer; the difference of the medians is the route's cost (one more loopback hop, the
credential check, the relay). Also: the raw request through the route and straight to the
model, from this process, on kept-alive connections.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

ANSWER = "```python\nimport statistics\nprint(statistics.mean(rain))\n```"

# Run in the kernel: argv-like values are formatted in. Prints one JSON line.
KERNEL_LOOP = """
import io, json, os, time
from contextlib import redirect_stdout
ip = get_ipython()
rain = [763, 16, 722, 410, 95]
paths = {{
    "route": (os.environ["CHAPYTER_SERVER_URL"], os.environ["CHAPYTER_KERNEL_TOKEN"]),
    "direct": ({direct!r}, "sk-bench"),
}}
samples = {{"route": [], "direct": []}}
for i in range({total}):
    for name in ("route", "direct") if i % 2 else ("direct", "route"):
        url, key = paths[name]
        ip.run_line_magic("config", f"Chapyter.base_url = {{url!r}}")
        ip.run_line_magic("config", f"Chapyter.api_key = {{key!r}}")
        t = time.perf_counter()
        with redirect_stdout(io.StringIO()):
            ip.run_cell_magic("ai", "", f"mean of rain, take {{i}}")
        samples[name].append(time.perf_counter() - t)
print(json.dumps(samples))
"""


def run_in_kernel(kc, code: str, timeout: float = 600) -> str:
    """Run ``code`` as JupyterLab runs a cell; its stdout."""
    msg = kc.session.msg(
        "execute_request",
        {"code": code, "silent": False, "store_history": True, "user_expressions": {},
         "allow_stdin": False, "stop_on_error": True},
        metadata={"cellId": uuid.uuid4().hex},
    )  # fmt: skip
    kc.shell_channel.send(msg)
    out: list[str] = []
    while True:
        reply = kc.get_iopub_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") != msg["header"]["msg_id"]:
            continue
        kind, content = reply["msg_type"], reply["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            raise RuntimeError("\n".join(content["traceback"]))
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)


def raw_posts(url: str, key: str, body: bytes, runs: int) -> list[float]:
    """``runs`` chat completions POSTed raw on one kept-alive connection."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    samples = []
    for i in range(runs + 3):
        t = time.perf_counter()
        conn.request("POST", parts.path.rstrip("/") + "/chat/completions", body, headers)
        response = conn.getresponse()
        data = response.read()
        if response.status != 200 or b"[DONE]" not in data:
            raise RuntimeError(f"{url}: {response.status} {data[:200]!r}")
        if i >= 3:
            samples.append(time.perf_counter() - t)
    conn.close()
    return samples


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()

    from jupyter_client import BlockingKernelClient

    from chapyter_ext.testing.jupyter_process import JupyterProcess
    from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

    with FakeOpenAIServer() as model, tempfile.TemporaryDirectory() as home:
        model.default_reply = Reply(content=ANSWER, chunk_size=16)
        env = {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-bench",
               "CHAPYTER_MODEL": "fake-model"}  # fmt: skip
        with JupyterProcess(home, env=env) as server:
            status, body = server.request("POST", "api/kernels", {"name": "python3"})
            assert status == 201, body
            kernel_id = json.loads(body)["id"]
            kc = BlockingKernelClient()
            kc.load_connection_file(str(Path(home, "runtime", f"kernel-{kernel_id}.json")))
            kc.start_channels()
            kc.wait_for_ready(timeout=60)
            try:
                run_in_kernel(kc, "%load_ext chapyter_ext")
                held = run_in_kernel(kc, "import os; print('OPENAI_API_KEY' in os.environ)")
                assert held.strip() == "False", "the kernel holds the key"
                loop = KERNEL_LOOP.format(direct=model.base_url, total=args.runs + 3)
                samples = json.loads(run_in_kernel(kc, loop).strip().splitlines()[-1])
                route_url = run_in_kernel(
                    kc, "import os; print(os.environ['CHAPYTER_SERVER_URL'])"
                ).strip()
                token = run_in_kernel(
                    kc, "import os; print(os.environ['CHAPYTER_KERNEL_TOKEN'])"
                ).strip()
                body = json.dumps(model.requests[-1].body).encode()
                raw_route = raw_posts(route_url, token, body, args.runs)
                raw_direct = raw_posts(model.base_url, "sk-bench", body, args.runs)
            finally:
                kc.stop_channels()
    route, direct = samples["route"][3:], samples["direct"][3:]
    paired = [r - d for r, d in zip(route, direct)]
    print(
        json.dumps(
            {
                "runs": args.runs,
                "warm_ai_through_server_median_ms": ms(route),
                "warm_ai_direct_median_ms": ms(direct),
                "route_adds_median_ms": round(ms(route) - ms(direct), 2),
                "route_adds_paired_median_ms": ms(paired),
                "raw_post_through_route_median_ms": ms(raw_route),
                "raw_post_direct_median_ms": ms(raw_direct),
                "raw_route_adds_median_ms": round(ms(raw_route) - ms(raw_direct), 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
