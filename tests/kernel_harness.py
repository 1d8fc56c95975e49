"""A real IPython kernel (jupyter_client) for tests: run code, collect outputs and reply."""

from __future__ import annotations

import os
import queue
import sys
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import start_new_kernel


@dataclass
class Execution:
    """What one execute request produced."""

    reply: dict
    outputs: list[dict] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]

    @property
    def payload(self) -> list[dict]:
        return self.reply["content"].get("payload", [])

    @property
    def next_input(self) -> dict | None:
        items = [p for p in self.payload if p.get("source") == "set_next_input"]
        return items[0] if items else None

    @property
    def stdout(self) -> str:
        return "".join(
            o["content"]["text"]
            for o in self.outputs
            if o["msg_type"] == "stream" and o["content"]["name"] == "stdout"
        )

    @property
    def errors(self) -> list[dict]:
        return [o["content"] for o in self.outputs if o["msg_type"] == "error"]

    @property
    def error(self) -> dict | None:
        return self.errors[0] if self.errors else None

    def displays(self, mime: str) -> list:
        """Every value of ``mime`` shown by display_data or update_display_data, in order."""
        return [
            o["content"]["data"][mime]
            for o in self.outputs
            if o["msg_type"] in ("display_data", "update_display_data")
            and mime in o["content"]["data"]
        ]


class Kernel:
    """One kernel process with its own environment."""

    def __init__(self, env: dict[str, str]):
        full_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CHAPYTER_"))
        }
        full_env.update(env)
        full_env["PYTHONPATH"] = os.pathsep.join(sys.path)
        self.km, self.kc = start_new_kernel(kernel_name="python3", env=full_env)

    def run(self, code: str, timeout: float = 60) -> Execution:
        outputs: list[dict] = []
        reply = self.kc.execute_interactive(
            code, output_hook=outputs.append, timeout=timeout, allow_stdin=True
        )
        return Execution(reply=reply, outputs=outputs)

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def execute_request(
    kc: Any, code: str, *, allow_stdin: bool, metadata: dict | None = None, timeout: float = 60
) -> Execution:
    """One execute_request shaped like a given frontend's: ``allow_stdin`` and the request's
    ``metadata`` (JupyterLab sends a ``cellId``; nbclient neither, which replays); what it
    produced, its iopub messages until idle and its reply."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": allow_stdin,
        "stop_on_error": True,
    }
    msg = kc.session.msg("execute_request", content, metadata=metadata or {})
    kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    outputs: list[dict] = []
    while True:
        try:
            out = kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            raise AssertionError("no idle status from the kernel") from None
        if out["parent_header"].get("msg_id") != msg_id:
            continue
        if out["msg_type"] == "status":
            if out["content"]["execution_state"] == "idle":
                break
            continue
        outputs.append(out)
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return Execution(reply=reply, outputs=outputs)


def python3_notebook(path: Any, cells: list) -> Any:
    """A notebook of ``cells`` with the python3 kernel, written to ``path`` (returned)."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = cells
    nbformat.write(nb, path)
    return path
