"""What ``chapyter-ext agent`` starts from: the settings the notebook's kernel would have, the
MCP servers the Jupyter server would use, and the one error that stops a run in one line."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..tracebacks import exception_line

if TYPE_CHECKING:
    from ..config import Chapyter
    from .tools.mcp import BlockingToolSource

__all__ = ["AgentRunError", "blocking_mcp_tools", "load_settings"]


class AgentRunError(Exception):
    """The run could not go on; ``str()`` is one line for the terminal."""


def blocking_mcp_tools() -> BlockingToolSource | None:
    """The MCP servers the Jupyter server would use (``chapyter_ext_mcp.json`` in Jupyter's
    config path, ``c.ChapyterExtApp.mcp_servers`` of ``jupyter_server_config``), started on
    first use on a loop of their own; None when none is configured."""
    from ..mcp import McpServers
    from ..mcp.config import app_config
    from .tools.mcp import BlockingToolSource

    setting, start_timeout, call_timeout = app_config()
    servers = McpServers.from_config(
        setting, start_timeout=start_timeout, call_timeout=call_timeout
    )
    return BlockingToolSource(servers) if servers else None


def load_settings() -> Chapyter:
    """The settings the notebook's kernel would have: the environment, then ``c.Chapyter`` of
    the default IPython profile (``ipython_config.py``, ``ipython_kernel_config.py``)."""
    from IPython.paths import get_ipython_dir
    from traitlets.config.loader import load_pyconfig_files

    from ..config import Chapyter

    profile = os.path.join(get_ipython_dir(), "profile_default")
    try:
        config = load_pyconfig_files(["ipython_config.py", "ipython_kernel_config.py"], profile)
        return Chapyter(config=config)
    except Exception as err:
        raise AgentRunError(
            f"cannot read the settings in {profile}: {exception_line(err)}"
        ) from None
