"""The generated cell: the model's answer as ``%%ai`` got it, its provenance, and its delivery
below the magic's cell, the portable way (IPython's ``set_next_input`` payload)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..contract import (
    CHECK_SYNTAX_ERROR,
    accepted_change,
    generated_metadata,
    generation_payload_item,
    request_sha256,
)

if TYPE_CHECKING:
    from ..llm import Endpoint
    from ..redact import Redactor
    from .progress import Progress
    from .replay import Retry

__all__ = ["GeneratedCode", "deliver", "in_kernel", "provenance", "redacted"]


@dataclass
class GeneratedCode:
    """One answer of the model to a ``%%ai`` request (or to a retry of its code)."""

    code: str
    #: The completion (``llm.Completion``), text and model name redacted.
    completion: Any
    #: The endpoint as asked (a small model's candidate: its temperature and length cap).
    endpoint: Endpoint
    #: Characters of kernel context sent.
    context_chars: int
    #: The live display, still to be finished with one line.
    progress: Progress
    #: The one-line syntax error of ``code``, or None when it parses.
    failed: str | None = None
    #: The bundled local model answered (:meth:`chapyter_ext.endpoints.ModelRegistry.is_local`).
    local: bool = False
    #: The trial of ``code`` the small model's candidate loop made (a ``TrialReport``), which
    #: the consent decision reuses rather than trying the same code twice; None when none was.
    trial: Any = None


def redacted(completion: Any, redactor: Redactor) -> Any:
    """``completion`` with its text and model name redacted: the code below, its provenance
    and every line about it come from them, and all are saved with the notebook."""
    completion.text = redactor(completion.text)
    completion.model = redactor(completion.model)
    return completion


def provenance(cell: str, answer: GeneratedCode, retry: Retry | None) -> dict:
    """The generated cell's provenance; a correction is recorded as a "retry" change."""
    from ..tracebacks import error_text

    completion, endpoint, failed = answer.completion, answer.endpoint, answer.failed
    metadata = generated_metadata(
        code=answer.code,
        # The request as the frontend hashes it: the cell below the magic line, normalised.
        prompt_sha256=request_sha256(cell),
        model=completion.model,
        endpoint=endpoint.host,
        parameters={"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens},
        context_chars=answer.context_chars,
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
        code=answer.code,
        request_sha256=request_sha256(error_text(retry.error).splitlines()[0]),
        created=metadata["created"],
        previous_code=retry.code,
    )
    if failed is not None:
        changed.update(check=CHECK_SYNTAX_ERROR, check_error=failed)
    return changed


def in_kernel(shell: Any) -> bool:
    """Whether ``shell`` is a kernel's (a frontend shows its displays) or terminal IPython."""
    return getattr(shell, "kernel", None) is not None


def deliver(
    shell: Any,
    code: str,
    metadata: dict,
    *,
    run: bool,
    retries_left: int = 0,
    next_input: bool = True,
) -> None:
    """Put the code in a new cell below: IPython's set_next_input payload.

    Every Jupyter frontend inserts the text as a new cell below; chapyter-ext's JupyterLab
    extension reads the extra ``chapyter`` entry instead, to link the cells and (``run``) run
    the code, asking for at most ``retries_left`` corrections. In terminal IPython the code
    waits at the next prompt, unless ``next_input`` is off (it runs here instead).
    """
    if not in_kernel(shell):
        if next_input:
            shell.set_next_input(code)
        return
    shell.payload_manager.write_payload(
        generation_payload_item(code, metadata, run=run, retries_left=retries_left),
        single=True,
    )
