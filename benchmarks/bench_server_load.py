"""Does streaming chat slow the Jupyter server down? p50/p99 of GET /api/status, idle vs busy.

Run: .venv/bin/python benchmarks/bench_server_load.py [--chats 50] [--probes 300]

Starts a real `jupyter server` with chapyter-ext and the loopback OpenAI-compatible server
(answers streamed slowly, so every chat is mid-stream while we measure), then times
`GET /api/status` sequentially: first with the server idle, then while `--chats` chat replies
stream at once through `POST /chapyter-ext/chat`. Everything on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time

from loopback import free_port, post_json, wait_for
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from chapyter_ext.testing.openai_server import Reply


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def probe(client, base: str, token: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        await client.fetch(f"{base}api/status", headers={"Authorization": f"token {token}"})
        times.append((time.perf_counter() - t) * 1000)
    return times


async def chat(client, base: str, token: str, i: int, first_token: asyncio.Event, done: list):
    tokens = 0

    def on_chunk(chunk: bytes) -> None:
        nonlocal tokens
        if b"event: token" in chunk:
            tokens += 1
            first_token.set()

    body = json.dumps({"notebook": f"bench/{i}.ipynb", "message": f"explain {i}"})
    await client.fetch(
        HTTPRequest(
            f"{base}chapyter-ext/chat",
            method="POST",
            body=body,
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
            streaming_callback=on_chunk,
            request_timeout=600,
        )
    )
    done.append(tokens)


async def measure(base: str, token: str, chats: int, probes: int) -> dict:
    AsyncHTTPClient.configure(None, max_clients=chats + 8)
    client = AsyncHTTPClient()
    await probe(client, base, token, 20)  # warm-up
    idle = await probe(client, base, token, probes)
    started = asyncio.Event()
    done: list[int] = []
    tasks = [
        asyncio.ensure_future(chat(client, base, token, i, started, done)) for i in range(chats)
    ]
    await asyncio.wait_for(started.wait(), 60)
    await asyncio.sleep(0.5)
    busy = await probe(client, base, token, probes)
    streaming_during_probe = len(done) == 0
    await asyncio.gather(*tasks)
    return {
        "idle_p50_ms": round(statistics.median(idle), 2),
        "idle_p99_ms": round(percentile(idle, 0.99), 2),
        "busy_p50_ms": round(statistics.median(busy), 2),
        "busy_p99_ms": round(percentile(busy, 0.99), 2),
        "p99_ratio_busy_over_idle": round(percentile(busy, 0.99) / percentile(idle, 0.99), 2),
        "chats": chats,
        "all_chats_still_streaming_while_probed": streaming_during_probe,
        "chats_completed": len(done),
        "probes": probes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--probes", type=int, default=300)
    args = parser.parse_args()
    token = secrets.token_hex(16)
    port = free_port()
    with tempfile.TemporaryDirectory() as root:
        # The fake model runs in its own process, so its threads do not compete with the
        # probes for this process's GIL.
        fake_port = free_port()
        fake = subprocess.Popen(
            [sys.executable, "-m", "chapyter_ext.testing.openai_server", f"--port={fake_port}"],
            stdout=subprocess.DEVNULL,
        )
        fake_url = f"http://127.0.0.1:{fake_port}"
        try:
            run_against(fake_url, root, token, port, args)
        finally:
            fake.terminate()
            fake.wait(10)


def run_against(fake_url: str, root: str, token: str, port: int, args) -> None:
    """Start the Jupyter server against the fake model and print the measurements."""
    wait_for(f"{fake_url}/v1/models")
    # ~60 chunks, 0.25 s apart: every chat streams for ~15 s, longer than the busy probes.
    reply = Reply(content="word " * 240, chunk_size=20, chunk_delay=0.25).to_dict()
    post_json(f"{fake_url}/_control/default", {"reply": reply})
    env = {**os.environ, "OPENAI_BASE_URL": f"{fake_url}/v1", "OPENAI_API_KEY": "sk-bench"}
    env["CHAPYTER_MODEL"] = "fake-model"
    server = subprocess.Popen(
        [
            sys.executable, "-m", "jupyter_server", "--no-browser",
            f"--port={port}", "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            "--allow-root",
            f"--ChapyterExtApp.max_concurrent_streams={args.chats + 5}",
            f"--ChapyterExtApp.history_dir={root}/history",
        ],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/"
        wait_for(f"{base}api/status", token)
        result = asyncio.run(measure(base, token, args.chats, args.probes))
        print(json.dumps(result, indent=2))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
