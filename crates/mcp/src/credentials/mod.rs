//! What a server's spec carries to authorize over HTTP: the [`Authorizer`] (where tokens are
//! kept, who signs in, the client's identity), the per-server [`OAuthSettings`], and the token
//! stores. Data and storage only: the authorization itself (discovery, the flows, refreshing)
//! is `crate::auth`'s, which re-exports everything here. This module sits below the spec,
//! which holds these types; nothing in it talks to a network.

pub(crate) mod file_store;
pub(crate) mod settings;
pub(crate) mod store;
pub(crate) mod types;

use sidewire_jsonrpc::lock;

use self::store::{MemoryStore, TokenStore};

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;

/// How long the loopback listener waits for the browser's redirect by default.
pub const DEFAULT_CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// How long one request to an authorization server (or for metadata) may take by default.
pub const DEFAULT_AUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The name the client registers under by default.
pub const DEFAULT_CLIENT_NAME: &str = "sidewire";

/// Shows a person where to sign in. The CLI prints the URL and opens a browser.
pub trait AuthorizationPrompt: Send + Sync + 'static {
    /// Server `server` needs the person to open `url` and sign in; the redirect comes back to
    /// the loopback listener, which is already listening. Must return at once (it must not
    /// wait for the person).
    fn open(&self, server: &str, url: &Url);

    /// Shows the person where to sign in, as [`open`](AuthorizationPrompt::open) does, and
    /// resolves, with why, if they decline: the authorization then fails at once with
    /// [`Error::is_login_required`](crate::Error::is_login_required) instead of waiting for
    /// the redirect until the callback timeout. Default: [`open`](AuthorizationPrompt::open),
    /// and never declined.
    fn open_until_declined(
        &self,
        server: &str,
        url: &Url,
    ) -> futures_util::future::BoxFuture<'static, String> {
        self.open(server, url);
        Box::pin(std::future::pending())
    }

    /// Whether someone can sign in to `server` now; asked before a new authorization starts
    /// (`false` fails it at once with [`Error::is_login_required`](crate::Error::is_login_required),
    /// as [`Interaction::Never`] does). Must return at once. Default: always.
    fn can_open(&self, server: &str) -> bool {
        let _ = server;
        true
    }
}

/// Who completes a new authorization when a server needs one.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Interaction {
    /// Nobody: stored tokens are used and refreshed, but a new authorization fails with
    /// [`Error::is_login_required`](crate::Error::is_login_required).
    #[default]
    Never,
    /// The client follows the authorization URL itself, as a browser that is already signed
    /// in would: for authorization servers that grant without a person (tests, the
    /// conformance suite).
    Headless,
    /// A person, shown the URL through the prompt. When this happens while a server connects,
    /// the wait counts against its startup timeout: run [`login`](crate::auth::login) first, or raise
    /// [`ServerSpec::startup_timeout`](crate::ServerSpec::startup_timeout).
    Prompt(Arc<dyn AuthorizationPrompt>),
}

impl fmt::Debug for Interaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Interaction::Never => "Never",
            Interaction::Headless => "Headless",
            Interaction::Prompt(_) => "Prompt",
        })
    }
}

impl PartialEq for Interaction {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Interaction::Never, Interaction::Never)
            | (Interaction::Headless, Interaction::Headless) => true,
            (Interaction::Prompt(a), Interaction::Prompt(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// What a connection needs to authorize with its server: where tokens are kept, who signs in,
/// and the client's identity. Cheap to clone; one is usually shared by every server of a host.
///
/// Give it to a server with [`ServerSpec::authorizer`](crate::ServerSpec::authorizer); a
/// server without one treats a 401 as an error ([`Error::is_http`](crate::Error::is_http),
/// status 401).
#[derive(Clone)]
pub struct Authorizer {
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) interaction: Interaction,
    pub(crate) callback_timeout: Duration,
    pub(crate) request_timeout: Duration,
    pub(crate) client_name: Arc<str>,
    pub(crate) client_metadata_url: Option<Arc<str>>,
    /// Every token and secret this authorizer has handled, for redaction.
    secrets: Arc<Mutex<Vec<String>>>,
}

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorizer")
            .field("store", &self.store)
            .field("interaction", &self.interaction)
            .field("callback_timeout", &self.callback_timeout)
            .field("client_name", &self.client_name)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Authorizer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.secrets, &other.secrets)
    }
}

impl Authorizer {
    /// Whether a new authorization can be completed ([`Interaction`] other than
    /// [`Interaction::Never`]).
    pub fn is_interactive(&self) -> bool {
        !matches!(self.interaction, Interaction::Never)
    }

    /// An authorizer keeping its tokens in `store`, with nobody to sign in
    /// ([`Interaction::Never`]).
    pub fn new(store: impl TokenStore) -> Self {
        Authorizer::with_store(Arc::new(store))
    }

    /// The same, for a store that is already shared.
    pub fn with_store(store: Arc<dyn TokenStore>) -> Self {
        Authorizer {
            store,
            interaction: Interaction::Never,
            callback_timeout: DEFAULT_CALLBACK_TIMEOUT,
            request_timeout: DEFAULT_AUTH_REQUEST_TIMEOUT,
            client_name: DEFAULT_CLIENT_NAME.into(),
            client_metadata_url: None,
            secrets: Arc::default(),
        }
    }

    /// An authorizer whose tokens live in memory only.
    pub fn in_memory() -> Self {
        Authorizer::new(MemoryStore::new())
    }

    /// Who completes a new authorization.
    pub fn interaction(mut self, interaction: Interaction) -> Self {
        self.interaction = interaction;
        self
    }

    /// How long the loopback listener waits for the redirect
    /// ([`DEFAULT_CALLBACK_TIMEOUT`]).
    pub fn callback_timeout(mut self, timeout: Duration) -> Self {
        self.callback_timeout = timeout;
        self
    }

    /// How long one request to an authorization server may take
    /// ([`DEFAULT_AUTH_REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The `client_name` used in Dynamic Client Registration ([`DEFAULT_CLIENT_NAME`]).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into().into();
        self
    }

    /// The URL of this client's Client ID Metadata Document, used as its client id where an
    /// authorization server supports that (`client_id_metadata_document_supported`).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into().into());
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TokenStore> {
        &self.store
    }

    /// Remembers a credential so [`redact`](Authorizer::redact) hides it.
    pub(crate) fn remember_secret(&self, secret: &str) {
        if secret.len() < 4 {
            return;
        }
        let mut secrets = lock(&self.secrets);
        if !secrets.iter().any(|known| known == secret) {
            secrets.push(secret.to_owned());
            // Longest first, so a secret that contains another is replaced whole.
            secrets.sort_by_key(|known| std::cmp::Reverse(known.len()));
        }
    }

    /// `text` with every credential this authorizer has handled replaced by `[REDACTED]`.
    pub fn redact(&self, text: &str) -> String {
        let secrets = lock(&self.secrets);
        let mut out = text.to_owned();
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), sidewire_process::REDACTED);
            }
        }
        out
    }
}
