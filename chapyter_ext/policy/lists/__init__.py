"""The data behind :mod:`chapyter_ext.policy`: what is known to be safe, and how the rest is
labelled.

Allow-lists, not deny-lists: a call runs unasked only when it resolves to a name listed here.

- Names: builtins, methods (by name, whatever the receiver: :mod:`.methods`), module functions
  (``ALLOWED`` in :mod:`.functions`, by full dotted name).
- Pure namespaces (``PURE``): packages whose functions only compute, read or plot (numpy,
  pandas, scipy, matplotlib, seaborn, scikit-learn...). Every name under one is allowed except
  the writers, loaders and network readers listed with it, names starting with ``_``, names
  matching ``EFFECT_NAME`` (``to_csv``, ``save*``, ``write*``, ``dump*``...) and the
  sub-namespaces in ``DENIED``: listing each of numpy's 600 functions would add nothing a
  reviewer could check; the exceptions are what is reviewed.
- Magics (:mod:`.magics`): by what they do, IPython's own by name.
- Types (:mod:`.types`): what an object of a known type is checked as (``known_types``).

The labels (``QUAL_LABELS`` in :mod:`.labels`, ``METHOD_LABELS``, ``KIND_LABELS``) only name the
category of something already refused, so that the reason says "deletes files" rather than
"not known to be safe"; :mod:`.labels` groups them by class (loaders, posters, extractors,
probes).

The tables are written as space-separated words, read by the helpers below.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """``"a b c"`` as the set of its words."""
    return frozenset(text.split())


def pairs(text: str) -> dict[str, str]:
    """``"a=b c=d"`` as ``{"a": "b", "c": "d"}``."""
    return dict(pair.split("=", 1) for pair in text.split())


def calls(text: str) -> dict[str, tuple[int, str]]:
    """``"name:position:mode ..."``: which positional argument a callee calls, and how."""
    return {n: (int(p), m) for n, p, m in (item.split(":") for item in text.split())}
