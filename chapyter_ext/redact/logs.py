"""Logs never carry a key: a filter on the server's log handlers that replaces known secrets in
every record, whoever logs it.

jupyter_server itself logs secrets in places: with kernels on a gateway,
``GatewayKernelManager`` logs the keyword arguments of every kernel start at INFO, and those
hold the server's whole environment (``OPENAI_API_KEY`` that the hub injected, the hub's
token). The filter sits on the handlers, so it sees the records of every logger that reaches
them. It replaces verbatim values only (the configured keys and header values, and the values
of environment variables with secret names): shape-based redaction would garble ids and URLs
that logs are read for. ``JUPYTER_TOKEN`` is left alone: the server prints its login URL on
purpose.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable

from .names import REDACTED, is_path, is_secret_name

__all__ = ["SecretLogFilter", "install_log_redaction"]

# A value shorter than this, replaced everywhere, would garble unrelated text.
_MIN_SECRET = 8
# Printed on purpose: the login URL of a server the user started.
_KEEP = frozenset({"JUPYTER_TOKEN"})


class SecretLogFilter(logging.Filter):
    """Replaces each of ``secrets`` (and the environment's secret-named values) in records."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        found = {str(s) for s in secrets if s and len(str(s)) >= _MIN_SECRET}
        for name, value in os.environ.items():
            if name in _KEEP or not is_secret_name(name):
                continue
            if len(value) >= _MIN_SECRET and not is_path(value):
                found.add(value)
        # Longest first, so that a secret containing another is replaced whole.
        self.secrets = sorted(found, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place; never drops one."""
        try:
            message = record.getMessage()
        except Exception:  # a broken record is the logging module's to report
            return True
        clean = message
        for secret in self.secrets:
            if secret in clean:
                clean = clean.replace(secret, REDACTED)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_text is None:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            for secret in self.secrets:
                record.exc_text = record.exc_text.replace(secret, REDACTED)
        return True


def install_log_redaction(logger: logging.Logger, secrets: Iterable[str]) -> SecretLogFilter:
    """Put one :class:`SecretLogFilter` on every handler of ``logger`` and of the root logger
    (replacing one installed before), and return it."""
    log_filter = SecretLogFilter(secrets)
    handlers = {*logger.handlers, *logging.getLogger().handlers}
    for handler in handlers:
        for old in [f for f in handler.filters if isinstance(f, SecretLogFilter)]:
            handler.removeFilter(old)
        handler.addFilter(log_filter)
    return log_filter
