//! One connection's authorization: the current tokens and what to do when the server refuses
//! a request.
//!
//! The HTTP transport calls [`AuthSession::apply`] before each request to the server (it adds
//! `Authorization`, and a DPoP proof when the token is DPoP-bound, refreshing first when the
//! token is about to expire) and [`AuthSession::refused`] after a 401 or 403, which makes the
//! retry worthwhile or says to give up. Every refusal of one request draws on one [`Budget`], so
//! a server that keeps refusing costs at most [`MAX_AUTHORIZATIONS`] authorizations, one
//! refresh and [`MAX_NONCE_RETRIES`] nonce retries for that request.
//!
//! States of the tokens (`State::tokens`, with `generation` counting changes):
//!
//! | state | on a request | on 401 | on 403 `insufficient_scope` |
//! |---|---|---|---|
//! | none | sent bare | authorize | authorize |
//! | current | sent with the token | refresh once, else authorize | step-up (scopes: before ∪ challenged), unless the token already has them |
//! | expiring (≤ [`REFRESH_MARGIN`]) | refresh first, then as current | as current | as current |
//!
//! A refusal of a request sent with an older generation than the current one is simply retried:
//! another request already changed the tokens. One authorization or refresh runs at a time per
//! connection (`flight`), and a refresh holds the store's lock and, holding it, reads the stored
//! tokens again (another process may have refreshed them, spending the refresh token we hold),
//! so concurrent processes never spend the same refresh token twice.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use http::{Method, StatusCode};
use sidewire_jsonrpc::lock;
use url::Url;

use super::challenge::Challenge;
use super::discovery::{self, Discovered};
use super::dpop::{self, DpopKey};
use super::failure::{AuthErrorKind, AuthFailure, fail};
use super::fetch::AuthHttp;
use super::grants;
use super::login::LoginOutcome;
use super::registration;
use super::settings::{DpopPolicy, Grant, OAuthSettings};
use super::token::TokenCall;
use super::types::{ClientRegistration, StoreKey, StoredAuth, Tokens, unix_now};
use super::{Authorizer, Interaction, callback, flow, scope};
use crate::error::Kind;
use crate::http::client::{BackgroundTask, HttpClient, same_origin};
use crate::http::{AuthFuture, Authorize, Budget, Decision};
use crate::{Error, ServerSpec};

/// How long before its expiry a token is refreshed.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(30);
/// How many authorizations (first ones and step-ups) one request may cause.
pub const MAX_AUTHORIZATIONS: u32 = 3;
/// How many times one request is retried for a DPoP nonce.
pub const MAX_NONCE_RETRIES: u32 = 2;
/// How many times in all one request is retried after refusals.
pub const MAX_RETRIES: u32 = 8;
/// How long a refresh waits for another process's lock on the same record.
pub const STORE_LOCK_WAIT: Duration = Duration::from_secs(10);

/// The resource identifier of a server URL (RFC 8707): the URL as configured, without its
/// fragment, kept as text (a `Url` would add a `/` to a bare origin, and servers compare the
/// string).
pub(crate) fn canonical_resource(url: &str) -> String {
    let url = url.trim();
    url.split('#').next().unwrap_or(url).to_owned()
}

#[derive(Default)]
struct State {
    loaded: bool,
    tokens: Option<Tokens>,
    client: Option<ClientRegistration>,
    /// Counts changes of `tokens`.
    generation: u64,
    /// What the last authorization found (for refreshes and step-ups).
    discovered: Option<Discovered>,
    /// The scopes the last authorization asked for.
    requested: Option<String>,
    /// The DPoP key of the current tokens, when they are DPoP-bound.
    /// (It keeps the servers' last nonces too.)
    prover: Option<Arc<DpopKey>>,
}

/// One connection's authorization state.
pub(crate) struct AuthSession {
    authorizer: Authorizer,
    settings: OAuthSettings,
    server: Arc<str>,
    url: Url,
    key: StoreKey,
    http: AuthHttp,
    state: Mutex<State>,
    flight: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for AuthSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthSession")
            .field("server", &self.server)
            .field("url", &self.url.as_str())
            .finish_non_exhaustive()
    }
}

impl AuthSession {
    /// The session of `spec`'s connection at `url`, when it authorizes: it has an authorizer
    /// and no configured `Authorization` header (which is the credential then).
    pub(crate) fn new(
        spec: &ServerSpec,
        client: &HttpClient,
        url: &Url,
    ) -> Option<Arc<AuthSession>> {
        let authorizer = spec.authorizer.clone()?;
        if spec
            .headers
            .keys()
            .any(|name| name.trim().eq_ignore_ascii_case("authorization"))
        {
            return None;
        }
        for secret in spec.oauth.secrets() {
            authorizer.remember_secret(secret);
        }
        let http = AuthHttp {
            client: client.clone(),
            timeout: authorizer.request_timeout,
        };
        Some(Arc::new(AuthSession {
            key: StoreKey::new(spec.credentials_name(), canonical_resource(spec.url())),
            settings: spec.oauth.clone(),
            server: Arc::clone(&spec.name),
            url: url.clone(),
            http,
            authorizer,
            state: Mutex::new(State::default()),
            flight: tokio::sync::Mutex::new(()),
        }))
    }

    fn load(&self) -> Result<(), AuthFailure> {
        let mut state = lock(&self.state);
        if state.loaded {
            return Ok(());
        }
        let stored = self
            .authorizer
            .store
            .load(&self.key)
            .map_err(|err| fail!(Store, "reading the stored authorization failed: {err}"))?;
        if let Some(stored) = stored {
            if let Some(tokens) = &stored.tokens {
                self.authorizer
                    .remember_secret(tokens.access_token.expose());
                if let Some(refresh) = &tokens.refresh_token {
                    self.authorizer.remember_secret(refresh.expose());
                }
            }
            if let Some(secret) = stored
                .client
                .as_ref()
                .and_then(|c| c.client_secret.as_ref())
            {
                self.authorizer.remember_secret(secret.expose());
            }
            // A DPoP-bound token needs the key it was bound to, which is not kept.
            state.tokens = stored.tokens.filter(|tokens| !tokens.is_dpop());
            state.client = stored.client;
        }
        state.loaded = true;
        Ok(())
    }

    fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// Adds the credentials to a request for `url` (refreshing first when the token expires
    /// within [`REFRESH_MARGIN`]) and returns the generation they belong to. Nothing is added
    /// for another origin.
    ///
    /// Cancel safety: cancelling a refresh it started leaves the old tokens in place.
    pub(crate) async fn apply(
        &self,
        method: &Method,
        url: &Url,
        headers: &mut HeaderMap,
    ) -> Result<u64, AuthFailure> {
        self.load()?;
        let expiring = {
            let state = lock(&self.state);
            state
                .tokens
                .as_ref()
                .is_some_and(|tokens| {
                    tokens.refresh_token.is_some() && tokens.refresh_due(REFRESH_MARGIN, unix_now())
                })
                .then_some(state.generation)
        };
        if let Some(generation) = expiring {
            let _flight = self.flight.lock().await;
            if self.generation() == generation
                && let Err(err) = self.refresh_locked().await
            {
                tracing::info!(server = %self.server, error = %err, "refreshing the expiring token failed; using it while it lasts");
            }
        }
        let state = lock(&self.state);
        if !same_origin(url, &self.url) {
            return Ok(state.generation);
        }
        if let Some(tokens) = &state.tokens {
            let scheme = if tokens.is_dpop() { "DPoP" } else { "Bearer" };
            let value =
                HeaderValue::from_str(&format!("{scheme} {}", tokens.access_token.expose()))
                    .map_err(|_| fail!(Token, "the access token is not a valid header value"))?;
            headers.insert(AUTHORIZATION, value);
            if tokens.is_dpop()
                && let Some(prover) = &state.prover
            {
                let proof =
                    prover.proof_for(method.as_str(), url, Some(tokens.access_token.expose()))?;
                headers.insert(
                    "dpop",
                    HeaderValue::from_str(&proof)
                        .map_err(|_| fail!(Token, "the DPoP proof is not a valid header value"))?,
                );
            }
        }
        Ok(state.generation)
    }

    /// After the server answered `status` (401 or 403) with `headers` to a request sent with
    /// credentials of generation `sent`: gets new credentials (refresh, authorization, step-up,
    /// a DPoP nonce) and says to retry, or fails once `budget` is spent.
    ///
    /// Cancel safety: cancelling it abandons an authorization in progress; tokens are replaced
    /// only once new ones arrived.
    pub(crate) async fn refused(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        sent: u64,
        budget: &mut Budget,
    ) -> Result<Decision, AuthFailure> {
        let challenge = Challenge::from_headers(headers);
        if status == StatusCode::FORBIDDEN && !challenge.is_insufficient_scope() {
            return Ok(Decision::Stand);
        }
        budget.retries += 1;
        if budget.retries > MAX_RETRIES {
            return Err(self.still_refused(status, &challenge));
        }
        if status == StatusCode::UNAUTHORIZED && challenge.is_use_dpop_nonce() {
            let prover = lock(&self.state).prover.clone();
            if let Some(prover) = prover
                && budget.nonce_retries < MAX_NONCE_RETRIES
                && prover.remember_nonce(&self.url, headers)
            {
                budget.nonce_retries += 1;
                return Ok(Decision::Retry);
            }
        }
        let _flight = self.flight.lock().await;
        if self.generation() != sent {
            // Another request renewed the credentials meanwhile.
            return Ok(Decision::Retry);
        }
        let (had_token, refreshable, granted) = {
            let state = lock(&self.state);
            let tokens = state.tokens.as_ref();
            (
                tokens.is_some(),
                tokens.is_some_and(|t| t.refresh_token.is_some()),
                tokens
                    .and_then(|t| t.scope.clone())
                    .or_else(|| state.requested.clone()),
            )
        };
        let step_up = status == StatusCode::FORBIDDEN;
        if !step_up && had_token && refreshable && !budget.refreshed {
            budget.refreshed = true;
            match self.refresh_locked().await {
                Ok(()) => return Ok(Decision::Retry),
                Err(err) => {
                    tracing::info!(server = %self.server, error = %err, "refreshing after a 401 failed; authorizing again");
                }
            }
        }
        if step_up && scope::already_granted(granted.as_deref(), &challenge) {
            return Err(self.still_refused(status, &challenge));
        }
        if budget.authorizations >= MAX_AUTHORIZATIONS {
            return Err(self.still_refused(status, &challenge));
        }
        budget.authorizations += 1;
        let wanted = step_up.then(|| {
            let state = lock(&self.state);
            let mut scopes = state.requested.clone().unwrap_or_default();
            if let Some(granted) = &granted {
                scopes.push(' ');
                scopes.push_str(granted);
            }
            scopes
        });
        self.authorize_locked(&challenge, wanted.as_deref(), step_up)
            .await?;
        Ok(Decision::Retry)
    }

    fn still_refused(&self, status: StatusCode, challenge: &Challenge) -> AuthFailure {
        let why = challenge
            .error_description
            .as_deref()
            .or(challenge.error.as_deref())
            .map(|text| format!(": {}", crate::http::answer::quote(text.as_bytes())))
            .unwrap_or_default();
        fail!(
            StillRefused,
            "server `{}` still answers HTTP {} after authorizing{why}",
            self.server,
            status.as_u16()
        )
    }

    /// Runs a new authorization (the flight lock held).
    async fn authorize_locked(
        &self,
        challenge: &Challenge,
        before: Option<&str>,
        step_up: bool,
    ) -> Result<(), AuthFailure> {
        let needs_person = matches!(self.settings.grant, Grant::AuthorizationCode);
        let nobody = match &self.authorizer.interaction {
            Interaction::Never => true,
            Interaction::Prompt(prompt) => !prompt.can_open(&self.server),
            _ => false,
        };
        if needs_person && nobody {
            return Err(fail!(
                LoginRequired,
                "server `{}` requires authorization and nobody can sign in now",
                self.server
            ));
        }
        let discovered = discovery::discover(
            &self.http,
            &self.url,
            challenge,
            self.settings.auth_server_metadata_url.as_deref(),
        )
        .await?;
        let offline = needs_person && discovered.metadata.supports_scope("offline_access");
        let wanted = if step_up {
            scope::step_up(before, challenge, offline)
        } else {
            scope::initial(
                self.settings.scopes.as_deref(),
                challenge,
                discovered.resource_scopes.as_deref(),
                offline,
            )
        };
        check_grant(&self.settings.grant, &discovered)?;
        let prover = dpop_prover(&self.settings, &discovered)?;
        let stored_client = lock(&self.state).client.clone();
        let now = unix_now();
        let (client, tokens) = match self.settings.grant {
            Grant::AuthorizationCode => {
                flow::check_pkce(&discovered)?;
                let listener = self
                    .listener(stored_client.as_ref(), &discovered.issuer)
                    .await?;
                let redirect_uri = listener.redirect_uri().to_owned();
                let client = registration::identify(
                    &self.http,
                    &self.authorizer,
                    &self.settings,
                    &discovered,
                    stored_client.as_ref(),
                    Some(&redirect_uri),
                    now,
                )
                .await?;
                self.keep_client(&client);
                let granted = flow::authorize(
                    &self.http,
                    &self.authorizer,
                    &self.server,
                    &discovered,
                    &client,
                    listener,
                    wanted.as_deref(),
                )
                .await?;
                let call = self.token_call(&discovered, &client, prover.clone())?;
                let tokens = call
                    .exchange_code(
                        &granted.code,
                        granted.verifier,
                        &redirect_uri,
                        wanted.as_deref(),
                    )
                    .await?;
                (client, tokens)
            }
            Grant::ClientCredentials | Grant::JwtBearer { .. } | Grant::TokenExchange { .. } => {
                let client = registration::identify(
                    &self.http,
                    &self.authorizer,
                    &self.settings,
                    &discovered,
                    stored_client.as_ref(),
                    None,
                    now,
                )
                .await?;
                let tokens = if self.settings.grant == Grant::ClientCredentials {
                    let call = self.token_call(&discovered, &client, prover.clone())?;
                    call.client_credentials(wanted.as_deref()).await?
                } else {
                    let call = grants::GrantCall {
                        http: &self.http,
                        authorizer: &self.authorizer,
                        settings: &self.settings,
                        client: &client,
                        discovered: &discovered,
                        dpop: prover.as_deref(),
                    };
                    grants::obtain(&call, wanted.as_deref()).await?
                };
                (client, tokens)
            }
        };
        let dpop_bound = tokens.is_dpop();
        self.save(&client, &tokens)?;
        let mut state = lock(&self.state);
        state.tokens = Some(tokens);
        state.client = Some(client);
        state.generation += 1;
        state.requested = wanted;
        state.discovered = Some(discovered);
        state.prover = if dpop_bound { prover } else { None };
        tracing::info!(server = %self.server, "authorized");
        Ok(())
    }

    /// The loopback listener: on the configured port; else on the port of the redirect URI
    /// the stored registration with `issuer` was made with, so that it can be reused; else
    /// (or when that port is taken) on any free port, and the client registers again.
    async fn listener(
        &self,
        stored: Option<&ClientRegistration>,
        issuer: &str,
    ) -> Result<callback::Listener, AuthFailure> {
        if self.settings.callback_port.is_some() {
            return callback::Listener::bind(self.settings.callback_port).await;
        }
        let registered = stored
            .filter(|client| client.issuer == issuer)
            .and_then(|client| client.redirect_uri.as_deref())
            .and_then(|uri| Url::parse(uri).ok())
            .and_then(|uri| uri.port());
        if let Some(port) = registered
            && let Ok(listener) = callback::Listener::bind(Some(port)).await
        {
            return Ok(listener);
        }
        callback::Listener::bind(None).await
    }

    fn token_call<'a>(
        &'a self,
        discovered: &'a Discovered,
        client: &'a ClientRegistration,
        prover: Option<Arc<DpopKey>>,
    ) -> Result<TokenCall<'a>, AuthFailure> {
        let token_endpoint = discovered
            .metadata
            .token_endpoint
            .as_deref()
            .ok_or_else(|| fail!(Metadata, "the authorization server has no token endpoint"))?;
        Ok(TokenCall {
            http: &self.http,
            authorizer: &self.authorizer,
            settings: &self.settings,
            client,
            token_endpoint,
            resource: &discovered.resource,
            issuer: &discovered.issuer,
            prover,
        })
    }

    /// Keeps a new registration in the store at once, so it is reused even when the sign-in
    /// that follows is abandoned.
    fn keep_client(&self, client: &ClientRegistration) {
        let mut record = match self.authorizer.store.load(&self.key) {
            Ok(Some(record)) => record,
            _ => StoredAuth::new(&self.key),
        };
        if record.client.as_ref() == Some(client) {
            return;
        }
        if record
            .client
            .as_ref()
            .is_some_and(|old| old.issuer != client.issuer)
        {
            // Credentials of another authorization server are never sent to this one.
            record.tokens = None;
        }
        record.client = Some(client.clone());
        if let Err(err) = self.authorizer.store.save(&self.key, &record) {
            tracing::warn!(server = %self.server, error = %err, "keeping the client registration failed");
        }
        lock(&self.state).client = Some(client.clone());
    }

    fn save(&self, client: &ClientRegistration, tokens: &Tokens) -> Result<(), AuthFailure> {
        let mut record = StoredAuth::new(&self.key);
        record.client = Some(client.clone());
        // A DPoP-bound token is useless without its key, which is not kept.
        record.tokens = (!tokens.is_dpop()).then(|| tokens.clone());
        self.authorizer
            .store
            .save(&self.key, &record)
            .map_err(|err| fail!(Store, "storing the tokens failed: {err}"))
    }

    /// Refreshes the current tokens (the flight lock held), under the store's lock. When the
    /// store holds other tokens than ours, another process (or connection) refreshed since we
    /// read them: where the server rotates refresh tokens, ours is spent, so theirs are taken,
    /// and refreshed in turn, with *their* refresh token, only when they are due too (they may
    /// be: a token that lives less than [`REFRESH_MARGIN`] is due after half its lifetime).
    async fn refresh_locked(&self) -> Result<(), AuthFailure> {
        let (tokens, client, discovered, prover) = {
            let state = lock(&self.state);
            (
                state.tokens.clone(),
                state.client.clone(),
                state.discovered.clone(),
                state.prover.clone(),
            )
        };
        let (Some(tokens), Some(client)) = (tokens, client) else {
            return Err(fail!(Token, "nothing to refresh"));
        };
        let _guard = self.store_lock().await?;
        let mut tokens = tokens;
        if let Ok(Some(stored)) = self.authorizer.store.load(&self.key)
            && let Some(theirs) = stored.tokens
            && theirs.access_token != tokens.access_token
        {
            self.authorizer
                .remember_secret(theirs.access_token.expose());
            if let Some(refresh) = &theirs.refresh_token {
                self.authorizer.remember_secret(refresh.expose());
            }
            let due = theirs.refresh_due(REFRESH_MARGIN, unix_now());
            {
                // Taken even when they are due and their refresh fails below: ours are older.
                let mut state = lock(&self.state);
                state.tokens = Some(theirs.clone());
                state.generation += 1;
            }
            if !due {
                tracing::debug!(server = %self.server, "another process refreshed the tokens; using them");
                return Ok(());
            }
            tracing::debug!(server = %self.server, "another process refreshed the tokens, which are due again; refreshing theirs");
            tokens = theirs;
        }
        let token_endpoint = discovered
            .as_ref()
            .and_then(|d| d.metadata.token_endpoint.clone())
            .or_else(|| client.token_endpoint.clone())
            .ok_or_else(|| fail!(Token, "cannot refresh: the token endpoint is not known"))?;
        let issuer = discovered
            .as_ref()
            .map_or(client.issuer.clone(), |d| d.issuer.clone());
        let call = TokenCall {
            http: &self.http,
            authorizer: &self.authorizer,
            settings: &self.settings,
            client: &client,
            token_endpoint: &token_endpoint,
            resource: &tokens.resource,
            issuer: &issuer,
            prover,
        };
        let fresh = call.refresh(&tokens).await?;
        self.save(&client, &fresh)?;
        let mut state = lock(&self.state);
        state.tokens = Some(fresh);
        state.generation += 1;
        Ok(())
    }

    /// The store's lock on this record, waiting (boundedly) while another process holds it.
    async fn store_lock(&self) -> Result<super::StoreGuard, AuthFailure> {
        let deadline = tokio::time::Instant::now() + STORE_LOCK_WAIT;
        let mut pause = Duration::from_millis(10);
        loop {
            match self.authorizer.store.try_lock(&self.key) {
                Ok(Some(guard)) => return Ok(guard),
                Ok(None) if tokio::time::Instant::now() < deadline => {
                    // Another process is refreshing: its result will be in the store.
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(200));
                }
                Ok(None) => {
                    return Err(fail!(
                        Store,
                        "the stored authorization stayed locked for {} s",
                        STORE_LOCK_WAIT.as_secs()
                    ));
                }
                Err(err) => {
                    return Err(fail!(
                        Store,
                        "locking the stored authorization failed: {err}"
                    ));
                }
            }
        }
    }
}

impl Authorize for AuthSession {
    fn apply<'a>(
        &'a self,
        method: &'a Method,
        url: &'a Url,
        headers: &'a mut HeaderMap,
    ) -> AuthFuture<'a, u64> {
        Box::pin(AuthSession::apply(self, method, url, headers))
    }

    fn is_refusal(&self, status: StatusCode, headers: &HeaderMap) -> bool {
        status == StatusCode::UNAUTHORIZED
            || (status == StatusCode::FORBIDDEN
                && Challenge::from_headers(headers).is_insufficient_scope())
    }

    fn refused<'a>(
        &'a self,
        status: StatusCode,
        headers: &'a HeaderMap,
        sent: u64,
        budget: &'a mut Budget,
    ) -> AuthFuture<'a, Decision> {
        Box::pin(AuthSession::refused(self, status, headers, sent, budget))
    }
}

/// Refuses a grant the authorization server says it does not support (servers that do not
/// list their grants are tried).
fn check_grant(grant: &Grant, discovered: &Discovered) -> Result<(), AuthFailure> {
    let name = match grant {
        Grant::AuthorizationCode => "authorization_code",
        Grant::ClientCredentials => "client_credentials",
        Grant::JwtBearer { .. } | Grant::TokenExchange { .. } => grants::JWT_BEARER,
    };
    match &discovered.metadata.grant_types_supported {
        Some(listed) if !listed.iter().any(|g| g == name) => Err(fail!(
            Unsupported,
            "the authorization server {:?} does not offer the {name} grant (it lists {listed:?})",
            discovered.issuer
        )),
        _ => Ok(()),
    }
}

/// The DPoP key for tokens from `discovered`'s server, when DPoP is used with it.
fn dpop_prover(
    settings: &OAuthSettings,
    discovered: &Discovered,
) -> Result<Option<Arc<DpopKey>>, AuthFailure> {
    if settings.dpop == DpopPolicy::Off {
        return Ok(None);
    }
    match &discovered.metadata.dpop_signing_alg_values_supported {
        Some(algs) if dpop::supported(algs) => Ok(Some(Arc::new(DpopKey::generate()?))),
        _ => Ok(None),
    }
}

/// Runs `work` while polling the HTTP client's connection futures (nothing is spawned).
pub(crate) async fn drive<F: std::future::Future>(
    work: F,
    mut tasks: tokio::sync::mpsc::UnboundedReceiver<BackgroundTask>,
) -> F::Output {
    use futures_util::StreamExt;
    let mut running = futures_util::stream::FuturesUnordered::new();
    tokio::pin!(work);
    loop {
        tokio::select! {
            out = &mut work => return out,
            Some(task) = tasks.recv() => running.push(task),
            Some(()) = running.next(), if !running.is_empty() => {}
        }
    }
}

fn auth_error(failure: AuthFailure, server: &Arc<str>) -> Error {
    Error::new(Kind::Auth(failure)).with_server(server)
}

/// See [`super::login`].
pub(crate) async fn login(spec: &ServerSpec) -> Result<LoginOutcome, Error> {
    let url = Url::parse(spec.url().trim())
        .map_err(|err| Error::config(format!("server `{}`: invalid url: {err}", spec.name())))?;
    let (client, tasks) =
        HttpClient::new().map_err(|message| Error::new(Kind::Spawn { message }))?;
    let Some(session) = AuthSession::new(spec, &client, &url) else {
        return Err(Error::config(format!(
            "server `{}` does not use OAuth (no authorizer, or an Authorization header is configured)",
            spec.name()
        )));
    };
    let name = Arc::clone(&spec.name);
    let work = async {
        // Ask the server as a client would: its 401 says where to authorize and what scope.
        let probe = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": crate::protocol::types::LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "sidewire", "version": env!("CARGO_PKG_VERSION") }
            }
        });
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        let answer = session
            .http
            .send(
                Method::POST,
                &url,
                headers,
                bytes::Bytes::from(probe.to_string()),
            )
            .await
            .map_err(|err| fail!(Discovery, "asking the server failed: {err}"))?;
        let status = answer.status;
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(LoginOutcome::NotRequired);
        }
        let challenge = Challenge::from_headers(&answer.headers);
        let _flight = session.flight.lock().await;
        session.load()?;
        session.authorize_locked(&challenge, None, false).await?;
        let state = lock(&session.state);
        Ok(LoginOutcome::Authorized {
            issuer: state
                .discovered
                .as_ref()
                .map(|d| d.issuer.clone())
                .unwrap_or_default(),
            scope: state.tokens.as_ref().and_then(|t| t.scope.clone()),
        })
    };
    // The messages name URLs derived from the server's: shown without its secrets.
    let secrets = spec.url_secrets.with_url(&url);
    drive(work, tasks).await.map_err(|failure: AuthFailure| {
        let _ = AuthErrorKind::Store;
        let message = secrets.scrub(&failure.message).into_owned();
        auth_error(AuthFailure { message, ..failure }, &name)
    })
}
