"""The notebook contract: what the kernel, ``chapyter-ext check`` and JupyterLab agree on.

One definition per language: this package, and ``labextension/src/contract/`` in TypeScript,
both tested against the same vectors (``tests/vectors/contract.json``). :mod:`.text` holds the
metadata key and schema, how a ``%%ai`` line is read and how a request and code are hashed;
:mod:`.cells` the provenance a generated cell carries, accepted changes, the links between a
prompt cell and its generated cell, and the ``set_next_input`` payload by which the kernel
hands generated code to a frontend; :mod:`.chat` the notebook's stable chat id and the chat it
may carry in its metadata. Pure: no IPython, no network.
"""

from __future__ import annotations

from .cells import *  # noqa: F403
from .cells import __all__ as _cells_all
from .chat import *  # noqa: F403
from .chat import __all__ as _chat_all
from .text import *  # noqa: F403
from .text import __all__ as _text_all

__all__ = sorted([*_text_all, *_cells_all, *_chat_all])
