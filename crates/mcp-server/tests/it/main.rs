//! The server against sidewire's own client (both eras, stdio and Streamable HTTP), raw HTTP
//! exchanges, and every bound of `Limits` and `HttpConfig` hit once.

mod bounds;
mod client;
mod http;
mod replicas;
mod sessions;
mod subscriptions;
mod support;
