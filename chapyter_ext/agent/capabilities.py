"""What an endpoint's model can take in an agent turn: OpenAI tools, image parts.

``Chapyter.tool_calling`` and ``Chapyter.image_input`` are "auto", "on" or "off". "auto": the
bundled local model gets neither (it runs the fenced protocol and reads figure digests); other
endpoints get tools (a driver whose request is refused over ``tools``, an ``LLMError`` with
``tools_rejected`` set by :mod:`chapyter_ext.llm.tool_calls`, asks again without them and keeps the
fenced protocol for the rest of the turn: ``AgentLoop.disable_tools``), and images when the
model's name is one known to take images.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..llm.vision import accepts_images, takes_images

__all__ = ["Capabilities", "capabilities", "takes_images"]


@dataclass(frozen=True)
class Capabilities:
    """Whether the model gets OpenAI tools (else the fenced protocol) and image parts (else
    figure digests)."""

    tools: bool
    images: bool


def capabilities(settings: Any, model: str, *, local: bool) -> Capabilities:
    """The capabilities of ``model`` under ``settings`` (``tool_calling``, ``image_input``);
    ``local``: the endpoint is the bundled local model."""
    tools = {"on": True, "off": False}.get(settings.tool_calling, not local)
    images = accepts_images(settings.image_input, model, local=local)
    return Capabilities(tools=tools, images=images)
