//! MCP transports behind one trait.
