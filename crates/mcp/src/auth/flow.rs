//! The authorization code flow (OAuth 2.1 §4.1 with PKCE `S256`, `state`, the resource
//! indicator, and the RFC 9207 `iss` check), through the loopback listener; and the headless
//! "browser" that follows the authorization URL itself.

use bytes::Bytes;
use http::Method;
use http::header::{ACCEPT, HeaderMap, HeaderValue, LOCATION};
use oauth2::basic::BasicClient;
use oauth2::{AuthUrl, ClientId, CsrfToken, PkceCodeChallenge, RedirectUrl, Scope};
use url::Url;

use super::callback::{CallbackParams, Listener};
use super::discovery::Discovered;
use super::failure::{AuthFailure, fail};
use super::fetch::{AuthHttp, require_tls};
use super::types::ClientRegistration;
use super::{Authorizer, Interaction};

/// How many redirects the headless browser follows before it reaches the redirect URI.
pub(crate) const MAX_HEADLESS_HOPS: usize = 10;

/// The authorization response, checked, and what the token request needs.
pub(crate) struct Granted {
    pub(crate) code: String,
    pub(crate) verifier: oauth2::PkceCodeVerifier,
}

/// Checks that the server can run this flow: an authorization endpoint, and PKCE `S256`
/// (MCP 2025-11-25: a server whose metadata does not list `S256` is refused; one with no
/// metadata at all, the 2025-03-26 defaults, cannot say and is tried).
pub(crate) fn check_pkce(discovered: &Discovered) -> Result<(), AuthFailure> {
    if !discovered.has_metadata {
        return Ok(());
    }
    match &discovered.metadata.code_challenge_methods_supported {
        Some(methods) if methods.iter().any(|m| m == "S256") => Ok(()),
        Some(methods) => Err(fail!(
            Metadata,
            "the authorization server {:?} does not support PKCE S256 (it lists {:?}); refused",
            discovered.issuer,
            methods
        )),
        None => Err(fail!(
            Metadata,
            "the authorization server {:?} does not say it supports PKCE (no code_challenge_methods_supported); refused",
            discovered.issuer
        )),
    }
}

/// Runs the authorization request through `interaction` and waits for the response on
/// `listener`.
pub(crate) async fn authorize(
    http: &AuthHttp,
    authorizer: &Authorizer,
    server: &str,
    discovered: &Discovered,
    client: &ClientRegistration,
    listener: Listener,
    scope: Option<&str>,
) -> Result<Granted, AuthFailure> {
    let interaction = &authorizer.interaction;
    let timeout = authorizer.callback_timeout;
    let endpoint = discovered
        .metadata
        .authorization_endpoint
        .as_deref()
        .ok_or_else(|| {
            fail!(
                Metadata,
                "the authorization server has no authorization endpoint"
            )
        })?;
    let auth_url = AuthUrl::new(endpoint.to_owned()).map_err(|err| {
        fail!(
            Metadata,
            "invalid authorization endpoint {endpoint:?}: {err}"
        )
    })?;
    // The person (or the headless browser) is sent there, and the code comes back from it.
    require_tls(auth_url.url(), "authorization endpoint")?;
    let redirect = RedirectUrl::new(listener.redirect_uri().to_owned())
        .map_err(|err| fail!(Callback, "invalid redirect URI: {err}"))?;
    let oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_auth_uri(auth_url)
        .set_redirect_uri(redirect);
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = oauth
        .authorize_url(CsrfToken::new_random)
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", discovered.resource.as_str());
    for scope in scope.unwrap_or("").split_whitespace() {
        request = request.add_scope(Scope::new(scope.to_owned()));
    }
    let (url, state) = request.url();
    let redirect_uri = listener.redirect_uri().to_owned();
    let waiting = listener.wait(timeout);
    tokio::pin!(waiting);
    let params = match interaction {
        Interaction::Never => {
            return Err(fail!(
                LoginRequired,
                "server `{server}` needs a new authorization"
            ));
        }
        Interaction::Prompt(prompt) => {
            let declined = prompt.open_until_declined(server, &url);
            tokio::select! {
                params = &mut waiting => params?,
                why = declined => {
                    return Err(fail!(
                        LoginRequired,
                        "the sign-in to server `{server}` was declined: {why}"
                    ));
                }
            }
        }
        Interaction::Headless => {
            let browse = follow(http, &url, &redirect_uri);
            tokio::pin!(browse);
            tokio::select! {
                params = &mut waiting => params?,
                browsed = &mut browse => {
                    browsed?;
                    waiting.await?
                }
            }
        }
    };
    check_response(&params, state.secret(), discovered)?;
    let code = params
        .code
        .ok_or_else(|| fail!(Callback, "the authorization response has no code"))?;
    Ok(Granted { code, verifier })
}

/// The checks of an authorization response: no `error`; the `state` we sent; and the issuer
/// (RFC 9207 §2.4): where the server advertises `iss`, it must be there; wherever it is there,
/// it must be the metadata's issuer, compared as strings.
pub(crate) fn check_response(
    params: &CallbackParams,
    state: &str,
    discovered: &Discovered,
) -> Result<(), AuthFailure> {
    if let Some(error) = &params.error {
        let description = params
            .error_description
            .as_deref()
            .map(|d| format!(" ({})", crate::http::answer::quote(d.as_bytes())))
            .unwrap_or_default();
        return Err(fail!(
            Denied,
            "the authorization server refused: {}{description}",
            crate::http::answer::quote(error.as_bytes())
        ));
    }
    if params.state.as_deref() != Some(state) {
        return Err(fail!(
            Callback,
            "the authorization response's state does not match the request's (a forged or stale redirect); refused"
        ));
    }
    let advertised = discovered.has_metadata
        && discovered
            .metadata
            .authorization_response_iss_parameter_supported
            == Some(true);
    match &params.iss {
        Some(iss) if discovered.has_metadata && *iss != discovered.metadata.issuer => Err(fail!(
            Callback,
            "the authorization response comes from issuer {:?}, not {:?} (RFC 9207); refused",
            crate::http::answer::quote(iss.as_bytes()),
            discovered.metadata.issuer
        )),
        None if advertised => Err(fail!(
            Callback,
            "the authorization response has no iss, which the server promised (RFC 9207); refused"
        )),
        _ => Ok(()),
    }
}

/// The headless browser: GETs the authorization URL and follows its redirects (to any
/// origin: it carries no credentials) until one leads to `redirect_uri`, which it then
/// requests, delivering the response to the listener.
pub(crate) async fn follow(
    http: &AuthHttp,
    start: &Url,
    redirect_uri: &str,
) -> Result<(), AuthFailure> {
    let mut url = start.clone();
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("text/html, */*"));
    for _ in 0..MAX_HEADLESS_HOPS {
        let fetched = http
            .send(Method::GET, &url, headers.clone(), Bytes::new())
            .await
            .map_err(|err| fail!(Callback, "following the authorization URL failed: {err}"))?;
        if url.as_str().starts_with(redirect_uri) {
            return Ok(());
        }
        if fetched.status.is_success() {
            return Err(fail!(
                LoginRequired,
                "the authorization server answered HTTP {} with a page instead of redirecting: it needs a person to sign in",
                fetched.status.as_u16()
            ));
        }
        if !fetched.status.is_redirection() {
            return Err(fail!(
                Callback,
                "the authorization request was refused with HTTP {}: {}",
                fetched.status.as_u16(),
                fetched.body_text()
            ));
        }
        let location = fetched
            .header(LOCATION.as_str())
            .ok_or_else(|| fail!(Callback, "a redirect without a Location"))?;
        url = url
            .join(location)
            .map_err(|err| fail!(Callback, "the redirect's Location is not a URL: {err}"))?;
    }
    Err(fail!(
        Callback,
        "more than {MAX_HEADLESS_HOPS} redirects before the redirect URI"
    ))
}
