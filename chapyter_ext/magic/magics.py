"""``%%ai`` and ``%ai``: thin IPython magics over llm, context and the request's messages; what
happens around the model call (progress, delivery, the terminal's retry loop) lives in
:mod:`chapyter_ext.magic`'s other modules, the small model's prompt in :mod:`.small_prompt` and its
candidates in :mod:`.candidates`."""

from __future__ import annotations

import os
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from ..config import Chapyter
from ..contract import MagicLineError, generation_payload_item, parse_magic_line
from ..redact import Redactor
from .delivery import GeneratedCode, deliver, in_kernel, provenance, redacted
from .errors import ChapyterError
from .progress import Progress
from .terminal_retry import run_after_this_cell, run_and_correct

__all__ = ["AIMagics", "ChapyterError", "load_ipython_extension", "unload_ipython_extension"]

#: Why a generated cell waits below instead of running (the %%ai progress line says it).
REVIEW_NOTE = "it waits for your review (setting: Local review); run it once it looks right."
#: The setting that held code back, named after the reason.
HOLD_NOTE = "setting: Run policy; run it yourself once you have read it"


def review_first(settings: Chapyter, args, *, local: bool | None = None) -> bool:
    """Whether ``%%ai``'s code waits for the user's review instead of running: the bundled
    local model answers (``local``; by default the kernel's registry says,
    :meth:`~chapyter_ext.endpoints.ModelRegistry.is_local`) and ``Chapyter.local_review`` is
    on (:func:`chapyter_ext.guards.review_first`); an explicit ``--run`` still runs it."""
    from ..endpoints import kernel_registry
    from ..guards.review import review_first as local_review_first

    if local is None:
        local = kernel_registry(settings).is_local(None)
    return local_review_first(settings, local=local) and not args.run


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
        if caller.replays(self.settings.batch_mode):
            print(REPLAY_LINE)
            return None
        return self._generate(cell, args, caller)

    def _ask(self, cell: str, args, retry=None) -> GeneratedCode:
        """Ask the model: for code from the request, or (``retry``) to correct code that raised.

        A small model (``Chapyter.prompt_style``) gets its own prompt and up to three checked
        candidates (:mod:`.candidates`). The answer's ``failed`` is the one-line
        syntax error (None when the code parses).
        """
        from ..context import kernel_context
        from ..llm import LLMError, complete
        from ..messages import build_messages, build_retry_messages
        from ..parsing import (
            CodeSyntaxError,
            MagicCallError,
            NoCodeError,
            check_syntax,
            extract_code,
        )
        from ..profile import prompt_profile
        from ..rules import kernel_rules, with_rules
        from . import candidates
        from .candidates import NoPassingCandidate
        from .prompts import SYSTEM_PROMPT

        settings = self.settings
        registry = self._registry()
        model_name = registry.model_name(None, model=args.model)
        profile = prompt_profile(settings.prompt_style, model_name)
        secrets = self._secrets(registry)
        # One policy for what is sent and for everything shown and saved with the notebook
        # (the live answer, the code below, its provenance, the error lines).
        redactor = Redactor(secrets)
        request = redactor(cell.strip())
        context = None
        if settings.send_context and not args.no_context:
            # A small model: only the variables (those the request names first), no cells to
            # echo back.
            cells = {} if profile.recent_cells is None else {"n_cells": profile.recent_cells}
            context = kernel_context(
                self.shell,
                budget=profile.context_budget(settings.context_budget),
                secrets=secrets,
                request=cell.strip(),
                **cells,
            )
        retry_parts = None
        if retry is not None:
            from ..tracebacks import error_text

            retry_parts = (redactor(retry.code), redactor(error_text(retry.error)))
        if profile.small:
            from .small_prompt import build_small_messages

            messages = build_small_messages(request, context, retry=retry_parts)
        elif retry_parts is None:
            messages = build_messages(request, context, system=SYSTEM_PROMPT)
        else:
            messages = build_retry_messages(request, context, *retry_parts, system=SYSTEM_PROMPT)
        # The project's AGENTS.md: from the kernel's working directory up (chapyter_ext.rules).
        rules_budget = profile.rules_chars(settings.rules_chars)
        messages = with_rules(
            messages, kernel_rules(settings, os.getcwd(), redactor, budget=rules_budget)
        )

        progress = Progress(self.shell, model_name, redactor)

        def ask(endpoint, extra_body=None):
            return redacted(
                complete(endpoint, messages, on_token=progress.token, extra_body=extra_body),
                redactor,
            )

        try:
            # Starts the bundled local model when it is the endpoint: seconds the first time.
            endpoint = registry.resolve(None, model=args.model)[1]
            tried = None  # the winning candidate's trial, which the consent decision reuses
            if profile.small:
                namespace, trial = self.shell.user_ns, candidates.kernel_trial(self.shell, settings)
                code, completion, endpoint, tried = candidates.first_passing_candidate(
                    endpoint, ask, namespace, cell.strip(), restart=progress.restart, trial=trial
                )
            else:
                completion = ask(endpoint)
                code = extract_code(completion.text)
        except (LLMError, NoCodeError, NoPassingCandidate) as err:
            message = redactor(str(err))
            progress.finish(message, state="failed")
            raise ChapyterError(message) from None
        except KeyboardInterrupt:
            progress.finish("Interrupted: nothing was inserted.", state="failed")
            raise ChapyterError("Interrupted: nothing was inserted.") from None

        answer = GeneratedCode(code, completion, endpoint, len(context or ""), progress)
        answer.local, answer.trial = registry.is_local(None), tried
        try:
            check_syntax(code)
        except MagicCallError as err:
            message = redactor(str(err))
            progress.finish(message, state="failed")
            raise ChapyterError(message) from None
        except CodeSyntaxError as err:
            # Delivered all the same, never run: the answer stays visible, to fix by hand.
            answer.failed = redactor(str(err))
        return answer

    def _secrets(self, registry) -> list[str]:
        """The keys and header values in use; the configured key may live only in %config."""
        settings = self.settings
        found = [*registry.secrets(), settings.api_key, *settings.extra_headers.values()]
        return [s for s in found if s]

    def _generate(self, cell: str, args, caller) -> None:
        settings = self.settings
        retry = caller.retry
        if retry is not None and retry.attempt > settings.fix_retries:
            # The request count stays bounded whatever a frontend sends.
            raise ChapyterError(
                f"No retry left: Chapyter.fix_retries is {settings.fix_retries}; "
                "fix the code below by hand, or run this cell again."
            )
        answer = self._ask(cell, args, retry)
        code, completion, failed = answer.code, answer.completion, answer.failed
        shown_in_kernel = in_kernel(self.shell)

        # Who runs the code: the frontend (JupyterLab with chapyter-ext), this kernel (--run
        # where nothing else would), or nobody yet. Never two of them, and never in a batch
        # run, whose runner goes on to the committed generated cell below.
        run_here = args.run and not caller.frontend_runs_code and not caller.is_batch
        run = not args.no_run and not run_here
        if failed is not None:
            run_here = run = False
        # The bundled local model's code is often wrong: it waits below for a look first.
        review = run and not caller.is_batch and review_first(settings, args, local=answer.local)
        if review:
            run = False
        # Chapyter.run_policy: code the user has not seen runs only if it is proven harmless.
        held = None if caller.is_batch or not (run or run_here) else self._hold(code, answer.trial)
        if held is not None:
            run = run_here = False
        if (run or run_here) and retry is None and not caller.is_batch:
            from ..snapshot.ai import before_generated_cell

            before_generated_cell(self.shell)  # for %ai undo; where it cannot, undo says why
        n_lines = code.count("\n") + 1
        done = (
            f"{n_lines} line{'s' * (n_lines != 1)} from {completion.model} "
            f"in {completion.elapsed:.1f} s"
        )
        if settings.show_usage and completion.usage is not None:
            from ..llm.usage import cost_of, usage_line

            cost = cost_of(completion.usage, answer.endpoint.model, settings.prices)
            done += f", {usage_line(completion.usage, cost)}"
        if retry is not None:
            done = f"retry {retry.attempt} of {settings.fix_retries}: {done}"
        if caller.is_batch:
            note = f"↻ regenerated in a batch run (not reproducible): {done}."
        elif not shown_in_kernel:
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
        metadata = provenance(cell, answer, retry)
        if failed is not None:
            where = "at the next prompt" if not shown_in_kernel else "below"
            message = f"{failed}; inserted {where} without running it: fix it, or ask again."
            answer.progress.finish(message, state="failed")
            deliver(self.shell, code, metadata, run=False)
            raise ChapyterError(message)
        answer.progress.finish(note)
        # The frontend that runs the code may ask for this many corrections of it (never in a
        # batch run, which replays exactly).
        retries_left = 0
        if run and caller.frontend_runs_code and not caller.is_batch:
            retries_left = max(0, settings.fix_retries - (retry.attempt if retry else 0))
        if run_here:
            # Run once this cell is done, corrected while it raises (Chapyter.fix_retries).
            run_after_this_cell(
                self.shell,
                lambda: run_and_correct(
                    self.shell,
                    code,
                    settings.fix_retries,
                    lambda retry: self._corrected(cell, args, retry),
                ),
            )
        deliver(
            self.shell,
            code,
            metadata,
            run=run,
            retries_left=retries_left,
            next_input=not run_here,
        )

    def _corrected(self, cell: str, args, retry) -> str | None:
        """The model's correction of code run here that raised, to run next, or None (it
        failed, does not parse or must wait under ``Chapyter.run_policy``: said why)."""
        shell = self.shell
        cap = self.settings.fix_retries
        try:
            answer = self._ask(cell, args, retry)
        except ChapyterError as err:
            print(f"chapyter-ext: {err}")
            return None
        code, progress = answer.code, answer.progress
        if in_kernel(shell):
            # The corrected code replaces the first answer in the cell inserted below.
            shell.payload_manager.write_payload(
                generation_payload_item(code, provenance(cell, answer, retry), run=False),
                single=True,
            )
        if answer.failed is not None:
            progress.finish(f"{answer.failed}; not run.", state="failed")
            if not in_kernel(shell):
                shell.set_next_input(code)
            return None
        held = self._hold(code, answer.trial)
        if held is not None:
            progress.finish(f"↻ retry {retry.attempt} of {cap}: not run: {held} ({HOLD_NOTE})")
            if not in_kernel(shell):
                shell.set_next_input(code)
            return None
        progress.finish(f"↻ retry {retry.attempt} of {cap}: running the corrected code.")
        return code

    def _hold(self, code: str, tried=None) -> str | None:
        """Why the model's ``code`` must wait for the user under ``Chapyter.run_policy`` (one
        line), or None: it may run now. The decision every driver makes
        (:mod:`chapyter_ext.policy.consent`), in this kernel: the analysis, with the namespace's own
        functions counted as consented to; then, for code it cannot prove harmless, a trial in a
        confined copy of this kernel (``tried``: the one the candidate loop made of this code). Code
        its trial cleared runs guarded (:mod:`chapyter_ext.trial.guard`)."""
        settings = self.settings
        policy = settings.run_policy
        if policy == "never":
            return None
        from ..policy import namespace_functions
        from ..policy.consent import ASK, RUN, after_trial, plan
        from ..policy.known import namespace_types

        namespace = self.shell.user_ns
        chosen = plan(
            policy,
            code,
            known_functions=namespace_functions(namespace),
            known_types=namespace_types(namespace),
            trials=bool(settings.trials),
            secret_names=settings.secret_variables(),
        )
        if chosen.action == RUN:
            return None
        if policy == "ask" or chosen.action == ASK or chosen.known:
            # Nothing here would show a trial's preview, and a named harm asks whatever a trial
            # shows: the one line is the analysis's reason.
            return next(iter(chosen.lines), None) or "every answer waits for your review"
        from ..trial import TrialLimits, run_trial
        from ..trial.guard import arm

        consent = after_trial(
            chosen, tried or run_trial(self.shell, code, TrialLimits.from_settings(settings))
        )
        if consent.run:
            if consent.guarded:
                arm(self.shell, code)
            return None
        if consent.unavailable:
            return f"{consent.why} (no trial here: {consent.unavailable})"
        return consent.why

    @line_magic("ai")  # type: ignore[arg-type]  # IPython types the decorator too narrowly
    def ai_line(self, line: str):
        """Inspect chapyter-ext's settings and endpoint.

        Usage::

            %ai status     endpoint host, model, whether a key is set (never the key)
            %ai models     the models the endpoint offers (GET /v1/models)
            %ai undo       restore the variables as they were before the last generated cell ran
            %ai help       this text

        Write requests with the cell magic ``%%ai`` (see ``%%ai?``).
        """
        command = line.strip().split()
        name = command[0] if command else "help"
        if name == "status":
            print(self._status())
        elif name == "models":
            print(self._models())
        elif name == "undo":
            from ..snapshot.ai import undo

            print(undo(self.shell))
        elif name == "help":
            print(self.ai_line.__doc__)
        else:
            raise ChapyterError(
                f"Unknown command {name!r}: use %ai status, %ai models, %ai undo or %ai help; "
                "requests go in a %%ai cell."
            )

    def _registry(self):
        """Which endpoint answers this kernel (see :mod:`chapyter_ext.endpoints`).

        A setting that only fails when read (a bad OPENAI_BASE_URL in the environment) or a
        model that cannot start is one line, not a traceback.
        """
        from traitlets import TraitError

        from ..endpoints import EndpointConfigError, kernel_registry
        from ..llm import LLMError

        try:
            return kernel_registry(self.settings)
        except (TraitError, EndpointConfigError, LLMError) as err:
            raise ChapyterError(" ".join(str(err).split())) from None

    def _status(self) -> str:
        from traitlets import TraitError

        from ..endpoints import describe_endpoint

        try:
            lines = describe_endpoint(self.settings)
        except TraitError as err:
            raise ChapyterError(" ".join(str(err).split())) from None
        from .._version import __version__

        return "\n".join([f"chapyter-ext {__version__}", *lines])

    def _models(self) -> str:
        from ..llm import LLMError, list_models

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
