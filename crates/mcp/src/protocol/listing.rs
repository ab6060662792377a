//! Listing with pagination: follow `nextCursor` to the end, but never forever, and never past
//! the listing's caps.
//!
//! Servers have been seen to ignore pagination (clients missing tools past page one), to
//! return a cursor that never advances (clients looping for ever), and to offer more than a
//! host can hold (a million tools over 100 legal pages). This walks every page, stops at a
//! cursor it has already sent, after [`MAX_PAGES`] pages, or when the next item would pass
//! the item cap ([`ServerSpec::max_list_items`](crate::ServerSpec::max_list_items)) or the
//! byte cap ([`ServerSpec::max_list_bytes`](crate::ServerSpec::max_list_bytes), counted as the
//! kept items' JSON text as received), and keeps what it got, in server order, with a warning
//! and a [`Truncation`] the caller can show.
//!
//! Each item is borrowed from the page's frame as raw JSON text and decoded straight into its
//! type ([`Collector::page`]): an item that does not decode, or repeats an earlier item's
//! identity, is dropped alone with a warning (the first [`WARNED_DROPS`] of a listing; the rest
//! are counted in one summary) instead of failing the listing.

use std::collections::HashSet;
use std::fmt;

use sidewire_jsonrpc::{CallOptions, Peer};
use tokio::time::Instant;

use crate::Error;
use crate::error::Kind;
use crate::protocol::methods::{ListMethod, Page, PageParams};
use crate::protocol::modern;
use crate::protocol::session::Shared;

/// The most pages one listing fetches.
pub(crate) const MAX_PAGES: usize = 100;

/// How many dropped items of one listing get a warning of their own.
pub(crate) const WARNED_DROPS: usize = 10;

/// One of the lists a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum List {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
    /// `skills/list` (the skills extension; listed on request, never cached).
    Skills,
    /// `tasks/list` (listed on request, never cached).
    Tasks,
}

impl List {
    /// The list method.
    pub fn method(self) -> &'static str {
        match self {
            List::Tools => "tools/list",
            List::Prompts => "prompts/list",
            List::Resources => "resources/list",
            List::ResourceTemplates => "resources/templates/list",
            List::Skills => "skills/list",
            List::Tasks => "tasks/list",
        }
    }
}

impl fmt::Display for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            List::Tools => "tools",
            List::Prompts => "prompts",
            List::Resources => "resources",
            List::ResourceTemplates => "resource templates",
            List::Skills => "skills",
            List::Tasks => "tasks",
        })
    }
}

/// The limit that ended a listing before the server's last page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListLimit {
    /// The item cap ([`ServerSpec::max_list_items`](crate::ServerSpec::max_list_items)).
    Items(usize),
    /// The byte cap ([`ServerSpec::max_list_bytes`](crate::ServerSpec::max_list_bytes)).
    Bytes(usize),
    /// The page cap (100 pages).
    Pages(usize),
}

impl fmt::Display for ListLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListLimit::Items(cap) => write!(f, "the cap of {cap} items"),
            ListLimit::Bytes(cap) => write!(f, "the cap of {cap} bytes"),
            ListLimit::Pages(cap) => write!(f, "the cap of {cap} pages"),
        }
    }
}

/// A listing a limit cut short: the server offered more than was kept. What was kept is the
/// first items in server order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Truncation {
    /// Which list.
    pub list: List,
    /// The limit it reached.
    pub limit: ListLimit,
    /// How many items it kept.
    pub kept: usize,
}

impl fmt::Display for Truncation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cut short at {}: kept the first {}",
            self.list, self.limit, self.kept
        )
    }
}

/// What one listing got: the items in server order, and why it stopped early if it did.
#[derive(Debug)]
pub(crate) struct Listing<T> {
    pub(crate) items: Vec<T>,
    pub(crate) truncation: Option<Truncation>,
    /// The smallest `ttlMs` its pages carried (modern era), if any did.
    pub(crate) ttl: Option<std::time::Duration>,
}

/// The items of one listing as its pages arrive, within its caps. Holds at most `max_items`
/// items whose texts add up to at most `max_bytes`, and one key per item.
pub(crate) struct Collector<'s, M: ListMethod> {
    server: &'s str,
    max_items: usize,
    max_bytes: usize,
    items: Vec<M::Item>,
    keys: HashSet<String>,
    bytes: usize,
    dropped: usize,
    cut: Option<ListLimit>,
    ttl: Option<std::time::Duration>,
}

impl<'s, M: ListMethod> Collector<'s, M> {
    pub(crate) fn new(server: &'s str, max_items: usize, max_bytes: usize) -> Self {
        Collector {
            server,
            max_items,
            max_bytes,
            items: Vec::new(),
            keys: HashSet::new(),
            bytes: 0,
            dropped: 0,
            cut: None,
            ttl: None,
        }
    }

    /// Takes one page's result text. Returns the cursor of the next page to fetch, or `None`
    /// when the listing ends here: the server sent no cursor (or an empty one), or a cap was
    /// reached (then [`finish`](Collector::finish) reports it).
    ///
    /// # Errors
    ///
    /// The serde error when the page itself (not one of its items) does not decode.
    pub(crate) fn page(&mut self, text: &str) -> Result<Option<String>, serde_json::Error> {
        let page: Page<'_> = serde_json::from_str(text)?;
        // A ttl that is not a non-negative integer is ignored, as if absent.
        if let Some(ttl) = page.ttl_ms.and_then(|raw| raw.get().parse::<u64>().ok()) {
            let ttl = std::time::Duration::from_millis(ttl);
            self.ttl = Some(self.ttl.map_or(ttl, |kept| kept.min(ttl)));
        }
        for raw in page.items {
            let text = raw.get();
            let item: M::Item = match serde_json::from_str(text) {
                Ok(item) => item,
                Err(err) => {
                    self.drop_item(None, &err.to_string());
                    continue;
                }
            };
            let key = M::key(&item);
            if self.keys.contains(key) {
                self.drop_item(Some(key), "a duplicate");
                continue;
            }
            // The next item that would be kept does not fit: the server offered more than the
            // caps allow, and nothing after it is kept either (what is kept stays a prefix).
            if self.items.len() >= self.max_items {
                self.cut = Some(ListLimit::Items(self.max_items));
            } else if self.bytes + text.len() > self.max_bytes {
                self.cut = Some(ListLimit::Bytes(self.max_bytes));
            }
            if self.cut.is_some() {
                return Ok(None);
            }
            self.keys.insert(key.to_owned());
            self.bytes += text.len();
            self.items.push(item);
        }
        let next = page.next_cursor.filter(|cursor| !cursor.is_empty());
        // Full, with the server announcing another page: it has more to offer than fits, and
        // the page is not fetched just to confirm it.
        if next.is_some() && self.items.len() >= self.max_items {
            self.cut = Some(ListLimit::Items(self.max_items));
            return Ok(None);
        }
        Ok(next)
    }

    /// Ends the listing early at `limit` (the page cap), unless a cap already ended it.
    pub(crate) fn stop(&mut self, limit: ListLimit) {
        self.cut.get_or_insert(limit);
    }

    /// The items kept so far.
    pub(crate) fn items(&self) -> &[M::Item] {
        &self.items
    }

    /// The bytes of item text kept so far.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// What the listing kept, with its truncation (warned here).
    pub(crate) fn finish(self) -> Listing<M::Item> {
        let server = self.server;
        if self.dropped > WARNED_DROPS {
            tracing::warn!(
                server,
                method = M::METHOD,
                dropped = self.dropped,
                "dropped list items that do not decode or repeat an identity (only the first {WARNED_DROPS} were logged)"
            );
        }
        let truncation = self.cut.map(|limit| Truncation {
            list: M::KIND,
            limit,
            kept: self.items.len(),
        });
        if let Some(truncation) = &truncation {
            tracing::warn!(
                server,
                method = M::METHOD,
                cap = %truncation.limit,
                kept = truncation.kept,
                bytes = self.bytes,
                "a listing reached its cap: kept the first items and stopped fetching"
            );
        }
        Listing {
            items: self.items,
            truncation,
            ttl: self.ttl,
        }
    }

    fn drop_item(&mut self, key: Option<&str>, why: &str) {
        self.dropped += 1;
        if self.dropped <= WARNED_DROPS {
            // The key is the server's text, of any size.
            let key = key.map(crate::text::peer);
            tracing::warn!(
                server = self.server,
                method = M::METHOD,
                key,
                why,
                "dropped a list item"
            );
        }
    }
}

/// Every item of a listing, in server order, within `deadline` and the server's caps.
pub(crate) async fn list_all<M: ListMethod>(
    shared: &Shared,
    peer: &Peer,
    (max_items, max_bytes): (usize, usize),
    deadline: Instant,
) -> Result<Listing<M::Item>, Error> {
    let server: &str = &shared.name;
    let mut collector = Collector::<M>::new(server, max_items, max_bytes);
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = PageParams {
            cursor: cursor.take(),
        };
        let timeout = deadline.saturating_duration_since(Instant::now());
        let raw = modern::call(
            shared,
            peer,
            M::METHOD,
            M::METHOD,
            &params,
            CallOptions::timeout(timeout),
        )
        .await?;
        let next = collector.page(raw.get()).map_err(|err| {
            Error::new(Kind::InvalidResponse(format!(
                "the {} result does not decode: {err}",
                M::METHOD
            )))
        })?;
        // The frame goes before the next one comes: a listing holds one page at a time.
        drop(raw);
        let Some(next) = next else {
            return Ok(collector.finish());
        };
        if !cursors.insert(next.clone()) {
            let cursor = crate::text::peer(&next);
            tracing::warn!(server, method = M::METHOD, %cursor, items = collector.items().len(), "the server repeated a pagination cursor; stopping with what it sent so far");
            return Ok(collector.finish());
        }
        cursor = Some(next);
    }
    collector.stop(ListLimit::Pages(MAX_PAGES));
    Ok(collector.finish())
}
