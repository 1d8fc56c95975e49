"""What ``%%ai`` (:mod:`chapyter_ext.magics`) does around the model call: the live progress
display (:mod:`.progress`), the one-line error (:mod:`.errors`), the generated cell's
provenance and its delivery below (:mod:`.delivery`), and the run-and-correct loop where no
frontend runs the code (:mod:`.terminal_retry`). IPython is imported lazily, by the caller's
shell."""
