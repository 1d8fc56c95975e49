"""Reading code out of text: a model's answer to the code to run (:mod:`.extract`), fenced
blocks in Markdown (:mod:`.fences`), and a cell as IPython runs it (:mod:`.syntax`: IPython's
input transforms and the parse, one place). Pure; IPython is imported on first use only."""

from .extract import NoCodeError, extract_code
from .fences import fenced
from .syntax import CodeSyntaxError, MagicCallError, check_syntax, parse_cell, syntax_error

__all__ = [
    "CodeSyntaxError",
    "MagicCallError",
    "NoCodeError",
    "check_syntax",
    "extract_code",
    "fenced",
    "parse_cell",
    "syntax_error",
]
