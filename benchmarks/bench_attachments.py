"""What a chat body with the largest allowed attachments costs the server to read: the peak of
Python memory (``tracemalloc``) and the time of parsing the body as the chat route does
(:func:`chapyter_ext.server.base_handler.parse_json_body` on the received buffer, then
:meth:`chapyter_ext.chat.ChatRequest.parse`, which checks each file's base64 without decoding
it), and of describing a CSV of ``--mb`` megabytes for the model (pandas). Medians over
``--repeat`` runs; memory as a multiple of the body's size.

Not a test: run it by hand from the repository's root,
``python -m benchmarks.bench_attachments [--mb N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import time
import tracemalloc

from chapyter_ext.chat import ChatRequest
from chapyter_ext.chat.attachments import describe_attachments
from chapyter_ext.redact import Redactor
from chapyter_ext.server.base_handler import parse_json_body


def csv_bytes(mb: float) -> bytes:
    """A CSV of about ``mb`` megabytes: an id, a region, two numbers."""
    rows = int(mb * 1024 * 1024 / 25)
    lines = ["id,region,units,price"]
    lines += [
        f"{i},{('north', 'south', 'east')[i % 3]},{i % 97},{i * 0.37:.2f}" for i in range(rows)
    ]
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=19.5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = csv_bytes(args.mb)
    body = json.dumps(
        {
            "notebook": "a.ipynb",
            "message": "Describe it",
            "attachments": [
                {
                    "name": "big.csv",
                    "type": "text/csv",
                    "size": len(data),
                    "data": base64.b64encode(data).decode(),
                }
            ],
        }
    ).encode()
    parse_times, peaks, describe_times = [], [], []
    for _ in range(args.repeat):
        received = bytearray(body)
        tracemalloc.start()
        start = time.perf_counter()
        request = ChatRequest.parse(parse_json_body(received, len(body)))
        parse_times.append(time.perf_counter() - start)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        del received
        start = time.perf_counter()
        describe_attachments(request.attachments, 8000, Redactor())
        describe_times.append(time.perf_counter() - start)
    mb = len(body) / 2**20
    print(f"file {len(data) / 2**20:.1f} MB, body {mb:.1f} MB")
    print(f"read and check: {statistics.median(parse_times) * 1000:.0f} ms median")
    print(
        f"peak while reading: {statistics.median(peaks) / 2**20:.1f} MB "
        f"({statistics.median(peaks) / len(body):.2f} x the body)"
    )
    print(f"describe (pandas): {statistics.median(describe_times) * 1000:.0f} ms median")


if __name__ == "__main__":
    main()
