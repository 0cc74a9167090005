//! Raw and resolved forms of `mcp.json` (owned by the MCP work).
