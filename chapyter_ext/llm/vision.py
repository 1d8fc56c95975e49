"""Whether a model takes image parts (OpenAI's ``image_url`` content parts): by
``Chapyter.image_input`` ("auto", "on", "off"); "auto" means yes for model names known to take
images and never for the bundled local model. Agent mode's figures and the chat's attached
images ask the same question here.
"""

from __future__ import annotations

import re

# Model names known to accept image parts (matched anywhere in the lower-cased name).
_VISION = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|(?:^|[/:_-])o[134](?:$|[-_:])|chatgpt-4o|"
    r"claude|gemini|llava|pixtral|vision|[-_]vl(?:$|[-_:])|qwen2(?:\.5)?-?vl|minicpm-v|"
    r"llama-?3\.2-?\d+b-vision|gemma-?3|moondream|bakllava|idefics"
)


def takes_images(model: str) -> bool:
    """Whether ``model`` is one of the model names known to accept image parts."""
    return bool(_VISION.search(model.lower()))


def accepts_images(setting: str, model: str, *, local: bool) -> bool:
    """Whether ``model`` gets image parts under ``Chapyter.image_input`` = ``setting``;
    ``local``: the endpoint is the bundled local model."""
    return {"on": True, "off": False}.get(setting, not local and takes_images(model))
