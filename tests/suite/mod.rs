//! The integration suites, one module per area; each drives the real `ling` binary or the
//! library, with the helpers of `crate::support`.

mod debug_log;
mod hooks_config;
mod hooks_e2e;
mod hooks_e2e_session;
mod hooks_engine;
mod hooks_examples;
mod hooks_http;
mod llm_client;
mod mcp_agent;
mod mcp_cli;
mod mcp_config;
mod mcp_conformance;
mod mcp_failures;
mod mcp_features;
mod mcp_http;
mod mcp_http_everything;
mod mcp_naming;
mod mcp_reference;
mod mcp_reference_cli;
mod mcp_shutdown;
mod print_mode;
mod repl;
mod repl_mcp;
mod sessions;
mod sqlite_inspector;
mod sqlite_mcp;
mod sqlite_readonly;
mod tools_builtin;
mod trust_files;
mod trust_holes;
mod trust_rules;
mod trust_secrets;
mod trust_terminal;
mod trust_workspace;
mod trust_workspace_repl;
