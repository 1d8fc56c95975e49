"""Inline code completion (ghost text) in notebook cells: the service behind
``POST chapyter-ext/complete``, no tornado.

The browser sends the code before and after the cursor, the cells above and the kernel's
variables (the chat's summary, so ``df.`` sees the real columns); the service builds a prompt,
asks the completion model (``Chapyter.completion_model``) and streams the suggestion back,
cleaned as it grows: no fences, no echo of the line being typed, nothing that duplicates the
text after the cursor; then only code goes through, line by line
(:class:`~chapyter_ext.complete.suggestions.SuggestionGuard`: no prose, nothing that breaks the
cell, and with the bundled model no names the kernel lacks). A model that supports
fill-in-the-middle is asked through ``/v1/completions`` with ``suffix``
(``Chapyter.completion_fim``); the bundled local model through ``/v1/completions`` too, as a
plain continuation of the code (asked in a chat, it answers in English); any other through
chat completions. One suggestion per editor at a time: a newer request from the same editor
cancels the older one, which closes its upstream call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..context.assemble import VariableSummary
from ..endpoints import ModelRegistry
from ..guards import SnapshotNames
from ..llm import Endpoint, LLMError, astream, astream_fim
from ..redact import Redactor, one_line
from .cleaner import CURSOR, MAX_LINES, SuggestionCleaner
from .suggestions import SuggestionGuard

if TYPE_CHECKING:
    from ..config import Chapyter

#: Characters of the cell before the cursor sent (its end), and after it (its start).
MAX_PREFIX_CHARS = 6000
MAX_SUFFIX_CHARS = 2000
#: Most cells above accepted in a request (the browser sends the nearest), and their size.
MAX_CELLS = 20
MAX_CELL_CHARS = 4000
MAX_VARIABLES = 200
MAX_EDITOR_ID = 200
LOCAL_MAX_LINES = 1
#: The bundled local model's suggestions: few tokens, so they come fast from a CPU.
LOCAL_MAX_TOKENS = 32
#: Seconds one upstream completion call may take (each wait for the endpoint).
COMPLETION_TIMEOUT = 20.0

#: Model ids that take fill-in-the-middle through /v1/completions with ``suffix`` when
#: ``Chapyter.completion_fim`` says nothing about them.
FIM_MODEL_PATTERN = re.compile(
    r"codestral|deepseek-coder|starcoder|qwen2?\.?5?-coder|code-?llama|codegemma|stable-code"
    r"|granite.*code",
    re.IGNORECASE,
)

SYSTEM_PROMPT = (
    "You complete code in a Jupyter notebook cell. Reply with only the code that goes at "
    "<CURSOR>: no explanation, no markdown fences, and do not repeat the code before or after "
    "the cursor. Finish the current line, or the current block if the line is complete. Use "
    "the kernel's variables and columns as listed."
)
LOCAL_SYSTEM_PROMPT = (
    "Complete the Python code at <CURSOR>. Reply with the missing code only, one short line."
)


class CompletionError(Exception):
    """A completion request that cannot be served; ``kind`` as in the chat's errors."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _string(body: Mapping[str, Any], key: str, *, required: bool = False) -> str:
    value = body.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise CompletionError("bad_request", f"'{key}' must be a string.")
    return value


@dataclass(frozen=True)
class CompletionRequest:
    """A parsed ``POST chapyter-ext/complete`` body."""

    #: The cell's text before the cursor (its last MAX_PREFIX_CHARS characters).
    prefix: str
    #: The cell's text after the cursor (its first MAX_SUFFIX_CHARS characters).
    suffix: str = ""
    #: Code of the cells above, in notebook order (nearest last).
    cells_above: tuple[str, ...] = ()
    #: The kernel's variables as ``describe_variables`` gives them, or None.
    variables: tuple[Mapping[str, Any], ...] | None = None
    #: The kernel's language ("" when unknown).
    language: str = ""
    #: Identifies the editor: a newer request with the same one cancels the older.
    editor: str = ""

    @classmethod
    def parse(cls, body: Any) -> CompletionRequest:
        """Validate a JSON body; :class:`CompletionError` (``bad_request``) says what is wrong."""
        if not isinstance(body, Mapping):
            raise CompletionError("bad_request", "The body must be a JSON object.")
        prefix = _string(body, "prefix", required=True)
        suffix = _string(body, "suffix")
        language = _string(body, "language")[:40]
        editor = _string(body, "editor")[:MAX_EDITOR_ID]
        cells = body.get("cells_above") or []
        if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
            raise CompletionError("bad_request", "'cells_above' must be a list of strings.")
        raw_vars = body.get("variables")
        variables: tuple[Mapping[str, Any], ...] | None = None
        if raw_vars is not None:
            if not isinstance(raw_vars, list) or not all(isinstance(v, dict) for v in raw_vars):
                raise CompletionError("bad_request", "'variables' must be a list of objects.")
            variables = tuple(raw_vars[:MAX_VARIABLES])
        return cls(
            prefix=prefix[-MAX_PREFIX_CHARS:],
            suffix=suffix[:MAX_SUFFIX_CHARS],
            cells_above=tuple(c[-MAX_CELL_CHARS:] for c in cells[-MAX_CELLS:]),
            variables=variables,
            language=language,
            editor=editor,
        )


# -- the prompt ---------------------------------------------------------------------------------


def names_block(variables: Sequence[Mapping[str, Any]] | None, budget: int) -> str:
    """The kernel's names, one line each (``name: type = summary``), within ``budget`` chars."""
    lines: list[str] = []
    used = 0
    for var in variables or ():
        name, kind = str(var.get("name", "")), str(var.get("type", ""))
        if not name:
            continue
        summary = " ".join(str(var.get("summary", "")).split())
        line = f"{name}: {kind}" + (f" = {summary}" if summary else "")
        if len(line) > 240:
            line = line[:239] + "…"
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def cells_block(cells: Sequence[str], budget: int) -> str:
    """The cells above, nearest kept first, in notebook order, within ``budget`` characters."""
    kept: list[str] = []
    used = 0
    for cell in reversed(cells):
        text = cell.strip("\n")
        if not text.strip():
            continue
        if used + len(text) + 2 > budget:
            if not kept and budget > 40:
                kept.append(text[-(budget - 2) :])  # the end of the nearest cell, at least
            break
        kept.append(text)
        used += len(text) + 2
    return "\n\n".join(reversed(kept))


@dataclass(frozen=True)
class Prompt:
    """What is sent: chat ``messages``, or a fill-in-the-middle ``prompt`` and ``suffix``."""

    messages: list[dict[str, str]] | None = None
    prompt: str = ""
    suffix: str = ""


def build_prompt(
    request: CompletionRequest,
    *,
    fim: bool,
    local: bool,
    budget: int,
    redactor: Redactor,
) -> Prompt:
    """The prompt for ``request``: the context (names first, then cells above) within ``budget``
    characters, redacted like every context this server sends."""
    names = names_block(request.variables, budget // 2 if request.cells_above else budget)
    cells = cells_block(request.cells_above, max(budget - len(names), 0))
    prefix, suffix = redactor(request.prefix), redactor(request.suffix)
    if fim:
        # A FIM model continues code: the context goes in as comments and code above.
        head = ""
        if names:
            head += "".join(f"# {line}\n" for line in redactor(names).splitlines())
        if cells:
            head += redactor(cells) + "\n\n"
        return Prompt(prompt=head + prefix, suffix=suffix)
    parts: list[str] = []
    if names:
        parts.append("Kernel variables:\n" + redactor(names))
    if cells and not local:
        parts.append("Cells above:\n" + redactor(cells))
    language = request.language or "python"
    parts.append(f"Cell ({language}), complete at {CURSOR}:\n{prefix}{CURSOR}{suffix}")
    system = LOCAL_SYSTEM_PROMPT if local else SYSTEM_PROMPT
    return Prompt(
        messages=[
            {"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(parts)},
        ]
    )


def suggestion_guard(request: CompletionRequest, *, small: bool) -> SuggestionGuard:
    """The guard for ``request``'s suggestion: the kernel's names (unknown when the list was
    cut at its limit) and every name written in the cells above count as the user's."""
    variables = request.variables
    names = None
    if variables is not None and len(variables) < MAX_VARIABLES:
        names = SnapshotNames(
            [VariableSummary(str(v.get("name", "")), str(v.get("type", "")), "") for v in variables]
        )
    known: set[str] = set()
    for cell in request.cells_above:
        known.update(re.findall(r"[A-Za-z_]\w*", cell))
    return SuggestionGuard(request.prefix, request.suffix, names=names, small=small, known=known)


# -- the service ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """How one request is answered: which endpoint, with FIM or chat, how long."""

    name: str
    endpoint: Endpoint
    fim: bool
    local: bool
    max_lines: int


class CompletionService:
    """Answers completion requests: one in flight per editor, failures logged once."""

    def __init__(
        self,
        registry: ModelRegistry,
        settings: Chapyter,
        *,
        redactor: Redactor | None = None,
        log: logging.Logger | None = None,
        enabled: bool = True,
    ) -> None:
        self.registry = registry
        #: The server's ``c.Chapyter``: the completion settings are read from it on each request.
        self.settings = settings
        #: ``Chapyter.inline_completion``: False refuses every request (HTTP 403, "disabled").
        self.enabled = bool(enabled)
        self.redact = redactor if redactor is not None else Redactor()
        self.log = log or logging.getLogger(__name__)
        #: The running request of each editor: a newer one cancels it.
        self._by_editor: dict[str, asyncio.Task[Any]] = {}
        #: The kind of the failure being reported (logged once until completion works again).
        self.failing: str | None = None
        #: Requests answered, and cancelled before the end (for tests and benchmarks).
        self.served = 0
        self.cancelled = 0

    @property
    def model(self) -> str:
        """``Chapyter.completion_model`` (empty: the default model)."""
        return str(self.settings.completion_model)

    @property
    def fim(self) -> dict[str, bool]:
        """``Chapyter.completion_fim``: fill-in-the-middle by model name or id."""
        return dict(self.settings.completion_fim or {})

    @property
    def max_tokens(self) -> int:
        """``Chapyter.completion_max_tokens``."""
        return max(1, int(self.settings.completion_max_tokens))

    @property
    def context_chars(self) -> int:
        """``Chapyter.completion_context_chars``."""
        return max(0, int(self.settings.completion_context_chars))

    async def plan(self) -> Plan:
        """Resolve the completion model (starting the local model if it is the one)."""
        wanted = self.model or None
        try:
            name, endpoint = await self.registry.aresolve(wanted)
        except KeyError:
            raise CompletionError(
                "not_found",
                f"Chapyter.completion_model {wanted!r} is not one of the configured models "
                f"({', '.join(self.registry)}).",
            ) from None
        local = self.registry.is_local(name)
        # The bundled model continues code far better than it answers a chat about it.
        fim = local or self.uses_fim(name, endpoint.model)
        endpoint = dataclasses.replace(
            endpoint,
            max_tokens=min(self.max_tokens, LOCAL_MAX_TOKENS) if local else self.max_tokens,
            temperature=0.0 if local else min(endpoint.temperature, 0.2),
            max_retries=0,  # a late suggestion is useless: the next keystroke asks again
            timeout=min(endpoint.timeout, COMPLETION_TIMEOUT),
        )
        return Plan(name, endpoint, fim, local, LOCAL_MAX_LINES if local else MAX_LINES)

    def uses_fim(self, name: str, model: str) -> bool:
        """Whether the endpoint ``name`` (model id ``model``) is asked with fill-in-the-middle:
        ``Chapyter.completion_fim`` by name or model id, else known FIM model ids."""
        for key in (name, model):
            if key in self.fim:
                return bool(self.fim[key])
        return bool(FIM_MODEL_PATTERN.search(model))

    async def stream(self, request: CompletionRequest) -> AsyncGenerator[str, None]:
        """The suggestion's text as it grows (an async generator). Raises :class:`LLMError`
        or :class:`CompletionError`; closing it (or cancelling its task) closes the upstream
        call at once."""
        task = asyncio.current_task()
        if request.editor and task is not None:
            older = self._by_editor.get(request.editor)
            if older is not None and older is not task and not older.done():
                older.cancel()
            self._by_editor[request.editor] = task
        try:
            plan = await self.plan()
            prompt = build_prompt(
                request,
                fim=plan.fim,
                local=plan.local,
                budget=self.context_chars,
                redactor=self.redact,
            )
            cleaner = SuggestionCleaner(
                request.prefix, request.suffix, chat=not plan.fim, max_lines=plan.max_lines
            )
            guard = suggestion_guard(request, small=plan.local)
            deltas = (
                # The local model is no FIM model: it continues the code, with no suffix.
                astream_fim(plan.endpoint, prompt.prompt, "" if plan.local else prompt.suffix)
                if plan.fim
                else astream(plan.endpoint, prompt.messages or [])
            )
            try:
                async for delta in deltas:
                    piece = guard.push(cleaner.push(delta))
                    if piece:
                        yield piece
                    if cleaner.done or guard.done:
                        break  # the rest would be cut: stop paying for it
            except LLMError as err:
                if err.kind != "empty":  # no suggestion is an answer here, not a failure
                    raise
            finally:
                await deltas.aclose()
            rest = guard.push(cleaner.finish()) + guard.finish()
            if rest:
                yield rest
            self.served += 1
            self.recovered()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        except (LLMError, CompletionError) as err:
            self.failed(err.kind, one_line(err, self.redact))
            raise
        finally:
            if request.editor and self._by_editor.get(request.editor) is task:
                del self._by_editor[request.editor]

    def failed(self, kind: str, message: str) -> None:
        """Log a failure: a warning the first time (per kind), then only at debug level."""
        if self.failing != kind:
            self.log.warning("Inline completion failed (%s): %s", kind, message)
        else:
            self.log.debug("Inline completion failed again (%s): %s", kind, message)
        self.failing = kind

    def recovered(self) -> None:
        """A request succeeded: completion works (again)."""
        if self.failing is not None:
            self.log.info("Inline completion works again.")
            self.failing = None

    async def close(self) -> None:
        """Cancel every running request."""
        tasks = [t for t in self._by_editor.values() if not t.done()]
        for task in tasks:
            task.cancel()
        self._by_editor.clear()
