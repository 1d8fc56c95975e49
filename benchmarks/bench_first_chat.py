"""The first chat request after the Jupyter server starts, with and without the warm-up.

Run: .venv/bin/python benchmarks/bench_first_chat.py [--servers N] [--pause S]

Each sample starts a fresh `jupyter server` with chapyter-ext (the loopback model in this
process), sends the chat panel's hint (`POST chapyter-ext/warm`, as the page does when the panel
is first shown: the server loads the `openai` SDK then, not at start), waits `--pause` seconds
(a user writing the first message), then POSTs one chat message with a small notebook snapshot
and times, from the POST, the model's first streamed byte (its own clock: `first_chunk_at`) and
the first `token` event at the client. Then a few more messages on the same server give the
warm figure. Three settings take turns: the hint (`on`), no hint (`no_hint`: the first request
loads the SDK itself, on a thread) and `Chapyter.warm_up = False` (`off`: hints ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loopback import jupyter_server

SNAPSHOT = {
    "path": "a.ipynb",
    "cell_count": 2,
    "active": {"index": 1, "type": "code", "source": "rain = [763, 16, 722]"},
    "above": [{"index": 0, "type": "code", "source": "%load_ext chapyter_ext"}],
    "below": [],
    "selection": "",
    "last_error": None,
    "variables": [{"name": "rain", "type": "list", "summary": "list of 3 ints"}],
    "language": "python",
}


async def one_server(
    fake, warm: bool, hint: bool, pause: float, asks: int
) -> tuple[float, float, float]:
    """(first request to model byte, first request to token, median warm request to token)."""
    from tornado.httpclient import AsyncHTTPClient

    options = (
        "--ServerApp.jpserver_extensions={'chapyter_ext': True}",
        f"--Chapyter.warm_up={warm}",
    )
    with jupyter_server(fake.base_url, *options) as server:
        http = AsyncHTTPClient()
        if hint:  # the chat panel, shown
            await server.post(http, "warm", {})
        await asyncio.sleep(pause)
        body = {"notebook": "a.ipynb", "message": "How much rain?", "context": SNAPSHOT}
        samples = []
        for _ in range(asks):
            got: dict[str, float] = {}

            def on_event(name: str, data: dict, got: dict[str, float] = got) -> None:
                # Wall-clock time: it is compared with the model's own clock.
                if name == "token":
                    got.setdefault("token", time.time())

            sent = time.time()
            await server.stream(http, "chat", body, on_event)
            first_chunk = fake.requests[-1].first_chunk_at
            samples.append((first_chunk - sent, got["token"] - sent))
        warm_median = statistics.median(s[1] for s in samples[2:])
        return samples[0][0], samples[0][1], warm_median


async def main() -> None:
    from chapyter_ext.testing.openai_server import FakeOpenAIServer, Reply

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=5, help="servers started per setting")
    parser.add_argument("--pause", type=float, default=3.0)
    parser.add_argument("--asks", type=int, default=8)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float, float]]] = {"on": [], "no_hint": [], "off": []}
    with FakeOpenAIServer() as fake:
        fake.default_reply = Reply(content="Sure: add them up with sum(rain).", chunk_size=8)
        for _ in range(args.servers):
            for name, warm, hint in (
                ("on", True, True),
                ("no_hint", True, False),
                ("off", False, True),
            ):
                results[name].append(await one_server(fake, warm, hint, args.pause, args.asks))

    def ms(values) -> float:
        return round(statistics.median(values) * 1000, 1)

    out = {}
    for name, samples in results.items():
        out[f"warm_up_{name}"] = {
            "first_request_to_model_first_chunk_ms": ms(s[0] for s in samples),
            "first_request_to_first_token_ms": ms(s[1] for s in samples),
            "later_requests_to_first_token_ms": ms(s[2] for s in samples),
            "servers": len(samples),
        }
    out["pause_s"] = args.pause
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
