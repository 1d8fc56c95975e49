"""``%%ai`` and ``%ai``: the magics (:mod:`.magics`), what they do around the model call (the
live progress display, :mod:`.progress`; the one-line error, :mod:`.errors`; the generated
cell's provenance and its delivery below, :mod:`.delivery`; the run-and-correct loop where no
frontend runs the code, :mod:`.terminal_retry`), the prompts (:mod:`.prompts`, and the small
model's in :mod:`.small_prompt` with its checked candidates in :mod:`.candidates`), batch
replay of committed notebooks (:mod:`.replay`) and the kernel's warm-up (:mod:`.warmup`).
IPython is imported lazily, by the caller's shell.

This package is the magic's public surface for the other features (``tests/test_layers.py``).
"""

from .replay import ensure_cell_ids

__all__ = ["ensure_cell_ids"]
