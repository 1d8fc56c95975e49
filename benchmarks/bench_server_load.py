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
import statistics
import time

from loopback import JupyterServer, fake_model, jupyter_server
from tornado.httpclient import AsyncHTTPClient

from chapyter_ext.testing.openai_server import Reply


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def probe(client, server: JupyterServer, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        await client.fetch(f"{server.base}api/status", headers=server.headers)
        times.append((time.perf_counter() - t) * 1000)
    return times


async def chat(client, server: JupyterServer, i: int, first_token: asyncio.Event, done: list):
    def on_event(name: str, data: dict) -> None:
        if name == "token":
            first_token.set()

    body = {"notebook": f"bench/{i}.ipynb", "message": f"explain {i}"}
    sse = await server.stream(client, "chat", body, on_event)
    done.append(len(sse.tokens()))


async def measure(server: JupyterServer, chats: int, probes: int) -> dict:
    AsyncHTTPClient.configure(None, max_clients=chats + 8)
    client = AsyncHTTPClient()
    await probe(client, server, 20)  # warm-up
    idle = await probe(client, server, probes)
    started = asyncio.Event()
    done: list[int] = []
    tasks = [asyncio.ensure_future(chat(client, server, i, started, done)) for i in range(chats)]
    await asyncio.wait_for(started.wait(), 60)
    await asyncio.sleep(0.5)
    busy = await probe(client, server, probes)
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
    # ~60 chunks, 0.25 s apart: every chat streams for ~15 s, longer than the busy probes. The
    # fake model runs in its own process, so its threads do not compete with the probes for
    # this process's GIL.
    reply = Reply(content="word " * 240, chunk_size=20, chunk_delay=0.25).to_dict()
    streams = f"--ChapyterExtApp.max_concurrent_streams={args.chats + 5}"
    with fake_model(reply) as fake_url, jupyter_server(f"{fake_url}/v1", streams) as server:
        result = asyncio.run(measure(server, args.chats, args.probes))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
