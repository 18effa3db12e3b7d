"""A small upstream MCP server for the tests (the SDK's MCPServer, formerly FastMCP).

``python upstream_server.py [LOG]`` serves stdio; ``python upstream_server.py LOG --port N`` serves
streamable HTTP on 127.0.0.1:N. Every executed ``delete_file`` / ``write_note`` appends a line to LOG
(so tests can tell whether, and how often, a gated tool really ran).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

LOG = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else None
server = MCPServer("files-upstream", log_level="ERROR")


def _log(line: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def list_files(prefix: str = "") -> list[str]:
    """List the files (read only)."""
    return [n for n in ("a.txt", "b.txt", "notes.md") if n.startswith(prefix)]


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_file(path: str) -> str:
    """Delete a file."""
    _log(f"deleted {path}")
    return f"deleted {path}"


@server.tool()
def write_note(text: str, count: int = 1) -> dict[str, object]:
    """Write a note (no annotations: gated by default)."""
    _log(f"note {text} x{count}")
    return {"written": text, "count": count}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def fail(message: str) -> str:
    """Always fails."""
    raise ToolError(message)


if __name__ == "__main__":
    if "--port" in sys.argv:
        port = int(sys.argv[sys.argv.index("--port") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
