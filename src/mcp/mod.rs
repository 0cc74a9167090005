//! The MCP host of `spec/mcp.md`: JSON-RPC, transports, clients and the manager. It knows nothing
//! of the agent or the model.

pub mod jsonrpc;
pub mod transport;
