//! Why an HTTP exchange failed, and the typed error a caller sees for it.

use url::Url;

use super::answer::Unexpected;
use crate::Error;
use crate::error::Kind;
use crate::error::auth::AuthFailure;
use crate::redact::UrlSecrets;
use crate::transport::MAX_HEADER_VALUE_BYTES;

/// Why an exchange failed.
#[derive(Debug)]
pub(crate) enum Cause {
    /// No status: connecting, TLS, a broken or ended stream, no answer in time.
    Unanswered(String),
    /// A non-2xx status, with the start of the body.
    Status { status: u16, body: String },
    /// A body or SSE event over the cap (in bytes).
    TooLarge(usize),
    /// A 2xx answer that is not the request's response (see `http::answer`).
    Unexpected { status: u16, answer: Unexpected },
    /// Authorizing the request failed (see `crate::auth`, through [`super::Authorize`]).
    Auth(AuthFailure),
    /// A header the request must carry is over [`MAX_HEADER_VALUE_BYTES`]: it was not sent.
    HeaderTooLarge { header: String, bytes: usize },
}

impl Cause {
    /// The typed error a caller sees for an exchange of `method` with `url` that failed so:
    /// the URL shown, and every text that may quote it (a body that echoes the path, an
    /// authorization message) scrubbed, without the `secrets` of the server's URL.
    pub(crate) fn into_error(self, method: &str, url: &Url, secrets: &UrlSecrets) -> Error {
        let url = secrets.show(url);
        let scrub = |text: String| match secrets.scrub(&text) {
            std::borrow::Cow::Borrowed(_) => text,
            std::borrow::Cow::Owned(scrubbed) => scrubbed,
        };
        let kind = match self {
            Cause::Unanswered(detail) => Kind::Http {
                method: method.to_owned(),
                url,
                status: None,
                detail: scrub(detail),
            },
            Cause::Status { status, body } => Kind::Http {
                method: method.to_owned(),
                url,
                status: Some(status),
                detail: scrub(body),
            },
            Cause::TooLarge(cap) => Kind::TooLarge(format!(
                "{method}: a response body or SSE event from {url} exceeded the {cap}-byte limit"
            )),
            Cause::Unexpected { status, answer } => Kind::UnexpectedAnswer {
                method: method.to_owned(),
                url,
                status,
                content_type: answer.content_type,
                why: answer.why.as_str(),
                quote: scrub(answer.quote),
            },
            Cause::Auth(failure) => Kind::Auth(AuthFailure {
                message: scrub(failure.message),
                ..failure
            }),
            Cause::HeaderTooLarge { header, bytes } => Kind::TooLarge(format!(
                "{method}: its {} header would be {bytes} bytes, over the \
                 {MAX_HEADER_VALUE_BYTES}-byte cap on one header value; nothing was sent",
                crate::text::peer(&header)
            )),
        };
        Error::new(kind)
    }
}
