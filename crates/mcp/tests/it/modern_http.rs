//! The modern era (2026-07-28) over Streamable HTTP against the in-process mock
//! ([`crate::http_mock`]).
