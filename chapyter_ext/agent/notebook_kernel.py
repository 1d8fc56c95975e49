"""The notebook's kernel for a headless agent turn, through nbclient: rebuild the state, run
each step's cell with its figure digests read in the same request, evaluate expressions, try a
step in a confined copy of the kernel and arm its guard, and shut down cleanly even when a
Ctrl-C cut a cell short."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import math
import subprocess
from typing import TYPE_CHECKING, Any

from ..context import figures
from ..tracebacks import exception_line

if TYPE_CHECKING:
    from ..trial.report import TrialReport
    from ..trial.run import TrialLimits
    from .results import StepResult

_CONTEXT_EXPRESSION = (
    "__import__('chapyter_ext.context', fromlist=['kernel_context'])"
    ".kernel_context(get_ipython(), budget={budget}, request={request})"
)
_TYPES_EXPRESSION = (
    "__import__('chapyter_ext.policy.known', fromlist=['namespace_types'])"
    ".namespace_types(get_ipython().user_ns)"
)


#: How long a cell cut short by Ctrl-C may take to answer the kernel's interrupt (its
#: ``KeyboardInterrupt`` then shows in its outputs) before the kernel is shut down anyway.
SETTLE_SECONDS = 3.0


class KernelRunError(Exception):
    """The kernel could not start or rebuild the notebook's state; ``str()`` is one line."""


class NotebookKernel:
    """The notebook's kernel through nbclient: rebuilds the state, runs steps, evaluates
    expressions. ``nb`` here is a working copy: the cells that ran, then the agent's."""

    def __init__(self, nb: Any, *, cwd: str, timeout: float) -> None:
        from nbclient import NotebookClient

        self.nb = copy.deepcopy(nb)
        self.timeout = timeout
        self.client = NotebookClient(
            self.nb,
            timeout=_whole_seconds(timeout),
            allow_errors=True,
            interrupt_on_timeout=True,
            record_timing=False,
            resources={"metadata": {"path": cwd}},
        )
        self._stack = contextlib.ExitStack()
        #: A cell is running in the kernel (so a cut-short wait means interrupting it).
        self._running = False
        self._closed = False

    def start(self) -> NotebookKernel:
        """Start the kernel and run the notebook's code cells; :class:`KernelRunError` if that
        fails. Interrupted (``KeyboardInterrupt``), it shuts the kernel down and re-raises."""
        from nbclient.exceptions import DeadKernelError

        try:
            # The kernel process's own log (e.g. ipykernel's TCP warning) is not the user's
            # business here; what cells print comes over the protocol.
            self._stack.enter_context(self.client.setup_kernel(stderr=subprocess.DEVNULL))
            for index, cell in enumerate(self.nb.cells):
                if cell.cell_type == "code":
                    self._execute(cell, index)
        except DeadKernelError:
            self.close()
            raise KernelRunError("the kernel died while the notebook's cells ran.") from None
        except Exception as err:
            self.close()
            raise KernelRunError(f"cannot run the notebook: {exception_line(err)}") from None
        except BaseException:
            self.close()
            raise
        # Silent: no execution count, no history; a kernel without chapyter_ext just has none.
        self._evaluate(figures.INSTALL_CODE, {})
        return self

    def close(self) -> None:
        """Shut the kernel down (once). After a ``KeyboardInterrupt`` cut a call short, the
        kernel is interrupted first (Ctrl-C reached this process only: the kernel runs in a
        session of its own) and the cell's reply awaited for up to ``SETTLE_SECONDS``, so the
        cell keeps what it printed and its ``KeyboardInterrupt``."""
        if self._closed:
            return
        self._closed = True
        try:
            self._settle()
        finally:
            self._stack.close()
            # Interrupted while it started, the kernel was not yet in the stack's care (a
            # clean shutdown leaves no manager behind); this is what that care would run.
            if self.client.km is not None:
                with contextlib.suppress(Exception):
                    self.client._cleanup_kernel()

    def __enter__(self) -> NotebookKernel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def context(self, budget: int, request: str | None = None) -> str:
        """The kernel's context (variables, recent cells, last error), as ``%%ai`` builds it,
        chosen for ``request`` (the agent's task) when there is one."""
        expression = _CONTEXT_EXPRESSION.format(budget=int(budget), request=repr(request))
        values = self._evaluate("", {"context": expression})
        text = values.get("context")
        return text if isinstance(text, str) else ""

    def evaluate_text(self, expression: str) -> str:
        """The text of an ``evaluate`` tool's expression (its value is ``{"text": ...}``);
        ``ValueError`` (one line) when the kernel could not tell."""
        value = self._evaluate("", {"value": expression}).get("value")
        text = value.get("text") if isinstance(value, dict) else None
        if not isinstance(text, str):
            raise ValueError("the kernel could not evaluate it (is chapyter_ext installed there?)")
        return text

    def trial(self, code: str, limits: TrialLimits) -> TrialReport:
        """``code`` tried in a confined copy of the kernel (:mod:`chapyter_ext.trial`): its
        report, or why the kernel could not make one."""
        from ..trial.kernel import trial_expression
        from ..trial.report import TrialReport

        entry = self._entries("", {"trial": trial_expression(code, limits)}).get("trial")
        if isinstance(entry, dict) and entry.get("status") == "ok":
            try:
                return TrialReport.from_dict(_expression_value(entry))
            except ValueError:
                pass
        if isinstance(entry, dict) and entry.get("status") == "error":
            return TrialReport.kernel_failed(str(entry.get("ename")), str(entry.get("evalue")))
        return TrialReport.unavailable("the kernel did not answer the trial")

    def arm(self, code: str) -> bool:
        """Guard the next run of exactly ``code`` (:mod:`chapyter_ext.trial.guard`)."""
        from ..trial.kernel import expression

        value = self._evaluate("", {"armed": expression("arm", code)}).get("armed")
        return isinstance(value, dict) and value.get("armed") is True

    def snapshot(self, turn: str, step: int = 0) -> str | None:
        """Keep the kernel's state before ``step`` of ``turn`` (:mod:`chapyter_ext.snapshot`);
        None, or why the kernel could not (one line)."""
        from ..snapshot.kernel import expression

        value = self._evaluate("", {"take": expression("take", turn, step)}).get("take")
        if not isinstance(value, dict):
            return "the kernel cannot keep its state (is chapyter_ext installed there?)"
        return None if value.get("ok") is True else str(value.get("why") or "no snapshot")

    def restore(self, turn: str, step: int = 0) -> str:
        """Put the kernel's variables back as they were before ``step`` of ``turn``: the one
        line saying what came back and what could not."""
        from ..snapshot.kernel import expression

        value = self._evaluate("", {"undo": expression("restore", turn, step)}).get("undo")
        if not isinstance(value, dict) or not isinstance(value.get("line"), str):
            return "Nothing restored: the kernel did not answer."
        return value["line"]

    def known_types(self) -> dict[str, str]:
        """What the kernel's names hold, for the code analysis (``np`` -> ``module:numpy``)."""
        value = self._evaluate("", {"types": _TYPES_EXPRESSION}).get("types")
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}

    def run_step(self, cell: Any, seconds: float) -> StepResult:
        """Append ``cell`` and run it, reading the figures in the same request."""
        from nbclient.exceptions import DeadKernelError

        from .results import StepResult

        self.nb.cells.append(cell)
        index = len(self.nb.cells) - 1
        expressions: dict[str, Any] = {}
        client = self.client
        kc = client.kc
        assert kc is not None
        execute = kc.execute

        def execute_with_figures(code: str, **kwargs: Any) -> str:
            return execute(code, user_expressions={"figures": figures.TAKE_EXPRESSION}, **kwargs)

        def keep_reply(cell: Any, cell_index: int, execute_reply: dict) -> None:
            expressions.update(execute_reply.get("content", {}).get("user_expressions") or {})

        kc.execute = execute_with_figures  # type: ignore[method-assign,assignment]
        previous_hook = client.on_cell_executed
        client.on_cell_executed = keep_reply
        client.timeout = _whole_seconds(min(self.timeout, seconds))
        try:
            self._execute(cell, index)
        except DeadKernelError:
            return StepResult(cell_id=cell.id, error="the kernel died while the cell ran")
        finally:
            del kc.execute
            client.on_cell_executed = previous_hook
            client.timeout = _whole_seconds(self.timeout)
        digests = _expression_value(expressions.get("figures"))
        return StepResult(
            outputs=[dict(o) for o in cell.outputs],
            execution_count=cell.get("execution_count"),
            cell_id=cell.id,
            figures=digests if isinstance(digests, list) else [],
            images=[
                o["data"]["image/png"]
                for o in cell.outputs
                if o.get("output_type") in ("display_data", "execute_result")
                and isinstance(o.get("data", {}).get("image/png"), str)
            ],
        )

    def describe_cell(self, ref: str) -> str:
        """The source and outputs of a cell: a 1-based position or a cell id."""
        cells = self.nb.cells
        ref = str(ref).strip()
        index = (
            int(ref) - 1
            if ref.isdigit()
            else next((i for i, c in enumerate(cells) if c.get("id") == ref), -1)
        )
        if not 0 <= index < len(cells):
            return f"There is no cell {ref!r}: the notebook has cells 1 to {len(cells)}."
        cell = cells[index]
        lines = [f"Cell {index + 1} ({cell.cell_type}, id {cell.get('id', '?')}):", cell.source]
        for out in cell.get("outputs", []):
            lines.append(_output_text(out))
        return "\n".join(line for line in lines if line)

    def _execute(self, cell: Any, index: int) -> None:
        self._running = True
        try:
            self.client.execute_cell(cell, index)
        except KeyboardInterrupt:
            raise  # the cell runs on in the kernel: close() interrupts it
        except BaseException:
            self._running = False
            raise
        self._running = False

    def _settle(self) -> None:
        """Finish what a ``KeyboardInterrupt`` left in nbclient's event loop: interrupt the
        running cell and wait for its reply (bounded), cancel the rest."""
        from jupyter_core.utils import ensure_async, ensure_event_loop

        # nbclient's synchronous calls all run on this thread's loop (jupyter_core's run_sync).
        loop = ensure_event_loop()
        pending = asyncio.all_tasks(loop)
        if not pending:
            return
        km = self.client.km
        if self._running and km is not None:
            with contextlib.suppress(Exception):
                loop.run_until_complete(ensure_async(km.interrupt_kernel()))
                loop.run_until_complete(asyncio.wait(pending, timeout=SETTLE_SECONDS))
        left = [task for task in pending if not task.done()]
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        for task in pending:  # read every outcome, so none is logged as never retrieved
            if not task.cancelled():
                task.exception()
        self._running = False

    def _evaluate(self, code: str, expressions: dict[str, str]) -> dict[str, Any]:
        """Run ``code`` silently with ``expressions``; their values (None where they failed)."""
        found = self._entries(code, expressions)
        return {name: _expression_value(found.get(name)) for name in expressions}

    def _entries(self, code: str, expressions: dict[str, str]) -> dict[str, Any]:
        """Run ``code`` silently with ``expressions``; the kernel's entry for each."""
        kc = self.client.kc
        assert kc is not None
        msg_id = kc.execute(code, silent=True, store_history=False, user_expressions=expressions)
        try:
            reply = self.client.wait_for_reply(msg_id)
        except Exception:
            return {}
        return (reply or {}).get("content", {}).get("user_expressions") or {}


# -- helpers ---------------------------------------------------------------------------------


def _expression_value(entry: Any) -> Any:
    """A user expression's value: its ``application/json`` (figure digests), else its
    ``text/plain`` read as a Python literal; None when it failed."""
    import ast

    if not isinstance(entry, dict) or entry.get("status") != "ok":
        return None
    data = entry.get("data") or {}
    if "application/json" in data:
        return data["application/json"]
    text = data.get("text/plain")
    try:
        return ast.literal_eval(text) if isinstance(text, str) else None
    except (ValueError, SyntaxError):
        return None


def _output_text(out: Any) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        return str(out.get("text", ""))
    if kind == "error":
        return f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"
    data = out.get("data", {})
    text = data.get("text/plain")
    if isinstance(text, list):
        text = "".join(text)
    shown = text if isinstance(text, str) else ""
    if "image/png" in data:
        shown = f"{shown} [a figure]".strip()
    return shown


def _whole_seconds(seconds: float) -> int:
    return max(1, math.ceil(seconds))
