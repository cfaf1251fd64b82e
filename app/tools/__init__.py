"""Tools the model can call, by where they come from.

* :mod:`app.tools.functions` — plain Python functions as tools (schema from type hints and
  docstrings, argument checks, sync tools in a worker thread); its public names are re-exported
  here, so ``from app.tools import tool`` keeps working.
* :mod:`app.tools.schema` — the JSON schema of a function's parameters (type hints, docstring)
  and the checks of the model's arguments against it.
* :mod:`app.tools.workspace` — file tools confined to a workspace folder the person picked.
* :mod:`app.tools.mcp` — tools offered by MCP servers over stdio (the optional ``mcp`` package).
"""

from .functions import (
    MAY_STILL_COMPLETE,
    STOP_GRACE,
    STOPPED_STILL_RUNNING_TEXT,
    FunctionTool,
    ToolArgumentError,
    ToolResult,
    as_tool,
    tool,
)

__all__ = [
    "MAY_STILL_COMPLETE",
    "STOPPED_STILL_RUNNING_TEXT",
    "STOP_GRACE",
    "FunctionTool",
    "ToolArgumentError",
    "ToolResult",
    "as_tool",
    "tool",
]
