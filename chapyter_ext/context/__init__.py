"""What the kernel knows, summarised for a model within a character budget.

Everything here is pure, cheap and bounded:

- Nothing heavy is imported: pandas and numpy are recognised through ``sys.modules`` (only when
  the user has already imported them), IPython through the ``shell`` object handed in.
- The cost does not grow with the data: a DataFrame is described from its shape, its dtypes and
  ``df.iloc[:rows, :columns]``; a container from its length and first few items; an array from
  ``a.flat[:k]``. Nothing calls ``describe()``, ``to_string()``, ``nunique()`` or a full ``repr``
  of a builtin container.
- Secrets never leave (``chapyter_ext.redact``): values of secret-looking names, values of secret
  environment variables and strings that look like API keys are replaced by ``<redacted>``, in
  every piece before it is clipped (so that a secret cannot leak half-cut) and once more over the
  final text (which is where variable names are redacted).

- What is sent is chosen for the request (``request=``): variables, columns, keys, labels and
  cells are ranked by how their words match the request's (:mod:`.relevance`,
  :mod:`.selection`), and each variable's facts (:mod:`.facts`: labels, sentinels, numbers
  stored as text, containers' keys and shapes) are read from bounded samples and cached between
  requests.

The modules: :mod:`.text` (clipping after redaction, type labels), :mod:`.values` (one value's
summary), :mod:`.frames` (pandas), :mod:`.summaries` (any value: the two above), :mod:`.facts`
(what is known of a variable, from :mod:`.tables` and :mod:`.containers`, cached by
:mod:`.fact_cache`), :mod:`.relevance`, :mod:`.selection`, :mod:`.kernel_state` (a live IPython
shell: variables, recent cells, the last error; the chat's and inline completion's lists of the
kernel's names), :mod:`.signatures` (the keywords a callable accepts, for inline
completion; imported on use, in the kernel), :mod:`.assemble` (THE assembler, one budget),
:mod:`.notebook` (the chat's notebook snapshot, assembled by the same assembler; imported on
use, by the server).
"""

from __future__ import annotations

from ..redact import REDACTED, is_secret_name, redact
from .assemble import build_context
from .frames import summarize_dataframe
from .kernel_state import (
    completion_names,
    describe_variables,
    kernel_context,
    last_error_summary,
    user_variables,
)
from .summaries import summarize_value

__all__ = [
    "REDACTED",
    "build_context",
    "completion_names",
    "describe_variables",
    "is_secret_name",
    "kernel_context",
    "last_error_summary",
    "redact",
    "summarize_dataframe",
    "summarize_value",
    "user_variables",
]
