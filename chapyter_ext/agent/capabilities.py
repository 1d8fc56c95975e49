"""What an endpoint's model can take in an agent turn: OpenAI tools, image parts.

``Chapyter.tool_calling`` and ``Chapyter.image_input`` are "auto", "on" or "off". "auto": the
bundled local model gets neither (it runs the fenced protocol and reads figure digests); other
endpoints get tools (a driver whose request is refused over ``tools``, an ``LLMError`` with
``tools_rejected`` set by :mod:`chapyter_ext.llm.tool_calls`, asks again without them and keeps the
fenced protocol for the rest of the turn: ``AgentLoop.disable_tools``), and images when the
model's name is one known to take images.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Model names known to accept image parts (matched anywhere in the lower-cased name).
_VISION = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|(?:^|[/:_-])o[134](?:$|[-_:])|chatgpt-4o|"
    r"claude|gemini|llava|pixtral|vision|[-_]vl(?:$|[-_:])|qwen2(?:\.5)?-?vl|minicpm-v|"
    r"llama-?3\.2-?\d+b-vision|gemma-?3|moondream|bakllava|idefics"
)


@dataclass(frozen=True)
class Capabilities:
    """Whether the model gets OpenAI tools (else the fenced protocol) and image parts (else
    figure digests)."""

    tools: bool
    images: bool


def takes_images(model: str) -> bool:
    """Whether ``model`` is one of the model names known to accept image parts."""
    return bool(_VISION.search(model.lower()))


def capabilities(settings: Any, model: str, *, local: bool) -> Capabilities:
    """The capabilities of ``model`` under ``settings`` (``tool_calling``, ``image_input``);
    ``local``: the endpoint is the bundled local model."""
    tools = {"on": True, "off": False}.get(settings.tool_calling, not local)
    images = {"on": True, "off": False}.get(settings.image_input, not local and takes_images(model))
    return Capabilities(tools=tools, images=images)
