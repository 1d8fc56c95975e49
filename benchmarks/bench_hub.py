"""Ten users start at once on a real JupyterHub: from the spawn request to the first streamed
chat answer through the hub's proxy.

Run: .venv/bin/python benchmarks/bench_hub.py [--users 10] [--rounds 3] [--port-base 19200]

Needs configurable-http-proxy (`npm ci` in tests/hub, as scripts/test.sh does). The hub is the
one of the hub tests (tests/hub/harness.py): a user environment like docs/deploy.md's
`/opt/jupyter` with its administrator files, the page's `hub-spawner` and
`hub-keys-environment` snippets (each user's key from a keys file), one OS user for everyone
(SimpleLocalProcessSpawner) and the loopback OpenAI-compatible model in its own process.

Each round asks the hub (its REST API, as the spawn page does) to start every user's server
at the same moment, from one thread per user; each thread then reads the spawn's progress
events until the server is ready and POSTs a chat message through the proxy with the user's
token, and stops its clock at the first `token` event. Between rounds every server is stopped.
The first round is the colder one (files not yet in the page cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chapyter_ext.testing.sse import SSEReader  # noqa: E402
from tests.hub import harness  # noqa: E402
from tests.hub.deploy_doc import snippet  # noqa: E402

CHAT = {"notebook": "bench.ipynb", "message": "Say hello."}

#: Test-only, after the page's snippets: these users, each server on a port of the range given.
_USERS_GLUE = """
c.Authenticator.allowed_users = set({users!r})
BENCH_PORTS = {ports!r}


def _bench_port(spawner):
    if spawner.user.name in BENCH_PORTS:
        spawner.port = BENCH_PORTS[spawner.user.name]


c.Spawner.pre_spawn_hook = _bench_port
"""


def start_model(port: int, workdir: Path) -> tuple[harness.Process, str]:
    """The loopback model, in its own process, listing the administrator's models."""
    cmd = [sys.executable, "-m", "chapyter_ext.testing.openai_server", f"--port={port}"]
    cmd += ["--model=class-model", "--model=big-model"]
    env = {**os.environ}
    process = harness.start_process("model", cmd, env=env, cwd=workdir, log=workdir / "model.log")
    url = f"http://127.0.0.1:{port}/v1"
    harness.wait_for(
        lambda: httpx.get(f"{url}/models", timeout=5).status_code == 200, 30, "the model", process
    )
    return process, url


def spawn_to_answer(hub: harness.Hub, name: str, token: str, go: threading.Event) -> dict:
    """One user's start: the spawn request, its progress events to ready, then a chat message
    through the proxy to its first token. Times in seconds from the spawn request."""
    go.wait()
    started = time.perf_counter()
    response = hub.api("POST", f"/users/{name}/server")
    assert response.status_code in (201, 202), response.text
    requested = time.perf_counter() - started
    headers = {"Authorization": f"token {hub.admin_token}"}
    progress = f"{hub.url}/hub/api/users/{name}/server/progress"
    with httpx.stream("GET", progress, headers=headers, timeout=300) as events:
        reader = SSEReader()
        ready = False
        for chunk in events.iter_bytes():
            for _, data in reader.parse(chunk):
                if data.get("failed"):
                    raise RuntimeError(f"{name}'s server failed to start: {data}")
                ready = ready or bool(data.get("ready"))
            if ready:
                break
    ready_at = time.perf_counter() - started
    url = f"{hub.url}/user/{name}/chapyter-ext/chat"
    answered_at = None
    attempts = 0
    while answered_at is None:
        attempts += 1
        sse = SSEReader()
        with httpx.stream(
            "POST", url, headers={"Authorization": f"token {token}"}, json=CHAT, timeout=300
        ) as chat:
            if chat.status_code != 200:  # counted: the proxy's route was not there yet
                chat.read()
                if attempts > 50:
                    raise RuntimeError(f"{name}: chat {chat.status_code}: {chat.text[:200]}")
                time.sleep(0.1)
                continue
            for chunk in chat.iter_bytes():
                names = [event for event, _ in sse.parse(chunk)]
                if "token" in names and answered_at is None:
                    answered_at = time.perf_counter() - started
                if "error" in names:
                    raise RuntimeError(f"{name}: {sse.first('error')}")
    return {
        "user": name,
        "request": requested,
        "ready": ready_at,
        "answer": answered_at,
        "chat_attempts": attempts,
    }


def stop_all(hub: harness.Hub, users: list[str]) -> None:
    for name in users:
        response = hub.api("DELETE", f"/users/{name}/server")
        assert response.status_code in (202, 204, 400), response.text
    harness.wait_for(
        lambda: all(hub.server(name) is None for name in users), 120, "every server to stop"
    )


def one_round(hub: harness.Hub, users: list[str], tokens: dict[str, str]) -> list[dict]:
    go = threading.Event()
    results: list[dict] = []
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            results.append(spawn_to_answer(hub, name, tokens[name], go))
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(name,)) for name in users]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # every thread waiting on the event
    go.set()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return sorted(results, key=lambda r: r["user"])


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):5.2f} s, max {max(values):5.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--port-base",
        type=int,
        default=0,
        help="ports from here on (hub 3, model 1, one per user from +10); 0: any free ports",
    )
    parser.add_argument("--json", help="write every sample to this file")
    args = parser.parse_args()
    users = [f"user{i:02d}" for i in range(1, args.users + 1)]
    ports: dict[str, int] = {}
    model_port = harness.free_port()
    if args.port_base:
        hub_ports = iter(range(args.port_base, args.port_base + 3))
        harness.free_port = lambda: next(hub_ports)  # type: ignore[assignment]
        model_port = args.port_base + 3
        ports = {name: args.port_base + 10 + i for i, name in enumerate(users)}
    keys = {name: f"sk-bench-{name}-{'0123456789abcdef' * 2}" for name in users}
    load = os.getloadavg()
    samples: list[list[dict]] = []
    with tempfile.TemporaryDirectory(prefix="chapyter-bench-hub-") as scratch:
        workdir = Path(scratch)
        model, model_url = start_model(model_port, workdir)
        with harness.running(model):
            env = harness.user_env_from_doc(workdir / "opt-jupyter")
            config = "\n".join(
                [
                    snippet("hub-spawner", prefix=str(env), gateway_url=model_url),
                    snippet(
                        "hub-keys-environment",
                        keys_file=str(workdir / "hub" / "llm-keys.json"),
                        gateway_url=model_url,
                    ),
                    _USERS_GLUE.format(users=users, ports=ports),
                ]
            )
            hub = harness.start_hub(
                workdir / "hub", env, keys=keys, snippets=config, keyed_authenticator=False
            )
            with harness.running(hub.process):
                tokens = {name: hub.token(name) for name in users}
                for number in range(1, args.rounds + 1):
                    results = one_round(hub, users, tokens)
                    samples.append(results)
                    ready = [r["ready"] for r in results]
                    answer = [r["answer"] for r in results]
                    retried = sum(r["chat_attempts"] > 1 for r in results)
                    print(
                        f"round {number}: ready {summary(ready)}; first answer {summary(answer)}"
                        f" ({retried} chat requests retried)",
                        flush=True,
                    )
                    stop_all(hub, users)
    answers = [r["answer"] for results in samples for r in results]
    readies = [r["ready"] for results in samples for r in results]
    after = [r["answer"] - r["ready"] for results in samples for r in results]
    medians = [statistics.median(r["answer"] for r in results) for results in samples]
    maxima = [max(r["answer"] for r in results) for results in samples]
    print(
        f"\n{args.users} users, {args.rounds} rounds, load average at start "
        f"{load[0]:.1f} / end {os.getloadavg()[0]:.1f}\n"
        f"spawn request to ready (all samples): {summary(readies)}\n"
        f"spawn request to first chat token (all samples): {summary(answers)}\n"
        f"ready to first chat token (all samples): {summary(after)}\n"
        f"per round: medians {', '.join(f'{m:.2f}' for m in medians)} s; "
        f"maxima {', '.join(f'{m:.2f}' for m in maxima)} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(samples, indent=1))


if __name__ == "__main__":
    main()
