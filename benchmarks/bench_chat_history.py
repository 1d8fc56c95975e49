"""What the chat history's bookkeeping costs: the index read at server start, the
pre-save hook every notebook save runs on the event loop, and following a folder rename.

The history is made on a temporary disk the way the server makes it (``ChatHistoryStore``,
fsynced atomic writes); the numbers are medians over ``--repeat`` runs, in milliseconds:

- ``index``: a fresh store reading ``--notebooks`` histories of ``--messages`` messages each
  (what the first request after a start waits for, unless the start-up sweep did it first);
- ``hook off`` / ``hook on``: ``ContentsBridge.pre_save`` for a notebook with a chat, with
  ``Chapyter.save_chat_in_notebook`` off (an index look-up: the id) and on (its history read
  and turned into the capped, redacted stored chat);
- ``rename``: a folder of 50 notebooks renamed (one contents event: 50 files rewritten).

Not a test: run it by hand from the repository's root,
``python benchmarks/bench_chat_history.py [--notebooks N] [--messages M] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from chapyter_ext.config import Chapyter
from chapyter_ext.history.contents_events import ContentsBridge
from chapyter_ext.history.store import ChatHistoryStore, ChatMessage, HistoryWorker, new_id
from chapyter_ext.redact import Redactor


def fill(root: Path, notebooks: int, messages: int, folder: str = "nb") -> ChatHistoryStore:
    """A history of ``notebooks`` notebooks under ``folder/``, ``messages`` messages each."""
    store = ChatHistoryStore(root)
    text = "Here is how to plot it: " + "word " * 150  # about 900 characters
    for n in range(notebooks):
        notebook = f"{folder}/notebook-{n}.ipynb"
        chat_id = store.resolve_chat(notebook)
        for m in range(messages):
            role = "user" if m % 2 == 0 else "assistant"
            store.append(notebook, chat_id, ChatMessage(id=new_id(), role=role, content=text))
    return store


def median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=500)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "chats"
        print(f"filling {args.notebooks} histories of {args.messages} messages ...", flush=True)
        fill(root, args.notebooks, args.messages)
        size = sum(p.stat().st_size for p in root.iterdir()) / 1e6
        index = median_ms(lambda: ChatHistoryStore(root).warm(), args.repeat)
        print(f"index:    {index:8.2f} ms for {args.notebooks} histories ({size:.1f} MB)")

        store = ChatHistoryStore(root)
        store.warm()
        history = HistoryWorker(store)
        model = {"type": "notebook", "content": {"metadata": {}, "cells": []}}
        for save_chat, name in ((False, "hook off"), (True, "hook on ")):
            settings = Chapyter(save_chat_in_notebook=save_chat, save_chat_max_bytes=262_144)
            bridge = ContentsBridge(history, None, settings, redactor=Redactor())
            bridge._connected = True  # as connect() leaves it, without a contents manager
            hook = median_ms(partial(bridge.pre_save, model, "nb/notebook-7.ipynb"), args.repeat)
            print(f"{name}: {hook:8.3f} ms per save ({args.messages} messages)")

        moving = fill(Path(tmp) / "moving", 50, args.messages, folder="project")
        names = iter(range(10**6))
        current = ["project"]

        def rename() -> None:
            target = f"project-{next(names)}"
            moving.rename(current[0], target)
            current[0] = target

        print(f"rename:   {median_ms(rename, args.repeat):8.2f} ms for a folder of 50 notebooks")


if __name__ == "__main__":
    main()
