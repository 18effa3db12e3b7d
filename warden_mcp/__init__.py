"""``warden mcp-proxy``: Warden's approvals in front of any MCP server's tools (see docs/mcp.md)."""

from warden_mcp.proxy import CANCELLED_REASON, McpProxy

__all__ = ["CANCELLED_REASON", "McpProxy"]
