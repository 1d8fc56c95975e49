"""The chat history: each notebook's chats in one JSON file named after the notebook's stable
id (:mod:`.files`, :mod:`.index`), the store (:mod:`.store`, :mod:`.core`) behind one worker
thread, notebooks renamed, moved or copied (:mod:`.moves`, :mod:`.contents_events`), the chat
a notebook carries in its metadata (:mod:`.stored`), exports as Markdown (:mod:`.markdown`,
:mod:`.export`), and the records (:mod:`.records`: messages, agent steps, their bounds).

This package is the history's public surface: the chat uses the history through what it
exports here (``tests/test_layers.py``).
"""

from .plans import MAX_PLAN_STEP_CHARS, MAX_PLAN_STEPS, PLAN_STATUSES, clean_plan, plan_step
from .records import (
    ChatMessage,
    HistoryError,
    new_id,
    normalize_notebook_path,
    repair_text,
    utc_now,
)
from .store import ChatHistoryStore, HistoryWorker

__all__ = [
    "MAX_PLAN_STEPS",
    "MAX_PLAN_STEP_CHARS",
    "PLAN_STATUSES",
    "ChatHistoryStore",
    "ChatMessage",
    "HistoryError",
    "HistoryWorker",
    "clean_plan",
    "new_id",
    "normalize_notebook_path",
    "plan_step",
    "repair_text",
    "utc_now",
]
