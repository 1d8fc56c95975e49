"""The agent's service: agent turns started (:class:`AgentService`), their steps' answers and
trials routed to them. Agent turns take the chat's concurrency slots and are tracked in the
chat's one registry of running turns (:mod:`chapyter_ext.chat.running_turns`), so stopping and
shutting down are the chat's own; a turn itself is :mod:`.turn`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..chat import (
    ChatError,
    ChatService,
    TurnSetup,
)
from ..context.notebook import snapshot_modules, user_functions
from ..guards import check_code, snapshot_names
from .capabilities import capabilities
from .limits import AgentLimits, turn_policy
from .loop import AgentLoop
from .plan import PlanTracker
from .protocol import AgentRequest, StepAnswer, TrialAnswer
from .tools import (
    PlanStepMark,
    ToolRegistry,
    ToolSource,
    default_registry,
)

if TYPE_CHECKING:
    from ..config import Chapyter


from .turn import AgentTurn


class AgentService:
    """Starts agent turns on the chat's slots, routes the browser's results to them."""

    #: ``Chapyter.prices``, as the chat reads them (when a turn starts).
    prices = property(lambda self: self.chat.prices)

    def __init__(
        self,
        chat: ChatService,
        settings: Chapyter,
        *,
        tool_source: ToolSource | None = None,
        registry: ToolRegistry | None = None,
    ) -> None:
        self.chat = chat
        self.settings = settings
        self.redact, self.log, self.history = chat.redact, chat.log, chat.history
        #: The installed tools (built-in and entry points) every turn offers.
        self.registry = registry if registry is not None else default_registry()
        #: More tools per turn (the MCP servers'), or None.
        self.tool_source = tool_source
        #: Chats already told why their kernel makes no trials (told once per chat).
        self._told_no_trials: set[str] = set()

    @property
    def policy(self) -> str:
        """The approval policy unless a request names one (``Chapyter.agent_policy``)."""
        return str(self.settings.agent_policy)

    def limits(self) -> AgentLimits:
        """The caps of one turn (``Chapyter.agent_max_steps``, ``agent_time_limit``)."""
        return AgentLimits.from_settings(self.settings)

    def public_info(self) -> dict[str, Any]:
        """``GET config``'s ``agent``: the default policy, the caps, the tools, and
        ``policy_floor`` (the loosest policy the administrator allows) when ``agent_policy``
        is locked."""
        limits = self.limits()
        tools = self.registry.public()
        extra = self.tool_source.public() if self.tool_source is not None else {}
        info: dict[str, Any] = {
            "policy": self.policy,
            "max_steps": limits.max_steps,
            "time_limit": limits.time_limit,
            "tools": [*tools, *extra.get("tools", [])],
            "mcp_servers": extra.get("servers", []),
        }
        floor = self.settings.admin_locks().values.get("agent_policy")
        if floor is not None:
            info["policy_floor"] = str(floor).lower()
        return info

    def capabilities(self, name: str | None) -> tuple[bool, bool]:
        """Whether the endpoint behind ``name`` takes tools and images."""
        registry = self.chat.registry
        model = registry.model_name(name)
        found = capabilities(self.settings, model, local=registry.is_local(name))
        return found.tools, found.images

    async def start(self, request: AgentRequest) -> AgentTurn:
        """Save the user's message and start the turn; raises :class:`ChatError`.

        With the bundled model its steps wait for review (``Chapyter.local_review``) and are
        few (``Chapyter.agent_local_max_steps``); every model's code is checked before it is
        offered (:func:`chapyter_ext.guards.check_code`, against the snapshot's names with the
        small-model profile)."""
        asked = request.policy or self.policy
        # The administrator's lock holds against what a browser asks for, too.
        locked = self.settings.allowed("agent_policy", asked)
        names = snapshot_names(request.chat.context)

        def make(setup: TurnSetup) -> AgentTurn:
            local = self.chat.registry.is_local(request.chat.model)
            policy = turn_policy(locked, self.settings, local=local)
            found = capabilities(self.settings, setup.endpoint.model, local=local)
            small = setup.small

            def check(code: str):
                # A step runs exactly as shown: nothing the checks would repair passes.
                return check_code(code, names, small=small, as_is=True)

            # A plan the user edited and ran: its steps are the user's words (redacted as the
            # message is), followed in order and marked with plan_step (docs/plans.md).
            steps = [self.redact(step) for step in request.chat.plan_steps]
            plan = PlanTracker(steps) if steps else None
            registry = self.registry
            notes = setup.rules_prompt
            if plan is not None:
                registry = registry.extended([PlanStepMark(plan.mark)])
                notes = "\n".join(
                    part for part in (notes, plan.prompt(tools=found.tools, small=small)) if part
                )
            loop = AgentLoop(
                question=setup.message,
                context=setup.context,
                history=setup.history,
                tools=found.tools,
                images=found.images,
                policy=policy,
                limits=AgentLimits.from_settings(self.settings, small=small),
                redactor=self.redact,
                known_functions=user_functions(request.chat.context),
                registry=registry,
                system_notes=notes,
                check=check,
                small=small,
                known_types=snapshot_modules(request.chat.context),
                trials=bool(self.settings.trials),
                secret_names=self.settings.secret_variables(),
                attached_images=setup.images,
            )
            turn = AgentTurn(
                self, setup, loop, policy=policy, capabilities=found, names=names, plan=plan
            )
            if locked != asked:
                floor = self.settings.admin_locks().describe("agent_policy")
                lock = (
                    f"Your administrator requires approval policy {floor}: "
                    f"this turn uses {locked!r}."
                )
                turn.notice = f"{turn.notice} {lock}".strip()
            return turn

        turn = await self.chat.open_turn(request.chat, make)
        try:
            turn.start(turn.limits.time_limit, "time_limit")
        except BaseException:
            self.release(turn)
            raise
        return turn

    def trial(self, answer: TrialAnswer) -> dict[str, Any]:
        """Hand a step's trial report to its turn; its decision (see ``AgentTurn.trial``)."""
        turn = self.chat.turns.get(answer.message_id, AgentTurn)
        if turn is None:
            raise ChatError("not_found", "No agent turn with that message_id is running.")
        return turn.trial(answer)

    def trials_unavailable(self, chat_id: str, reason: str) -> str | None:
        """The one line telling a chat its kernel makes no trials, the first time only."""
        if chat_id in self._told_no_trials:
            return None
        self._told_no_trials.add(chat_id)
        return (
            f"No trial runs here ({reason}): steps the analysis cannot prove harmless ask "
            "instead (docs/trials.md)."
        )

    def answer(self, answer: StepAnswer) -> None:
        """Hand a step's result to its turn; ``not_found`` if the turn is unknown or over."""
        turn = self.chat.turns.get(answer.message_id, AgentTurn)
        if turn is None:
            raise ChatError("not_found", "No agent turn with that message_id is running.")
        turn.answer(answer)

    def release(self, turn: AgentTurn) -> None:
        """The turn is over: free its slot."""
        self.chat.turns.release(turn)

    async def close(self) -> None:
        """Stop every agent turn (saving what each had) and wait for them."""
        await self.chat.turns.close(AgentTurn)
