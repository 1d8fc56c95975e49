"""chapyter-ext: natural language to code that runs in the notebook's own kernel.

This module holds entry points only, and imports nothing heavy: ``%load_ext chapyter_ext``
must stay fast, so the server app, IPython magics and the ``openai`` SDK load on demand.
"""

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "0.0.0+unknown"


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "chapyter-ext"}]


def _jupyter_server_extension_points():
    from .server.app import ChapyterExtApp

    return [{"module": "chapyter_ext", "app": ChapyterExtApp}]


def load_ipython_extension(ipython):
    """Register ``%%ai`` and ``%ai`` (``%load_ext chapyter_ext``)."""
    from .magic.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):
    """Undo :func:`load_ipython_extension` (``%unload_ext chapyter_ext``)."""
    from .magic.magics import unload_ipython_extension as unload

    unload(ipython)
