"""The provenance a generated cell carries in its metadata, under the key ``chapyter``.

Versioned (``schema``) and with a stable field order, so that a regeneration shows up in git
as a small, readable diff. The kernel fills in what it knows (model, endpoint host,
parameters, time, context size, attempts, hashes); the JupyterLab frontend adds the cell
links (``generated_from`` on the generated cell, ``generated_cell`` on the prompt cell).
Never a key, never a full URL: only the endpoint's host.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

METADATA_KEY = "chapyter"
SCHEMA_VERSION = 1


def code_sha256(code: str) -> str:
    """Hash of generated code, to tell later whether a person edited the cell."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def utc_now_iso() -> str:
    """The current time as ISO 8601 in UTC, to the second (finer would only add diff noise)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def generated_metadata(
    *,
    prompt_sha256: str,
    model: str,
    endpoint_host: str,
    temperature: float,
    max_tokens: int,
    context_chars: int,
    attempts: int,
    code: str,
    source: str = "magic",
    created: str | None = None,
) -> dict:
    """Provenance for a generated cell, in the documented field order."""
    return {
        "schema": SCHEMA_VERSION,
        "role": "generated",
        "source": source,
        "prompt_sha256": prompt_sha256,
        "model": model,
        "endpoint": endpoint_host,
        "parameters": {"temperature": temperature, "max_tokens": max_tokens},
        "created": created or utc_now_iso(),
        "context_chars": context_chars,
        "attempts": attempts,
        "code_sha256": code_sha256(code),
        "edited": False,
    }
