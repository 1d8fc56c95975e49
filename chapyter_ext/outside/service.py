"""The MCP server an outside agent talks to (the official ``mcp`` SDK's low-level ``Server`` and
its streamable-HTTP session manager), and what each tool call does: the same decision as the
built-in agent for a tool that acts (:mod:`chapyter_ext.policy.consent`: run, try, ask, from
the exact code), then the call relayed to a page (:mod:`.relay`) and its answer, redacted,
back to the client. Steps are capped per MCP session (``Chapyter.agent_max_steps``); nothing
is counted as usage (the outside agent pays its own model).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from ..chat import ChatError
from ..policy.consent import ASK, RUN, TRIAL, Plan, after_trial, plan
from ..redact import Redactor
from .relay import Answer, Relay, not_open_line
from .tokens import TokenStore
from .tools import TOOLS, OutsideTool, check_arguments, content_of, tool_named

if TYPE_CHECKING:
    from ..config import Chapyter

__all__ = ["OutsideService"]

_DECISION = {RUN: "run", TRIAL: "try", ASK: "ask"}
#: Sessions whose step counts are kept (the oldest is forgotten past it).
MAX_SESSIONS = 10_000


def _client_name(ctx: Any) -> str:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None:
        return "an MCP client"
    return " ".join(part for part in (info.name, info.version) if part)[:100] or "an MCP client"


class OutsideService:
    """The outside agents' MCP server, its relay to the pages and its tokens."""

    def __init__(
        self,
        settings: Chapyter,
        redact: Redactor,
        *,
        tokens: TokenStore | None = None,
        version: str = "",
        log: Any = None,
    ) -> None:
        self.settings = settings
        self.redact = redact
        self.log = log
        self.relay = Relay(redact)
        self.tokens = tokens or TokenStore()
        self.version = version
        #: Tool calls made in each MCP session, by its id (the step cap).
        self._steps: dict[str, int] = {}
        self._manager: Any = None
        self._running: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None

    @property
    def timeout(self) -> float:
        """``Chapyter.outside_timeout``."""
        return float(self.settings.outside_timeout)

    # -- the SDK's server, started on first use --------------------------------------------

    async def manager(self) -> Any:
        """The running ``StreamableHTTPSessionManager`` (started once, on a task of its own)."""
        if self._running is None:
            from mcp.server.lowlevel import Server
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            server: Any = Server(
                "chapyter-ext",
                version=self.version,
                instructions="The user's live JupyterLab notebooks. Acting tools may wait for "
                "the user's approval in JupyterLab.",
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
            )
            self._manager = StreamableHTTPSessionManager(app=server)
            self._ready, self._stop = asyncio.Event(), asyncio.Event()
            self._running = asyncio.ensure_future(self._run(self._manager))
        assert self._ready is not None
        await self._ready.wait()
        return self._manager

    async def _run(self, manager: Any) -> None:
        assert self._ready is not None and self._stop is not None
        async with manager.run():
            self._ready.set()
            await self._stop.wait()

    async def close(self) -> None:
        """End every waiting call and the SDK's sessions."""
        self.relay.close()
        if self._running is not None and self._stop is not None:
            self._stop.set()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._running, 5)

    # -- the tools -------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListToolsResult(
            tools=[
                types.Tool(name=tool.name, description=tool.description, input_schema=tool.schema())
                for tool in TOOLS
            ]
        )

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        headers = getattr(ctx.request, "headers", None) or {}
        origin = (str(headers.get("mcp-session-id", "")), str(ctx.request_id))
        answer = await self.call(
            params.name, dict(params.arguments or {}), _client_name(ctx), origin[0], origin
        )
        blocks = content_of(
            answer.result if answer.status == "ok" else None, answer.message, self.redact
        )
        return types.CallToolResult(content=blocks, is_error=answer.status != "ok")

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        client: str,
        session: str,
        origin: tuple[str, str] | None = None,
    ) -> Answer:
        """One tool call of ``client``, carried out by a page; a refusal is an answer too."""
        tool = tool_named(name)
        if tool is None:
            return Answer("error", None, f"Unknown tool {name!r}.")
        wrong = check_arguments(tool, arguments)
        if wrong:
            return Answer("error", None, wrong)
        steps = self._steps.get(session, 0) + 1
        cap = int(self.settings.agent_max_steps)
        if steps > cap:
            return Answer(
                "refused",
                None,
                f"This session reached {cap} tool calls (Chapyter.agent_max_steps): "
                "start a new session to go on.",
            )
        if session:
            if len(self._steps) >= MAX_SESSIONS and session not in self._steps:
                self._steps.pop(next(iter(self._steps)))  # the oldest session's count
            self._steps[session] = steps
        notebook = str(arguments.get("notebook", ""))
        page = self.relay.page_for(notebook)
        if page is None:
            return Answer("not_open", None, not_open_line(notebook))
        event: dict[str, Any] = {
            "client": client,
            "tool": name,
            "arguments": arguments,
            "notebook": notebook,
            "acts": tool.acts,
            "decision": None,
            "reasons": [],
            "trial": None,
            "code": None,
            "provenance": (
                {"generated_by": "outside", "client": client, "tool": name} if tool.acts else None
            ),
        }
        decide = None
        if tool.acts:
            code, refused = await self._code_of(tool, arguments, client, page)
            if refused is not None:
                return refused
            decide = self._decide(tool, code, event)
            if event["decision"] is None:
                return Answer("refused", None, event.pop("refusal"))
        call = self.relay.send(
            page,
            event,
            client,
            decide_trial=decide,
            trial_open=event["trial"] is not None,
            origin=origin,
        )
        answer = await self.relay.wait(call, self.timeout)
        if answer.status == "not_open":
            return Answer("not_open", None, not_open_line(notebook))
        return answer

    async def _code_of(
        self, tool: OutsideTool, arguments: dict[str, Any], client: str, page: Any
    ) -> tuple[str | None, Answer | None]:
        """The exact code the call would run or write (a cell to run is read first)."""
        if tool.name == "run_code":
            return self.redact(arguments["code"]), None
        if tool.name == "edit_cell":
            return self.redact(arguments["source"]), None
        if tool.name != "run_cell":
            return None, None
        read = {
            "client": client,
            "tool": "read_cells",
            "arguments": {"notebook": arguments["notebook"]},
            "notebook": arguments["notebook"],
            "acts": False,
            "decision": None,
            "reasons": [],
            "trial": None,
            "code": None,
            "provenance": None,
        }
        answer = await self.relay.wait(self.relay.send(page, read, client), self.timeout)
        if answer.status != "ok":
            return None, answer
        cells = (answer.result or {}).get("cells")
        for cell in cells if isinstance(cells, list) else []:
            if isinstance(cell, dict) and cell.get("id") == arguments["cell_id"]:
                source = cell.get("source")
                if isinstance(source, str):
                    return self.redact(source), None
        return None, Answer("error", None, f"No cell {arguments['cell_id']!r} in that notebook.")

    def _decide(self, tool: OutsideTool, code: str | None, event: dict[str, Any]) -> Any:
        """Fill the event's decision for an acting tool; the trial's decision function."""
        event["code"] = code
        if tool.name in ("edit_cell", "undo") or code is None:
            event["decision"] = "ask"  # a reviewed diff; a restore the user confirms
            return None
        settings = self.settings
        chosen = plan(
            str(settings.agent_policy),
            code,
            trials=bool(settings.trials),
            secret_names=settings.secret_variables(),
        )
        if chosen.refused:
            event["refusal"] = chosen.refused
            return None
        event["decision"] = _DECISION[chosen.action]
        event["reasons"] = list(chosen.lines)
        if chosen.action != TRIAL:
            return None
        from ..trial.kernel import trial_expression
        from ..trial.run import TrialLimits

        event["trial"] = trial_expression(code, TrialLimits.from_settings(settings))
        return lambda body: self._after_trial(chosen, code, body)

    def _after_trial(self, chosen: Plan, code: str, body: dict[str, Any]) -> dict[str, Any]:
        """``POST outside/trial``'s answer: the agent's decision once the trial came back."""
        from ..trial.kernel import expression
        from ..trial.report import TrialReport

        failure = body.get("failure")
        if isinstance(failure, dict):
            report = TrialReport.kernel_failed(
                str(failure.get("ename", "Error"))[:100], str(failure.get("evalue", ""))[:300]
            )
        else:
            try:
                report = TrialReport.from_dict(body.get("report"))
            except ValueError as err:
                raise ChatError("bad_request", str(err)) from None
        consent = after_trial(chosen, report)
        redact = self.redact
        return {
            "needs_approval": not consent.run,
            "reasons": [redact(line) for line in consent.reasons],
            "concerns": [redact(line) for line in consent.concerns],
            "preview": [redact(line) for line in consent.preview],
            "guard": expression("arm", code) if consent.guarded else None,
        }
