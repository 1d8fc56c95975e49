"""HTTP handlers of the chat sidebar, the agent and Fix: thin wrappers over
:mod:`chapyter_ext.chat.service`, :mod:`chapyter_ext.agent.service` and
:mod:`chapyter_ext.fix.service` on :class:`~.base_handler.ChapyterHandler` (the history's routes are
in :mod:`.history_handlers`, inline completion's in :mod:`.complete_handlers`)."""

from __future__ import annotations

import tornado.web
from tornado.iostream import StreamClosedError

from .._version import __version__
from ..agent.protocol import MAX_RESULT_BODY_BYTES, AgentRequest, StepAnswer, TrialAnswer
from ..agent.turn import AgentTurn
from ..chat import (
    MAX_ATTACHMENTS_BODY_BYTES,
    ChatError,
    ChatRequest,
    ChatTurn,
    ContextRequest,
    installed_commands,
)
from ..chat.events import encode
from ..context.notebook import ChatContext, chat_context
from ..fix.consent import FixTrial, trial_decision
from ..fix.service import parse_fix_request, propose_fix
from ..llm import alist_models
from ..trial.run import TrialLimits
from .base_handler import MAX_BODY_BYTES, ChapyterHandler

#: Seconds between heartbeats of a quiet stream (a proxy would close an idle connection).
HEARTBEAT_SECONDS = 15.0


class ConfigHandler(ChapyterHandler):
    """``GET chapyter-ext/config``: the models the sidebar may offer."""

    @tornado.web.authenticated
    def get(self) -> None:
        """``{"models": [{"name", "model", "host", "tools", "images"}], "default", "version",
        "context_budget", "agent": {"policy", "max_steps", "time_limit"}, "inline_completion",
        "features": {"chat", "agent", "inline_completion", "mcp"}, "notices": [str]}``.

        ``context_budget`` (``Chapyter.context_budget``) is also what the browser asks the
        kernel's ``describe_variables`` for: there is one budget for the whole context.
        ``tools``/``images``: whether agent turns with that model use function calling and
        send figures as images (``Chapyter.tool_calling``, ``Chapyter.image_input``).
        The bundled local model's entry adds ``local``, ``notice`` and ``review_first``
        (``Chapyter.local_review``: the chat inserts its code without running it).
        ``features``: which are on (``Chapyter.chat``, ...); ``notices``: one line per setting
        a lock or a value that could not be used replaced (the chat shows them).
        """
        models = self.models.public_info()
        # The bundled local model's code is inserted for review, not run.
        review = self.app.agent.settings.local_review
        for entry in models:
            entry["tools"], entry["images"] = self.app.agent.capabilities(entry["name"])
            if entry.get("local"):
                entry["review_first"] = review
        self.reply(
            {
                "models": models,
                "default": self.models.default,
                "version": __version__,
                "context_budget": self.chat.context_budget,
                "agent": self.app.agent.public_info(),
                # Whether saving a notebook stores its chats in it (the panel says so).
                "save_chat_in_notebook": self.app.save_chat_in_notebook,
                "inline_completion": self.app.completions.enabled,
                "features": self.app.features.to_json(),
                "notices": list(self.app.notices),
            }
        )


class ContextHandler(ChapyterHandler):
    """``POST chapyter-ext/context``: the context a chat message would send now (the chip)."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """Body ``{"snapshot": {...}, "message"?: str}`` -> ``{"text", "summary", "chars",
        "rules"}`` (``rules``: ``[{"path", "chars"}]``, the project rules in force).

        Assembled exactly as ``POST chat`` assembles its ``context`` (same budget, same
        redaction) for ``message`` (the draft; what is relevant to it comes first); the text
        is empty when the server sends no context (``send_context``).
        """
        request = ContextRequest.parse(self.json_body())
        snapshot = request.snapshot
        context = chat_context(
            snapshot,
            budget=self.chat.context_budget,
            redactor=self.chat.redact,
            request=request.message,
        )
        if not self.chat.send_context:
            context = ChatContext(text="", summary=context.summary, chars=0)
        rules = await self.chat.rules(snapshot.path) if snapshot.path else None
        self.reply({**context.to_json(), "rules": rules.to_json() if rules else []})


class ModelsHandler(ChapyterHandler):
    """``GET chapyter-ext/models?name=``: what the endpoint behind a name serves."""

    @tornado.web.authenticated
    async def get(self) -> None:
        """``{"name", "models": [ids]}``; an unreachable endpoint is a 502 error."""
        name = self.get_query_argument("name", "") or None
        try:
            # Starts the bundled local model if that is the endpoint, as a chat message does.
            name, endpoint = await self.models.aresolve(name)
        except KeyError:
            raise ChatError("not_found", f"Unknown model {name!r}.") from None
        self.reply({"name": name, "models": await alist_models(endpoint)})


class CommandsHandler(ChapyterHandler):
    """``GET chapyter-ext/commands``: the server's slash commands, for the chat's ``/`` menu."""

    @tornado.web.authenticated
    def get(self) -> None:
        """``{"commands": [{"name", "description", "args"}]}`` (``chat/commands.py``)."""
        self.reply({"commands": [command.public() for command in installed_commands()]})


class ChatHandler(ChapyterHandler):
    """``POST chapyter-ext/chat``: stream one reply as server-sent events."""

    _turn: ChatTurn | AgentTurn | None = None
    _client_gone = False
    # A message may carry attached files (their base64, bounded in chat/attachments.py).
    max_body_bytes = MAX_BODY_BYTES + MAX_ATTACHMENTS_BODY_BYTES

    @tornado.web.authenticated
    async def post(self) -> None:
        """Events ``start``, ``token``..., then ``done`` or ``error`` (docs/protocol.md); 403
        ``disabled`` when the chat is off (``Chapyter.chat``)."""
        self.app.features.require("chat")
        request = ChatRequest.parse(self.json_body(), max_chars=self.chat.max_message_chars)
        await self.stream(await self.chat.start(request))

    async def stream(self, turn: ChatTurn | AgentTurn) -> None:
        """Send a started turn's events until its last one (a closed tab stops the turn)."""
        self._turn = turn
        if self._client_gone:
            # The tab closed while the user's message was being saved.
            turn.stop("disconnected")
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        self.set_header("Cache-Control", "no-cache, no-transform")
        # Reverse proxies (nginx) buffer responses by default, which would hold tokens back.
        self.set_header("X-Accel-Buffering", "no")
        # Each event is a small write of its own: with Nagle's algorithm on, the first token
        # waits for the browser to ACK `start`, which Linux delays by up to 40 ms.
        connection = self.request.connection
        stream = getattr(connection, "stream", None)
        if stream is not None and hasattr(stream, "set_nodelay"):
            stream.set_nodelay(True)
        try:
            async for event in turn.events(HEARTBEAT_SECONDS):
                if self._client_gone:
                    continue  # drain to the end so the reply is saved, but write nothing
                self.write(encode(event, self.chat.redact))
                # Flush each event on its own: the first token's latency is what users feel.
                await self.flush()
        except StreamClosedError:
            self._client_gone = True
            turn.stop("disconnected")
            await turn.wait()
        finally:
            self._turn = None
        if not self._client_gone:
            self.finish(set_content_type="text/event-stream; charset=utf-8")

    def on_connection_close(self) -> None:
        """The tab closed or the fetch was aborted: stop the model call now."""
        self._client_gone = True
        if self._turn is not None:
            self._turn.stop("disconnected")
        super().on_connection_close()


class AgentHandler(ChatHandler):
    """``POST chapyter-ext/agent``: run one agent turn, its events as server-sent events."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """Events ``start``, then ``token``/``step``/``step_done``..., then ``done`` or
        ``error`` (docs/agent.md). Stop it with ``chat/stop`` and its ``message_id``; 403
        ``disabled`` when agent mode is off (``Chapyter.agent``, ``Chapyter.chat``)."""
        self.app.features.require("agent")  # the body is in: the connection stays usable
        body = self.json_body()
        request = AgentRequest.parse(body, max_chars=self.chat.max_message_chars)
        await self.stream(await self.app.agent.start(request))


class AgentResultHandler(ChapyterHandler):
    """``POST chapyter-ext/agent/result``: the browser's result of one step."""

    # A result may carry a few PNGs (each bounded in agent_protocol).
    max_body_bytes = MAX_RESULT_BODY_BYTES

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"ok": true}``; 404 when no running turn waits for that step."""
        self.app.agent.answer(StepAnswer.parse(self.json_body()))
        self.reply({"ok": True})


class AgentTrialHandler(ChapyterHandler):
    """``POST chapyter-ext/agent/trial``: a step's trial report, from the kernel through the
    browser; the answer is whether the step asks."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"needs_approval", "reasons", "concerns", "preview", "guard", "notice"}``; 404
        when no running turn waits for that step's trial."""
        self.reply(self.app.agent.trial(TrialAnswer.parse(self.json_body())))


class StopHandler(ChapyterHandler):
    """``POST chapyter-ext/chat/stop``: stop a streaming reply or an agent turn by its
    ``message_id``."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"message_id", "stopped": bool}``; false when it had already finished."""
        message_id = self.json_body().get("message_id")
        if not isinstance(message_id, str) or not message_id:
            raise ChatError("bad_request", "'message_id' must be a string.")
        self.reply({"message_id": message_id, "stopped": self.chat.stop(message_id)})


class FixHandler(ChapyterHandler):
    """``POST chapyter-ext/fix``: a proposed change to one cell (Fix, Edit with AI)."""

    @tornado.web.authenticated
    async def post(self) -> None:
        """``{"cell_id", "code", "explanation", "model", "kind", "request_sha256", "hold"}``
        (see ``fix/service.py``); a model failure is a 502 with its one line, no code
        ``no_code``."""
        request = parse_fix_request(self.json_body())
        settings = self.app.agent.settings
        self.reply(
            await propose_fix(
                request,
                registry=self.models,
                chat=self.chat,
                run_policy=str(settings.run_policy),
                local_review=bool(settings.local_review),
                trials=bool(settings.trials),
                limits=TrialLimits.from_settings(settings),
                secret_names=settings.secret_variables(),
            )
        )


class FixTrialHandler(ChapyterHandler):
    """``POST chapyter-ext/fix/trial``: **Accept and run** of a proposal that was tried in the
    kernel first: whether it runs now."""

    @tornado.web.authenticated
    def post(self) -> None:
        """``{"run", "guard", "why", "concerns", "preview", "unavailable"}``
        (``fix/consent.py``)."""
        request = FixTrial.parse(self.json_body())
        settings = self.app.agent.settings
        self.reply(
            trial_decision(
                request,
                str(settings.run_policy),
                self.chat.redact,
                settings.secret_variables(),
            )
        )


def handlers() -> list[tuple[str, type[ChapyterHandler]]]:
    """Relative URL patterns (the ExtensionApp prepends the server's base_url)."""
    return [
        (r"chapyter-ext/config", ConfigHandler),
        (r"chapyter-ext/context", ContextHandler),
        (r"chapyter-ext/models", ModelsHandler),
        (r"chapyter-ext/commands", CommandsHandler),
        (r"chapyter-ext/chat", ChatHandler),
        (r"chapyter-ext/chat/stop", StopHandler),
        (r"chapyter-ext/agent", AgentHandler),
        (r"chapyter-ext/agent/result", AgentResultHandler),
        (r"chapyter-ext/agent/trial", AgentTrialHandler),
        (r"chapyter-ext/fix", FixHandler),
        (r"chapyter-ext/fix/trial", FixTrialHandler),
    ]
