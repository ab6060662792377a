//! sidewire-mcp's integration tests: the public API against an in-process mock server, real
//! child processes, the host, and (when installed) real MCP servers.

mod features;
mod host;
mod http;
mod http_faults;
mod http_mock;
mod http_peers;
mod listen;
mod listing;
mod modern;
mod modern_http;
mod oauth;
mod oauth_grants;
mod oauth_mock;
mod peers;
mod peers_features;
mod protocol;
mod server;
mod skills;
mod stdio;
mod support;
mod tasks;
mod tls;
