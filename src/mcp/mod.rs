//! The MCP host of `spec/mcp.md` (owned by the MCP work): JSON-RPC, transports, clients and the
//! manager. It knows nothing of the agent or the model.
pub mod transport;
