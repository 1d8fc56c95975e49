"""What the agent loop adds per step beyond the kernel's own run time, with a zero-latency model.

Run: .venv/bin/python benchmarks/bench_agent.py [--steps 20] [--turns 5]

Two measurements, everything on 127.0.0.1, the model being the loopback server answering at
once (so every figure is chapyter-ext's own cost):

1. Server path (what JupyterLab's agent mode uses): a real `jupyter server` with chapyter-ext;
   a client plays the browser: it posts `chapyter-ext/agent` and answers every `step` event at
   once with a result (`agent/result`, one stdout output). Per step: from a `step` event to the
   next one = the result's POST, the tool result assembled and redacted, the next model round
   trip (request built, streamed answer parsed), the SSE event. The kernel run and the
   browser's cell insertion are not in it.
2. Headless path (`chapyter-ext agent`): one turn of `--steps` steps in a real kernel, per step
   the model round trip, the loop, the cell run with the figure capture, the result observed;
   minus the same cell's run on the same kind of kernel through jupyter_client (the kernel's
   own run time, round trip included).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time

from loopback import JupyterServer, fake_model, jupyter_server, post_json
from tornado.httpclient import AsyncHTTPClient

# Each step sets a new name: the loop never runs the same call twice, nor two steps in a row
# that change nothing.
STEP_CODE = "x{} = 6 * 7"


def script_turn(fake_url: str, steps: int) -> None:
    """``steps`` tool calls running STEP_CODE, then an answer."""
    calls = [
        {"name": "run_code", "arguments": {"code": STEP_CODE.format(i), "purpose": "compute"}}
        for i in range(steps)
    ]
    replies = [{"content": "", "tool_calls": [call], "chunk_size": 4096} for call in calls]
    replies.append({"content": "x is 42.", "chunk_size": 4096})
    post_json(f"{fake_url}/_control/reset", {})
    post_json(f"{fake_url}/_control/script", {"replies": replies})


async def server_turn(client, server: JupyterServer, notebook: str) -> list[float]:
    """One agent turn, the client answering each step at once; seconds between steps."""
    stamps: list[float] = []
    message_id = ""
    pending: list[asyncio.Future] = []
    loop = asyncio.get_running_loop()

    async def answer(step_id: str, count: int) -> None:
        result = {
            "message_id": message_id,
            "step_id": step_id,
            "status": "ran",
            "result": {
                "cell_id": f"cell-{count}",
                "execution_count": count,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": "42\n"}],
            },
        }
        await server.post(client, "agent/result", result)

    def on_event(event: str, data: dict) -> None:
        nonlocal message_id
        if event == "start":
            message_id = data["message_id"]
        elif event == "step":
            stamps.append(time.perf_counter())
            pending.append(loop.create_task(answer(data["step_id"], len(stamps))))

    body = {"notebook": notebook, "message": "compute x", "policy": "never", "context": None}
    await server.stream(client, "agent", body, on_event)
    await asyncio.gather(*pending)
    return [b - a for a, b in zip(stamps, stamps[1:])]


def measure_server(fake_url: str, steps: int, turns: int) -> list[float]:
    with jupyter_server(f"{fake_url}/v1", f"--Chapyter.agent_max_steps={steps + 1}") as server:

        async def run() -> list[float]:
            client = AsyncHTTPClient()
            gaps: list[float] = []
            for i in range(turns + 1):
                script_turn(fake_url, steps)
                turn = await server_turn(client, server, f"bench/agent{i}.ipynb")
                if i:  # the first turn warms up (imports, first connections)
                    gaps.extend(turn)
            return gaps

        return asyncio.run(run())


def kernel_run_times(n: int) -> list[float]:
    """The kernel's own run time of STEP_CODE: execute request to reply, jupyter_client."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        for _ in range(3):
            kc.execute_interactive(STEP_CODE.format(0), timeout=60, output_hook=lambda msg: None)
        times = []
        for _ in range(n):
            started = time.perf_counter()
            kc.execute_interactive(STEP_CODE.format(0), timeout=60, output_hook=lambda msg: None)
            times.append(time.perf_counter() - started)
        return times
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def headless_step_times(fake_url: str, root: str, steps: int) -> list[float]:
    import nbformat

    from chapyter_ext.agent.headless import run_agent_file
    from chapyter_ext.config import Chapyter

    path = os.path.join(root, "headless.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("y = 1")]), path)
    script_turn(fake_url, steps)
    os.environ.update(OPENAI_BASE_URL=f"{fake_url}/v1", OPENAI_API_KEY="sk-bench")
    settings = Chapyter(model="fake-model", agent_max_steps=steps + 1, agent_policy="never")
    stamps: list[float] = []
    run_agent_file(
        path, "compute x", yes=True, settings=settings, on_line=lambda _: stamps.append(
            time.perf_counter()
        )
    )  # fmt: skip
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    return gaps[1:]  # the first gap warms up


def ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="steps per turn")
    parser.add_argument("--turns", type=int, default=5, help="server turns measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root, fake_model() as fake_url:
        server = measure_server(fake_url, args.steps, args.turns)
        kernel = kernel_run_times(args.steps * 2)
        headless = headless_step_times(fake_url, root, args.steps)
    result = {
        "server_per_step_ms": ms(server),
        "server_steps_measured": len(server),
        "kernel_own_run_ms": ms(kernel),
        "headless_per_step_ms": ms(headless),
        "headless_overhead_beyond_kernel_ms": round(ms(headless) - ms(kernel), 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
