"""``chapyter-ext agent``: one agent turn against a notebook file, with a real kernel.

The notebook's kernel starts (nbclient), its code cells run once to rebuild its state (their
outputs in the file are left as they were), the figure capture is installed, and then the same
:class:`~chapyter_ext.agent.loop.AgentLoop` as the chat drives: each ``run_code`` step becomes a
new code cell appended to the notebook (``chapyter`` metadata, source ``agent``) and runs; the
final answer becomes a markdown cell; the file is written atomically. No one can approve a step
here: without ``--yes`` a step the policy would ask about is refused, in one line.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..contract import METADATA_KEY, SCHEMA_VERSION, generated_metadata, utc_now_iso
from .notebook_kernel import KernelRunError, NotebookKernel, _one_line

if TYPE_CHECKING:
    from ..config import Chapyter
    from ..llm import Endpoint
    from .loop import AgentLoop, StepResult

_PROG = "chapyter-ext agent"


class AgentRunError(Exception):
    """The run could not go on; ``str()`` is one line for the terminal."""


@dataclass
class AgentRun:
    """What a headless turn did."""

    path: str
    #: Where the notebook was written (None: the file was left as it was).
    written: str | None = None
    #: One line per step: "cell 5: ZeroDivisionError: division by zero".
    steps: list[str] = field(default_factory=list)
    answer: str | None = None
    #: Why the turn ended without an answer (a cap, a refusal, the model failing).
    stopped: str | None = None


# -- the run -------------------------------------------------------------------------------------


def run_agent_file(
    path: str,
    question: str,
    *,
    output: str | None = None,
    yes: bool = False,
    max_steps: int | None = None,
    model: str | None = None,
    policy: str | None = None,
    timeout: float = 600.0,
    settings: Chapyter | None = None,
    on_line: Callable[[str], None] | None = None,
) -> AgentRun:
    """Run one agent turn on the notebook at ``path``; write it to ``output`` (default: in place).

    ``timeout`` bounds each cell (the notebook's own and the agent's, which the turn's time cap
    bounds too); ``policy`` overrides ``Chapyter.agent_policy``; ``settings`` default to
    :func:`load_settings`. ``on_line`` sees each step's line as it happens. Raises
    :class:`AgentRunError` (nothing written) when the run cannot start or a step is refused.
    """
    import nbformat
    from traitlets import TraitError

    from ..endpoints import kernel_registry

    if not question.strip():
        raise AgentRunError("the question is empty.")
    settings = settings if settings is not None else load_settings()
    if policy is not None:
        settings.agent_policy = policy
    if settings.agent_policy == "ask" and not yes:
        raise AgentRunError(
            "the approval policy 'ask' wants approval before every run, and no one can approve "
            "here: pass --yes, or --policy risky (or never), or set Chapyter.agent_policy."
        )
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:
        raise AgentRunError(f"cannot read {path}: {' '.join(str(err).split())}") from None
    _ensure_cell_ids(nb)  # before the working copy: cell ids name the same cells in both
    try:
        registry = kernel_registry(settings)
    except (TraitError, ValueError) as err:  # a bad setting, e.g. from the environment
        raise AgentRunError(_one_line(err)) from None
    run = AgentRun(path)
    try:
        from ..llm import LLMError

        try:
            # Starts the bundled local model when it is the endpoint: seconds the first time.
            name, endpoint = registry.resolve(None, model=model)
        except (LLMError, TraitError, ValueError) as err:
            raise AgentRunError(_one_line(err)) from None
        secrets = [*registry.secrets(), settings.api_key, *settings.extra_headers.values()]
        cwd = os.path.dirname(os.path.abspath(path))
        turn = _Turn(run, settings, registry.is_local(name), endpoint, [s for s in secrets if s])
        try:
            with NotebookKernel(nb, cwd=cwd, timeout=timeout) as kernel:
                cells = turn.run(kernel, question, yes=yes, max_steps=max_steps, on_line=on_line)
        except KernelRunError as err:  # the kernel did not start, or the notebook's cells broke it
            raise AgentRunError(str(err)) from None
    finally:
        registry.close()
    if cells:
        nb.cells.extend(cells)
        run.written = output or path
        write_atomically(nb, run.written)
    return run


def load_settings() -> Chapyter:
    """The settings the notebook's kernel would have: the environment, then ``c.Chapyter`` of
    the default IPython profile (``ipython_config.py``, ``ipython_kernel_config.py``)."""
    from IPython.paths import get_ipython_dir
    from traitlets.config.loader import load_pyconfig_files

    from ..config import Chapyter

    profile = os.path.join(get_ipython_dir(), "profile_default")
    try:
        config = load_pyconfig_files(["ipython_config.py", "ipython_kernel_config.py"], profile)
        return Chapyter(config=config)
    except Exception as err:
        raise AgentRunError(f"cannot read the settings in {profile}: {_one_line(err)}") from None


class _Turn:
    """The driver: the loop's requests to the model, its steps to the kernel."""

    def __init__(
        self,
        run: AgentRun,
        settings: Chapyter,
        local: bool,
        endpoint: Endpoint,
        secrets: list[str],
    ) -> None:
        self.report, self.settings = run, settings
        self.local, self.endpoint, self.secrets = local, endpoint, secrets
        self.chat_id, self.message_id = str(uuid.uuid4()), str(uuid.uuid4())
        self.cells: list[Any] = []

    def run(
        self,
        kernel: NotebookKernel,
        question: str,
        *,
        yes: bool,
        max_steps: int | None,
        on_line: Callable | None,
    ) -> list[Any]:
        """Run the turn in ``kernel``; returns the cells to append (none when nothing ran)."""
        import dataclasses

        from ..llm import LLMError, complete_step
        from ..redact import Redactor
        from .capabilities import capabilities
        from .loop import AgentLimits, AgentLoop, Finish, Halt, ReadCell, RunCode

        self.kernel = kernel
        redactor = Redactor(self.secrets)
        context = (
            self.kernel.context(self.settings.context_budget, question)
            if self.settings.send_context
            else None
        )
        caps = capabilities(self.settings, self.endpoint.model, local=self.local)
        limits = AgentLimits.from_settings(self.settings)
        if max_steps is not None:
            limits = dataclasses.replace(limits, max_steps=max_steps)
        loop = AgentLoop(
            question=question,
            context=redactor(context) if context else None,
            history=[],
            tools=caps.tools,
            images=caps.images,
            policy=self.settings.agent_policy,
            limits=limits,
            redactor=redactor,
        )
        while True:
            action: Any = loop.halt()
            if action is None:
                request = loop.request()
                try:
                    reply = complete_step(self.endpoint, request.messages, request.tools)
                except LLMError as err:
                    if err.tools_rejected and loop.tools:
                        loop.disable_tools()  # the fenced protocol for the rest of the turn
                        continue
                    self.report.stopped = str(err)
                    break
                action = loop.on_reply(reply.text, reply.tool_calls)
            if isinstance(action, Finish):
                self.report.answer = action.answer
                self.cells.append(self._answer_cell(question, action.answer))
                break
            if isinstance(action, Halt):
                self.report.stopped = action.reason
                break
            if isinstance(action, RunCode):
                if action.needs_approval and not yes:
                    why = "; ".join(action.reasons) or "the policy asks before every run"
                    raise AgentRunError(
                        f"step {len(loop.steps)} needs approval ({why}), and no one can "
                        "approve here: pass --yes or --policy never, or set "
                        "Chapyter.agent_policy. The file is unchanged."
                    )
                result = self._run_code(loop, action.step_id, action.code)
                loop.on_result(action.step_id, result)
                line = f"cell {len(self.kernel.nb.cells)}: {loop.steps[-1].outcome}"
                if result.error:  # the kernel died: nothing more can run
                    self._say(line, on_line)
                    self.report.stopped = f"Stopped: {result.error}; the cells already run stay."
                    break
            elif isinstance(action, ReadCell):
                loop.on_read(action.step_id, self.kernel.describe_cell(action.cell))
                line = loop.steps[-1].outcome
            else:
                loop.on_read(action.step_id, self.kernel.context(self.settings.context_budget))
                line = loop.steps[-1].outcome
            self._say(line, on_line)
        return self.cells

    def _say(self, line: str, on_line: Callable[[str], None] | None) -> None:
        self.report.steps.append(line)
        if on_line is not None:
            on_line(f"{_PROG}: {line}")

    def _run_code(self, loop: AgentLoop, step_id: str, code: str) -> StepResult:
        import nbformat

        metadata = generated_metadata(
            code=code,
            model=self.endpoint.model,
            source="agent",
            endpoint=self.endpoint.host,
            chat_id=self.chat_id,
            message_id=self.message_id,
            step_id=step_id,
        )
        cell = nbformat.v4.new_code_cell(source=code, metadata={METADATA_KEY: metadata})
        result = self.kernel.run_step(cell, max(1.0, loop.remaining()))
        self.cells.append(cell)
        return result

    def _answer_cell(self, question: str, answer: str) -> Any:
        import nbformat

        quoted = "\n".join(f"> {line}" for line in question.strip().splitlines())
        metadata = {
            "schema": SCHEMA_VERSION,
            "role": "answer",
            "source": "agent",
            "model": self.endpoint.model,
            "created": utc_now_iso(),
            "chat_id": self.chat_id,
            "message_id": self.message_id,
        }
        return nbformat.v4.new_markdown_cell(
            source=f"{quoted}\n\n{answer.strip()}", metadata={METADATA_KEY: metadata}
        )


# -- helpers -------------------------------------------------------------------------------------


def _ensure_cell_ids(nb: Any) -> None:
    from ..replay import _ensure_cell_ids as ensure

    ensure(nb)


def write_atomically(nb: Any, path: str) -> None:
    """Write ``nb`` to ``path`` through a temporary file and a rename: never half a file."""
    import nbformat

    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        nbformat.write(nb, tmp)
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
