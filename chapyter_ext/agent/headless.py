"""``chapyter-ext agent``: one agent turn against a notebook file, with a real kernel.

The notebook's kernel starts (nbclient), its code cells run once to rebuild its state (their
outputs in the file are left as they were), the figure capture is installed, and then the same
:class:`~chapyter_ext.agent.loop.AgentLoop` as the chat drives: each ``run_code`` step becomes a
new code cell appended to the notebook (``chapyter`` metadata, source ``agent``) and runs; the
final answer becomes a markdown cell; the file is written atomically. No one can approve a step
here: without ``--yes`` a step the policy would ask about is refused, in one line.

Interrupted (Ctrl-C, SIGTERM) during the turn, the run keeps what already ran: a running cell
is interrupted in the kernel, the kernel shut down, and the cells that ran are written with a
markdown note saying what was interrupted; interrupted before any cell ran, it writes nothing.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..atomic_write import check_target, write_notebook
from ..contract import METADATA_KEY, generated_metadata
from ..magic import ensure_cell_ids
from ..tracebacks import exception_line
from .headless_cells import answer_cell
from .headless_setup import AgentRunError, blocking_mcp_tools, load_settings
from .notebook_kernel import KernelRunError, NotebookKernel
from .stop_signals import StopSignals, interrupted_note

if TYPE_CHECKING:
    from ..config import Chapyter
    from ..llm import Endpoint
    from ..policy.consent import Consent
    from .loop import AgentLoop
    from .results import StepResult
    from .tools.mcp import BlockingToolSource

_PROG = "chapyter-ext agent"


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
    #: A signal cut the turn short: what was interrupted, one line (also the note written
    #: below the cells that ran, if any ran).
    interrupted: str | None = None
    #: That signal's number (``SIGINT`` for a bare ``KeyboardInterrupt``).
    signal: int | None = None
    #: One line when outputs showed a configured secret, replaced before the file was written.
    redacted: str | None = None
    #: One line when a failed turn put the kernel's variables back as it found them.
    restored: str | None = None
    #: The answer's numbers, each found or not in what the turn saw (also in its cell).
    numbers: list[dict[str, Any]] = field(default_factory=list)


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
    stop_signals: Sequence[int] = (),
    keep_state: bool = False,
) -> AgentRun:
    """Run one agent turn on the notebook at ``path``; write it to ``output`` (default: in place).

    ``timeout`` bounds each cell (the notebook's own and the agent's, which the turn's time cap
    bounds too); ``policy`` overrides ``Chapyter.agent_policy``; ``settings`` default to
    :func:`load_settings`. ``on_line`` sees each step's line as it happens. Raises
    :class:`AgentRunError` (nothing written) when the run cannot start or a step is refused.

    A ``KeyboardInterrupt`` during the turn ends it with ``interrupted`` set (see the module);
    ``stop_signals`` (e.g. ``SIGINT, SIGTERM``, from the main thread only) are made to raise
    one, once: a later signal cannot cut the shutdown or the write short.

    A turn that ends without an answer after a failing step (the model's retries spent) puts
    the kernel's variables back as they were before it (:mod:`chapyter_ext.snapshot`), said in
    one line (``restored``); ``keep_state`` leaves them as the steps left them.
    """
    import nbformat
    from traitlets import TraitError

    from ..endpoints import kernel_registry

    if not question.strip():
        raise AgentRunError("the question is empty.")
    settings = settings if settings is not None else load_settings()
    if not settings.agent:
        raise AgentRunError("agent mode is turned off (Chapyter.agent).")
    if policy is not None:
        # The administrator's lock holds against the command line too.
        settings.agent_policy = settings.allowed("agent_policy", policy)
        if settings.agent_policy != policy and on_line is not None:
            floor = settings.admin_locks().describe("agent_policy")
            used = settings.agent_policy
            on_line(f"Your administrator requires approval policy {floor}: this run uses {used!r}.")
    if settings.agent_policy == "ask" and not yes:
        raise AgentRunError(
            "the approval policy 'ask' wants approval before every run, and no one can approve "
            "here: pass --yes, or --policy risky (or never), or set Chapyter.agent_policy."
        )
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:
        raise AgentRunError(f"cannot read {path}: {' '.join(str(err).split())}") from None
    ensure_cell_ids(nb)  # before the working copy: cell ids name the same cells in both
    target = output or path
    try:
        check_target(target)  # before any work: a result that cannot be saved is no result
    except OSError as err:
        raise AgentRunError(f"cannot write {target}: {exception_line(err)}") from None
    try:
        registry = kernel_registry(settings)
    except (TraitError, ValueError) as err:  # a bad setting, e.g. from the environment
        raise AgentRunError(exception_line(err)) from None
    run = AgentRun(path)
    turn: _Turn | None = None
    kernel: NotebookKernel | None = None
    with StopSignals(stop_signals) as stop:
        try:
            from ..llm import LLMError

            try:
                # Starts the bundled local model when it is the endpoint: seconds the first time.
                name, endpoint = registry.resolve(None, model=model)
            except (LLMError, TraitError, ValueError) as err:
                raise AgentRunError(exception_line(err)) from None
            secrets = [*registry.secrets(), settings.api_key, *settings.extra_headers.values()]
            cwd = os.path.dirname(os.path.abspath(path))
            local = registry.is_local(name)
            if local and settings.local_review and not yes:
                raise AgentRunError(
                    "the bundled model's steps wait for your review (setting: Local review), "
                    "and no one can review here: pass --yes, or set "
                    "Chapyter.local_review = False."
                )
            tools = blocking_mcp_tools() if settings.mcp else None
            turn = _Turn(
                run, settings, local, endpoint, [s for s in secrets if s], cwd=cwd, tools=tools
            )
            try:
                kernel = NotebookKernel(nb, cwd=cwd, timeout=timeout).start()
            except KernelRunError as err:  # it did not start, or the notebook's cells broke it
                raise AgentRunError(str(err)) from None
            turn.keep_state = keep_state
            turn.run(kernel, question, yes=yes, max_steps=max_steps, on_line=on_line)
        except KeyboardInterrupt:
            run.signal = stop.received or signal.SIGINT
            run.interrupted = interrupted_note(
                run.signal,
                turn.doing if turn is not None else "starting",
                ran=turn.ran if turn is not None else 0,
                kept=bool(turn and turn.cells),
            )
        finally:
            stop.disarm()  # from here on a signal waits: the wind-down is short and bounded
            if kernel is not None:
                kernel.close()  # interrupts a cell cut short, keeps its outputs
            if turn is not None and turn.tools is not None:
                turn.tools.close()  # the MCP servers stop with the run
            registry.close()
        if turn is not None and turn.cells:
            if run.interrupted:
                turn.cells.append(turn.note_cell(question, run.interrupted))
            nb.cells.extend(turn.cells)
            run.written = target
            from ..redact import Redactor

            # What a step printed with a configured key (or an MCP server's) stays out of it.
            secrets = [*turn.secrets, *(turn.tools.secrets() if turn.tools is not None else ())]
            try:
                replaced = write_notebook(nb, target, redactor=Redactor(secrets))
                run.redacted = replaced.note(target) if replaced else None
            except OSError as err:
                raise AgentRunError(f"cannot write {target}: {exception_line(err)}") from None
    return run


class _Turn:
    """The driver: the loop's requests to the model, its steps to the kernel."""

    def __init__(
        self,
        run: AgentRun,
        settings: Chapyter,
        local: bool,
        endpoint: Endpoint,
        secrets: list[str],
        *,
        cwd: str = ".",
        tools: BlockingToolSource | None = None,
    ) -> None:
        self.report, self.settings = run, settings
        self.local, self.endpoint, self.secrets = local, endpoint, secrets
        #: The notebook's folder: where the project's rules are looked for.
        self.cwd = cwd
        #: The MCP servers' tools (None: no server configured).
        self.tools = tools
        self.chat_id, self.message_id = str(uuid.uuid4()), str(uuid.uuid4())
        #: The cells to append: each step's (the one running included), then the answer.
        self.cells: list[Any] = []
        #: What the turn is doing now, for the note when a signal interrupts it.
        self.doing = "the notebook's own cells ran"
        #: Code steps run to their end.
        self.ran = 0
        #: Whether the run said already that its kernel makes no trials.
        self.told_no_trials = False
        #: Leave the kernel's variables as a failed turn left them (``--keep-state``).
        self.keep_state = False

    def run(
        self,
        kernel: NotebookKernel,
        question: str,
        *,
        yes: bool,
        max_steps: int | None,
        on_line: Callable | None,
    ) -> None:
        """Run the turn in ``kernel``, gathering the cells to append in ``cells``."""
        import dataclasses

        from ..llm import LLMError, complete_step
        from ..policy import defined_functions
        from ..profile import uses_small_prompt
        from ..redact import Redactor
        from ..rules import kernel_rules
        from .actions import Finish, Halt
        from .capabilities import capabilities
        from .checked_numbers import answer_numbers
        from .limits import AgentLimits, turn_policy
        from .loop import AgentLoop
        from .tools import OP_RUN_CELL, RUNS_SERVER, default_registry

        self.kernel = kernel
        self.doing = "keeping the kernel's state"
        kept = "--keep-state" if self.keep_state else kernel.snapshot(self.chat_id)
        self.doing = "reading the kernel's variables"
        redactor = Redactor([*self.secrets, *(self.tools.secrets() if self.tools else [])])
        context = (
            self.kernel.context(self.settings.context_budget, question)
            if self.settings.send_context
            else None
        )
        caps = capabilities(self.settings, self.endpoint.model, local=self.local)
        small = uses_small_prompt(self.settings.prompt_style, self.endpoint.model)
        limits = AgentLimits.from_settings(self.settings, small=small)
        if max_steps is not None:
            limits = dataclasses.replace(limits, max_steps=max_steps)
        registry = default_registry()
        notes = kernel_rules(self.settings, self.cwd, redactor).prompt()
        if caps.tools and self.tools is not None:
            self.doing = "starting the MCP servers"
            extra = self.tools.turn_tools()
            registry = registry.extended(extra.tools)
            for line in extra.problems:
                self._say(line, on_line)
            notes = "\n".join([notes, *(f"- Note: {p}" for p in extra.problems)]).strip()
        loop_context = redactor(context) if context else None
        loop = AgentLoop(
            question=question,
            context=loop_context,
            history=[],
            tools=caps.tools,
            images=caps.images,
            policy=turn_policy(self.settings.agent_policy, self.settings, local=self.local),
            limits=limits,
            redactor=redactor,
            small=small,
            # Every code cell of the notebook ran above: its functions were consented to.
            known_functions=defined_functions(
                c.source for c in self.kernel.nb.cells if c.cell_type == "code"
            ),
            registry=registry,
            system_notes=notes,
            known_types=self.kernel.known_types(),
            trials=bool(self.settings.trials),
            secret_names=self.settings.secret_variables(),
        )
        while True:
            action: Any = loop.halt()
            if action is None:
                request = loop.request()
                self.doing = "waiting for the model"
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
                numbers = answer_numbers(action.answer.strip(), loop_context, loop.steps)
                self.report.numbers = list(numbers)
                self.cells.append(self._answer_cell(question, action.answer, numbers))
                break
            if isinstance(action, Halt):
                self.report.stopped = action.reason
                break
            tool = action.tool
            needs, why, guarded = action.needs_approval, "; ".join(action.reasons), False
            # Nobody would read a trial's preview here: a named harm asks without one.
            if action.trial and not (action.plan is not None and action.plan.known):
                consent = self._try(loop, action, on_line)
                needs, guarded = not consent.run, consent.guarded
                why = "; ".join(consent.concerns or consent.reasons)
            if needs and not yes:
                why = why or "the policy asks before every run"
                raise AgentRunError(
                    f"step {len(loop.steps)} ({action.title}) needs approval ({why}), and no "
                    "one can approve here: pass --yes or --policy never, or set "
                    "Chapyter.agent_policy. The file is unchanged."
                )
            if guarded and not self.kernel.arm(action.code):
                raise AgentRunError(
                    f"step {len(loop.steps)} ({action.title}) could run only under the guard, "
                    "which the kernel could not arm. The file is unchanged."
                )
            if tool.op == OP_RUN_CELL:
                result = self._run_code(loop, action.step_id, action.code)
                loop.on_result(action.step_id, result)
                line = f"cell {len(self.kernel.nb.cells)}: {loop.steps[-1].outcome}"
                if result.error:  # the kernel died: nothing more can run
                    self._say(line, on_line)
                    self.report.stopped = f"Stopped: {result.error}."
                    return
            else:
                self.doing = f"carrying out {action.title}"
                loop.on_result(action.step_id, self._carry_out(action, tool))
                record = loop.steps[-1]
                line = (
                    f"{record.title}: {record.outcome}"
                    if tool.runs == RUNS_SERVER
                    else record.outcome
                )
            self._say(line, on_line)
        if self.report.answer is None and loop.steps and loop.steps[-1].status == "error":
            self._undo(kept, on_line)

    def _undo(self, kept: str | None, on_line: Callable | None) -> None:
        """The turn failed at its last step: its variables go back as they were before it."""
        if self.keep_state:
            return
        if kept is None:
            self.doing = "restoring the kernel's state"
            line = self.kernel.restore(self.chat_id)
        else:
            line = f"The kernel's variables stay as the turn left them: {kept}."
        self.report.restored = line
        self._say(f"the turn failed; {line[0].lower()}{line[1:]}", on_line)

    def _try(self, loop: AgentLoop, action: Any, on_line: Callable | None) -> Consent:
        """Try the step in a confined copy of the kernel; the decision on its report (a kernel
        that cannot make trials is said once, and the analysis alone decides from then on)."""
        from ..trial.run import TrialLimits

        self.doing = f"trying step {len(loop.steps)} in a confined copy of the kernel"
        report = self.kernel.trial(action.code, TrialLimits.from_settings(self.settings))
        consent = loop.on_trial(action.step_id, report)
        if consent.unavailable and not self.told_no_trials:
            self.told_no_trials = True
            self._say(
                f"no trial runs here ({consent.unavailable}): steps the analysis cannot prove "
                "harmless ask instead",
                on_line,
            )
        return consent

    def _carry_out(self, action: Any, tool: Any) -> Any:
        """What a step other than a code cell gave: a read of the notebook, an expression
        evaluated in the kernel, a server tool's call."""
        from .results import ToolOutput
        from .tools import OP_EVALUATE, OP_READ_CELL, RUNS_SERVER

        if tool.runs == RUNS_SERVER:
            if self.tools is None:
                return ToolOutput(error="no MCP servers here")
            return self.tools.call(tool, action.arguments)
        request = tool.request(action.arguments)
        if tool.op == OP_READ_CELL:
            return ToolOutput(text=self.kernel.describe_cell(request.get("cell", "")))
        if tool.op == OP_EVALUATE:
            try:
                return ToolOutput(text=self.kernel.evaluate_text(request.get("expression", "")))
            except ValueError as err:
                return ToolOutput(error=str(err))
        return ToolOutput(error=f"unknown operation {tool.op!r}")

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
        # Kept from the start: interrupted, it shows what it printed and its KeyboardInterrupt.
        self.cells.append(cell)
        self.doing = f"running cell {len(self.kernel.nb.cells) + 1}"
        result = self.kernel.run_step(cell, max(1.0, loop.remaining()))
        self.ran += 1
        return result

    def _answer_cell(
        self, question: str, answer: str, numbers: tuple[dict[str, Any], ...] = ()
    ) -> Any:
        return self._markdown_cell(question, answer.strip(), numbers=list(numbers))

    def note_cell(self, question: str, note: str) -> Any:
        """The markdown cell that ends a turn cut short: the question, then ``note`` in
        italics; its metadata is an answer's with ``status: "stopped"``, as the chat history
        records a stopped reply."""
        return self._markdown_cell(question, f"*{note}*", status="stopped")

    def _markdown_cell(self, question: str, text: str, **extra: Any) -> Any:
        return answer_cell(
            question,
            text,
            model=self.endpoint.model,
            chat_id=self.chat_id,
            message_id=self.message_id,
            **extra,
        )
