"""``%%ai`` and ``%ai``: thin IPython magics over llm, context and prompts."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from .config import Chapyter
from .contract import (
    CHECK_SYNTAX_ERROR,
    PROGRESS_MIME,
    MagicLineError,
    generated_metadata,
    generation_payload_item,
    parse_magic_line,
    request_sha256,
)
from .redact import Redactor, TokenRedactor

_PROGRESS_INTERVAL = 0.1  # seconds between display updates: smooth, without flooding iopub


class ChapyterError(Exception):
    """A failure shown to the user as one line, without a traceback."""

    def _render_traceback_(self) -> list[str]:
        # IPython calls this instead of formatting a traceback: the user sees one clear line.
        return [f"\x1b[31mchapyter-ext:\x1b[0m {self}"]


class _Progress:
    """Shows the answer arriving: a live display in a kernel, plain text in a terminal.

    Everything shown passes ``redactor`` (a secret split over two pieces included: the stream
    goes through a :class:`~chapyter_ext.redact.TokenRedactor`), since the display is saved
    with the notebook.
    """

    def __init__(self, shell, model: str, redactor: Redactor):
        self._redact = redactor
        self._tokens = TokenRedactor(redactor)
        self._model = redactor(model)
        self._text: list[str] = []
        self._chars = 0
        self._started = time.perf_counter()
        self._last_update = 0.0
        self._in_kernel = getattr(shell, "kernel", None) is not None
        self._handle: Any = None
        if self._in_kernel:
            from IPython.display import display

            self._handle = display(self._bundle("waiting"), raw=True, display_id=True)

    def _bundle(self, state: str, note: str = "") -> dict:
        answer = "".join(self._text)
        elapsed = time.perf_counter() - self._started
        if state == "waiting":
            # Plain text: an emoji renders as an empty box where no emoji font is installed.
            line = f"Asking {self._model}…"
        elif state == "streaming":
            line = f"{self._model} is writing… {self._chars} characters, {elapsed:.1f} s"
        else:
            line = note
        plain = line if state != "streaming" else f"{line}\n{_tail(answer)}"
        return {
            "text/plain": plain,
            PROGRESS_MIME: {"state": state, "text": answer, "model": self._model},
        }

    def _show(self, safe: str) -> None:
        if safe:
            self._text.append(safe)
            if not self._in_kernel:
                sys.stdout.write(safe)
                sys.stdout.flush()

    def token(self, piece: str) -> None:
        """Called for every streamed piece of the answer."""
        self._chars += len(piece)
        self._show(self._tokens.push(piece))
        if not self._in_kernel:
            return
        now = time.perf_counter()
        if now - self._last_update >= _PROGRESS_INTERVAL:
            self._last_update = now
            self._handle.update(self._bundle("streaming"), raw=True)

    def restart(self, note: str) -> None:
        """Start over for another answer (a small model's next candidate), saying why."""
        self._show(self._tokens.flush())
        self._tokens = TokenRedactor(self._redact)
        self._text.clear()
        self._chars = 0
        if not self._in_kernel:
            sys.stdout.write(f"\n↻ {self._redact(note)}\n")
            sys.stdout.flush()
        else:
            self._handle.update(self._bundle("streaming"), raw=True)

    def finish(self, note: str, state: str = "done") -> None:
        """Replace the live view with one line (``state`` is "done" or "failed")."""
        self._show(self._tokens.flush())
        note = self._redact(note)
        if not self._in_kernel:
            if self._text:
                sys.stdout.write("\n")
            if state == "done":
                print(note)
            return
        bundle = self._bundle(state, note)
        if state == "failed":
            # The error itself is shown once, by ChapyterError; keep only the partial answer.
            bundle["text/plain"] = ""
        self._handle.update(bundle, raw=True)


def _error_output(shell, exc: BaseException) -> dict:
    """An exception raised by code run here, as an error output (``ename``, ``evalue``,
    ``traceback`` frames as IPython formats them)."""
    try:
        frames = shell.InteractiveTB.structured_traceback(type(exc), exc, exc.__traceback__)
    except Exception:
        frames = []
    return {"ename": type(exc).__name__, "evalue": str(exc), "traceback": list(frames)}


#: Why a generated cell waits below instead of running (the %%ai progress line says it).
REVIEW_NOTE = "it waits for your review (setting: Local review); run it once it looks right."
#: The setting that held code back, named after the reason.
HOLD_NOTE = "setting: Run policy; run it yourself once you have read it"


def review_first(settings: Chapyter, args) -> bool:
    """Whether ``%%ai``'s code waits for the user's review instead of running: the bundled
    local model answers (nothing configured) and ``Chapyter.local_review`` is on
    (:func:`chapyter_ext.guards.review_first`); an explicit ``--run`` still runs it."""
    from .guards.review import review_first as local_review_first
    from .local_model import wants_local_model

    local = wants_local_model(
        base_url=settings.base_url, api_key=settings.api_key, enabled=settings.local_model
    )
    return local_review_first(settings, local=local) and not args.run


def _redacted(completion, redactor: Redactor):
    """``completion`` with its text and model name redacted: the code below, its provenance
    and every line about it come from them, and all are saved with the notebook."""
    completion.text = redactor(completion.text)
    completion.model = redactor(completion.model)
    return completion


def _tail(text: str, lines: int = 12) -> str:
    parts = text.splitlines()
    return "\n".join(parts[-lines:])


@magics_class
class AIMagics(Magics):
    """Natural language to code, in this kernel."""

    shell: Any  # IPython types it as optional; a registered magic always has one

    def __init__(self, shell):
        super().__init__(shell)
        self.settings = Chapyter(parent=shell)
        # Listed in shell.configurables so that `%config Chapyter.model = "..."` reaches it.
        shell.configurables.append(self.settings)

    @cell_magic
    def ai(self, line: str, cell: str):
        """Turn a request in plain language into code in a new cell below, and run it.

        Usage::

            %%ai [--model NAME] [--no-run | --run] [--no-context] [--regenerate]
            plot the monthly revenue in df as a bar chart

        Options (exactly these spellings; a value may be quoted)::

            --model NAME, --model=NAME, -m NAME, -mNAME
                          model to ask for this request (default: Chapyter.model)
            --no-run      insert the code below without running it, for review
            --run         also run it where no frontend runs it: terminal IPython (instead of
                          leaving it at the next prompt) or a kernel without chapyter-ext's
                          JupyterLab extension (VS Code, Notebook 6), as a cell of its own in
                          the history. Never twice: JupyterLab with the extension runs it in
                          the cell below, a batch run replays.
            --no-context  send only the request: no variables, recent cells or last error
            --regenerate  ask again even when the cell below is up to date (JupyterLab)

        The request goes to the configured OpenAI-compatible endpoint together with a short,
        redacted summary of this kernel (variables, DataFrame columns, recent cells, the last
        error). What comes back is redacted too before it is shown or inserted (the answer as it
        streams, the code, its provenance, error lines): the configured key and header values,
        also in part, never reach the notebook. The code of the answer lands in a new cell
        directly below this one; in JupyterLab it runs there at once, linked to this cell, and
        running this cell again replaces it. In terminal IPython it waits at the next prompt
        (``--run`` runs it). With the bundled local model (no endpoint configured) it is
        inserted for review, not run (``Chapyter.local_review``; ``--run`` runs it).

        Batch runs (``jupyter nbconvert --execute``, ``jupyter execute``, papermill, nbclient)
        replay: no model is asked, and the committed generated cell below runs as the next
        cell. ``CHAPYTER_REGENERATE=1`` (or ``Chapyter.batch_mode = "regenerate"``) asks the
        model there too, which is not reproducible. Settings: ``%ai status``,
        ``%config Chapyter``.

        When the generated code raises, the model is asked again with the code and its error
        and the corrected code replaces it and runs, at most ``Chapyter.fix_retries`` times
        (default 1; never in a batch run).

        An answer that is not valid Python is still inserted below, never run, with the
        error shown here and ``"check": "syntax-error"`` in its provenance: fix it by hand, or
        run this cell again.
        """
        from .replay import REPLAY_LINE, identify_caller

        try:
            args = parse_magic_line(line)
        except MagicLineError as err:
            raise ChapyterError(str(err)) from None
        if not cell.strip():
            raise ChapyterError("The request is empty: write what you want below the %%ai line.")
        caller = identify_caller(self.shell)
        if caller.is_batch and self.settings.batch_mode != "regenerate":
            print(REPLAY_LINE)
            return None
        return self._generate(cell, args, caller)

    def _ask(self, cell: str, args, retry=None):
        """Ask the model: for code from the request, or (``retry``) to correct code that raised.

        Returns the code, the completion, the endpoint, the context's length, the progress
        display and the one-line syntax error (None when the code parses). A small model
        (``Chapyter.prompt_style``) gets its own prompt and up to three checked candidates
        (:mod:`chapyter_ext.small_model`).
        """
        from .context import kernel_context
        from .llm import LLMError, complete
        from .parsing import (
            CodeSyntaxError,
            MagicCallError,
            NoCodeError,
            check_syntax,
            extract_code,
        )
        from .prompts import build_messages, build_retry_messages
        from .rules import kernel_rules, with_rules
        from .small_model import SMALL_CONTEXT_BUDGET, uses_small_prompt

        settings = self.settings
        registry = self._registry()
        model_name = registry.model_name(None, model=args.model)
        small = uses_small_prompt(settings.prompt_style, model_name)
        secrets = self._secrets(registry)
        # One policy for what is sent and for everything shown and saved with the notebook
        # (the live answer, the code below, its provenance, the error lines).
        redactor = Redactor(secrets)
        request = redactor(cell.strip())
        context = None
        if settings.send_context and not args.no_context:
            if small:
                # Only the variables (those the request names first), no cells to echo back.
                context = kernel_context(
                    self.shell,
                    budget=min(settings.context_budget, SMALL_CONTEXT_BUDGET),
                    n_cells=0,
                    secrets=secrets,
                    request=cell.strip(),
                )
            else:
                context = kernel_context(
                    self.shell,
                    budget=settings.context_budget,
                    secrets=secrets,
                    request=cell.strip(),
                )
        retry_parts = None
        if retry is not None:
            from .tracebacks import error_text

            retry_parts = (redactor(retry.code), redactor(error_text(retry.error)))
        if small:
            from .small_model import build_small_messages

            messages = build_small_messages(request, context, retry=retry_parts)
        elif retry_parts is None:
            messages = build_messages(request, context)
        else:
            messages = build_retry_messages(request, context, *retry_parts)
        # The project's AGENTS.md: from the kernel's working directory up (chapyter_ext.rules).
        messages = with_rules(messages, kernel_rules(settings, os.getcwd(), redactor, small=small))

        progress = _Progress(self.shell, model_name, redactor)
        try:
            # Starts the bundled local model when it is the endpoint: seconds the first time.
            endpoint = registry.resolve(None, model=args.model)[1]
            if small:
                code, completion, endpoint = self._small_candidates(
                    endpoint, messages, progress, cell.strip(), redactor
                )
            else:
                completion = _redacted(
                    complete(endpoint, messages, on_token=progress.token), redactor
                )
                code = extract_code(completion.text)
        except (LLMError, NoCodeError) as err:
            message = redactor(str(err))
            progress.finish(message, state="failed")
            raise ChapyterError(message) from None
        except KeyboardInterrupt:
            progress.finish("Interrupted: nothing was inserted.", state="failed")
            raise ChapyterError("Interrupted: nothing was inserted.") from None

        try:
            check_syntax(code)
            failed = None
        except MagicCallError as err:
            message = redactor(str(err))
            progress.finish(message, state="failed")
            raise ChapyterError(message) from None
        except CodeSyntaxError as err:
            # Delivered all the same, never run: the answer stays visible, to fix by hand.
            failed = redactor(str(err))
        return code, completion, endpoint, len(context or ""), progress, failed

    def _secrets(self, registry) -> list[str]:
        """The keys and header values in use; the configured key may live only in %config."""
        settings = self.settings
        found = [*registry.secrets(), settings.api_key, *settings.extra_headers.values()]
        return [s for s in found if s]

    def _small_candidates(self, endpoint, messages, progress, request: str, redactor: Redactor):
        """Up to ``small_model.CANDIDATES`` answers of a small model, each checked against the
        kernel's namespace; the first that passes, with the endpoint settings it was asked
        with. None passes: one line (``small_model.failed_message``) as a ChapyterError."""
        from .llm import complete
        from .parsing import NoCodeError, extract_code
        from .small_model import CANDIDATES, candidate_request, check_candidate, failed_message

        problem = ""
        for index in range(CANDIDATES):
            if index:
                progress.restart(f"candidate {index + 1} of {CANDIDATES} ({problem})")
            asked, extra_body = candidate_request(endpoint, index)
            # The same messages each time: told what was wrong, SmolLM2 did worse (8/20 vs 11/20).
            completion = _redacted(
                complete(asked, messages, on_token=progress.token, extra_body=extra_body),
                redactor,
            )
            try:
                code = extract_code(completion.text)
            except NoCodeError:
                problem = "no code"
                continue
            candidate = check_candidate(code, self.shell.user_ns, request)
            if candidate.problem is None:
                return candidate.code, completion, asked
            problem = candidate.problem
        message = redactor(failed_message(problem))
        progress.finish(message, state="failed")
        raise ChapyterError(message)

    def _provenance(self, cell, code, completion, endpoint, context_chars, failed, retry):
        """The generated cell's provenance; a correction is recorded as a "retry" change."""
        from .contract import accepted_change
        from .tracebacks import error_text

        metadata = generated_metadata(
            code=code,
            # The request as the frontend hashes it: the cell below the magic line, normalised.
            prompt_sha256=request_sha256(cell),
            model=completion.model,
            endpoint=endpoint.host,
            parameters={"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens},
            context_chars=context_chars,
            attempts=completion.attempts,
            check=CHECK_SYNTAX_ERROR if failed is not None else None,
            check_error=failed,
        )
        if retry is None:
            return metadata
        changed = accepted_change(
            metadata,
            kind="retry",
            model=completion.model,
            code=code,
            request_sha256=request_sha256(error_text(retry.error).splitlines()[0]),
            created=metadata["created"],
            previous_code=retry.code,
        )
        if failed is not None:
            changed.update(check=CHECK_SYNTAX_ERROR, check_error=failed)
        return changed

    def _generate(self, cell: str, args, caller) -> None:
        settings = self.settings
        retry = caller.retry
        if retry is not None and retry.attempt > settings.fix_retries:
            # The request count stays bounded whatever a frontend sends.
            raise ChapyterError(
                f"No retry left: Chapyter.fix_retries is {settings.fix_retries}; "
                "fix the code below by hand, or run this cell again."
            )
        code, completion, endpoint, context_chars, progress, failed = self._ask(cell, args, retry)

        # Who runs the code: the frontend (JupyterLab with chapyter-ext), this kernel (--run
        # where nothing else would), or nobody yet. Never two of them, and never in a batch
        # run, whose runner goes on to the committed generated cell below.
        run_here = args.run and not caller.frontend_runs_code and not caller.is_batch
        run = not args.no_run and not run_here
        if failed is not None:
            run_here = run = False
        # The bundled local model's code is often wrong: it waits below for a look first.
        review = run and not caller.is_batch and review_first(settings, args)
        if review:
            run = False
        # Chapyter.run_policy: code the user has not seen runs only if it is proven harmless.
        held = self._hold(code) if (run or run_here) and not caller.is_batch else None
        if held is not None:
            run = run_here = False
        n_lines = code.count("\n") + 1
        done = (
            f"{n_lines} line{'s' * (n_lines != 1)} from {completion.model} "
            f"in {completion.elapsed:.1f} s"
        )
        if settings.show_usage and completion.usage is not None:
            from .llm.usage import cost_of, usage_line

            cost = cost_of(completion.usage, endpoint.model, settings.prices)
            done += f", {usage_line(completion.usage, cost)}"
        if retry is not None:
            done = f"retry {retry.attempt} of {settings.fix_retries}: {done}"
        if caller.is_batch:
            note = f"↻ regenerated in a batch run (not reproducible): {done}."
        elif not self._in_kernel:
            note = f"✓ {done}, " + ("running it:" if run_here else "inserted at the next prompt.")
            if held is not None:
                note = f"✓ {done}, inserted at the next prompt, not run: {held} ({HOLD_NOTE})"
        elif run_here:
            note = f"✓ {done}, run here and inserted below."
        elif review:
            note = f"✓ {done}, inserted below: {REVIEW_NOTE}"
        elif held is not None:
            note = f"✓ {done}, inserted below, not run: {held} ({HOLD_NOTE})"
        else:
            note = f"✓ {done}, inserted below" + (" and run." if run else ".")
        if retry is not None:
            note = "↻" + note[1:]  # the answer arrived; whether it fixes the code is not known
        metadata = self._provenance(cell, code, completion, endpoint, context_chars, failed, retry)
        if failed is not None:
            where = "at the next prompt" if not self._in_kernel else "below"
            message = f"{failed}; inserted {where} without running it: fix it, or ask again."
            progress.finish(message, state="failed")
            self._deliver(code, metadata, run=False, run_here=False)
            raise ChapyterError(message)
        progress.finish(note)
        # The frontend that runs the code may ask for this many corrections of it (never in a
        # batch run, which replays exactly).
        retries_left = 0
        if run and caller.frontend_runs_code and not caller.is_batch:
            retries_left = max(0, settings.fix_retries - (retry.attempt if retry else 0))
        self._deliver(
            code,
            metadata,
            run=run,
            run_here=run_here,
            retries_left=retries_left,
            cell=cell,
            args=args,
        )

    def _hold(self, code: str) -> str | None:
        """Why the model's ``code`` must wait for the user under ``Chapyter.run_policy`` (one
        line), or None; the notebook's own functions count as consented to."""
        from .policy import hold_reason, namespace_functions

        policy = self.settings.run_policy
        if policy == "never":
            return None
        known = namespace_functions(self.shell.user_ns)
        return hold_reason(policy, code, known_functions=known)

    @property
    def _in_kernel(self) -> bool:
        return getattr(self.shell, "kernel", None) is not None

    def _deliver(
        self,
        code: str,
        metadata: dict,
        *,
        run: bool,
        run_here: bool,
        retries_left: int = 0,
        cell: str = "",
        args=None,
    ) -> None:
        """Put the code in a new cell below, the portable way: IPython's set_next_input payload.

        Every Jupyter frontend inserts the text as a new cell below; chapyter-ext's JupyterLab
        extension reads the extra ``chapyter`` entry instead, to link the cells and run the code.
        With ``run_here`` the code also runs, once this cell is done, as a cell of its own: it
        gets its own history entry (``In[n]``) and ``Out[n]``, as if typed. In a kernel its
        output shows below this cell's, and the reply's execution count is that cell's, so
        the prompt shown and ``Out[n]`` agree. When it raises, the model is asked to correct
        it, at most ``Chapyter.fix_retries`` times.
        """
        if run_here:
            self._run_after_this_cell(code, cell, args)
        if not self._in_kernel:
            if not run_here:
                self.shell.set_next_input(code)
            return
        self.shell.payload_manager.write_payload(
            generation_payload_item(code, metadata, run=run, retries_left=retries_left),
            single=True,
        )

    def _run_after_this_cell(self, code: str, cell: str, args) -> None:
        shell = self.shell

        def run(result=None) -> None:
            shell.events.unregister("post_run_cell", run)
            self._run_and_correct(code, cell, args)

        shell.events.register("post_run_cell", run)

    def _run_and_correct(self, code: str, cell: str, args) -> None:
        """Run the code here; while it raises and retries remain, ask for a correction and run
        that (terminal IPython and ``--run`` in a kernel without chapyter-ext's frontend)."""
        from .replay import Retry

        shell = self.shell
        cap = self.settings.fix_retries
        for attempt in range(1, cap + 2):
            outcome = shell.run_cell(code, store_history=True)
            exc = outcome.error_in_exec
            if exc is None or isinstance(exc, KeyboardInterrupt):
                if attempt > 1 and exc is None:
                    print(f"✓ fixed after {attempt - 1} retr{'y' if attempt == 2 else 'ies'}")
                return
            if attempt > cap:
                if cap:
                    print(f"✗ still failing after {cap} retr{'y' if cap == 1 else 'ies'}")
                return
            retry = Retry(attempt, code, _error_output(shell, exc))
            try:
                code, completion, endpoint, chars, progress, failed = self._ask(cell, args, retry)
            except ChapyterError as err:
                print(f"chapyter-ext: {err}")
                return
            metadata = self._provenance(cell, code, completion, endpoint, chars, failed, retry)
            if self._in_kernel:
                # The corrected code replaces the first answer in the cell inserted below.
                shell.payload_manager.write_payload(
                    generation_payload_item(code, metadata, run=False), single=True
                )
            if failed is not None:
                progress.finish(f"{failed}; not run.", state="failed")
                if not self._in_kernel:
                    shell.set_next_input(code)
                return
            held = self._hold(code)
            if held is not None:
                progress.finish(f"↻ retry {attempt} of {cap}: not run: {held} ({HOLD_NOTE})")
                if not self._in_kernel:
                    shell.set_next_input(code)
                return
            progress.finish(f"↻ retry {attempt} of {cap}: running the corrected code.")

    @line_magic("ai")  # type: ignore[arg-type]  # IPython types the decorator too narrowly
    def ai_line(self, line: str):
        """Inspect chapyter-ext's settings and endpoint.

        Usage::

            %ai status     endpoint host, model, whether a key is set (never the key)
            %ai models     the models the endpoint offers (GET /v1/models)
            %ai help       this text

        Write requests with the cell magic ``%%ai`` (see ``%%ai?``).
        """
        command = line.strip().split()
        name = command[0] if command else "help"
        if name == "status":
            print(self._status())
        elif name == "models":
            print(self._models())
        elif name == "help":
            print(self.ai_line.__doc__)
        else:
            raise ChapyterError(
                f"Unknown command {name!r}: use %ai status, %ai models or %ai help; "
                "requests go in a %%ai cell."
            )

    def _registry(self):
        """Which endpoint answers this kernel (see :mod:`chapyter_ext.endpoints`).

        A setting that only fails when read (a bad OPENAI_BASE_URL in the environment) or a
        model that cannot start is one line, not a traceback.
        """
        from traitlets import TraitError

        from .endpoints import EndpointConfigError, kernel_registry
        from .llm import LLMError

        try:
            return kernel_registry(self.settings)
        except (TraitError, EndpointConfigError, LLMError) as err:
            raise ChapyterError(" ".join(str(err).split())) from None

    def _status(self) -> str:
        from traitlets import TraitError

        from .endpoints import describe_endpoint

        try:
            lines = describe_endpoint(self.settings)
        except TraitError as err:
            raise ChapyterError(" ".join(str(err).split())) from None
        from ._version import __version__

        return "\n".join([f"chapyter-ext {__version__}", *lines])

    def _models(self) -> str:
        from .llm import LLMError, list_models

        registry = self._registry()
        redactor = Redactor(self._secrets(registry))
        try:
            endpoint = registry.resolve(None)[1]  # starts the local model if needed
            models = list_models(endpoint)
        except LLMError as err:
            raise ChapyterError(redactor(str(err))) from None
        if not models:
            return f"{endpoint.host} lists no models."
        current = endpoint.model
        # The names come from the endpoint: printed into the notebook, they are redacted too.
        return redactor("\n".join(f"{'*' if m == current else ' '} {m}" for m in sorted(models)))


def load_ipython_extension(ipython) -> None:
    """Register the magics on ``ipython``; loading twice is harmless."""
    if getattr(ipython, "_chapyter_magics", None) is not None:
        return
    magics = AIMagics(ipython)
    ipython.register_magics(magics)
    ipython._chapyter_magics = magics
    from .warmup import start

    start(ipython, magics.settings)  # the first %%ai's imports and client, off this thread


def unload_ipython_extension(ipython) -> None:
    """Forget the settings object registered by :func:`load_ipython_extension`."""
    magics = getattr(ipython, "_chapyter_magics", None)
    if magics is None:
        return
    if magics.settings in ipython.configurables:
        ipython.configurables.remove(magics.settings)
    for kind in ("cell", "line"):
        ipython.magics_manager.magics[kind].pop("ai", None)
    ipython._chapyter_magics = None
