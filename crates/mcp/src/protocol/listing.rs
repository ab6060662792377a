//! Listing with pagination: follow `nextCursor` to the end, but never forever.
//!
//! Servers have been seen to ignore pagination (clients missing tools past page one) and to
//! return a cursor that never advances (clients looping for ever). This walks every page,
//! stops at a cursor it has already sent or after [`MAX_PAGES`] pages with a warning, and keeps
//! what it got. Items that do not decode, or repeat an earlier item's identity, are dropped
//! with a warning instead of failing the listing.

use std::collections::HashSet;

use sidewire_jsonrpc::{CallOptions, Peer};
use tokio::time::Instant;

use crate::Error;
use crate::error::Kind;
use crate::protocol::methods::{ListMethod, Page, PageParams};
use crate::protocol::session::Shared;

/// The most pages one listing fetches.
pub(crate) const MAX_PAGES: usize = 100;

/// Every item of a listing, in server order, within `deadline`.
pub(crate) async fn list_all<M: ListMethod>(
    peer: &Peer,
    shared: &Shared,
    deadline: Instant,
) -> Result<Vec<M::Item>, Error> {
    let server: &str = &shared.name;
    let mut items = Vec::new();
    let mut keys = HashSet::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = PageParams {
            cursor: cursor.clone(),
        };
        let timeout = deadline.saturating_duration_since(Instant::now());
        let raw = peer
            .call(M::METHOD, Some(&params), CallOptions::timeout(timeout))
            .await
            .map_err(|err| Error::rpc(M::METHOD, err))?;
        let page: Page<M::Item> = raw.decode().map_err(|err| {
            Error::new(Kind::InvalidResponse(format!(
                "the {} result does not decode: {err}",
                M::METHOD
            )))
        })?;
        for item in page.items {
            match item.0 {
                Ok(item) => {
                    if keys.insert(M::key(&item).to_owned()) {
                        items.push(item);
                    } else {
                        tracing::warn!(
                            server,
                            method = M::METHOD,
                            key = M::key(&item),
                            "dropped a duplicate list item"
                        );
                    }
                }
                Err(err) => {
                    tracing::warn!(server, method = M::METHOD, %err, "dropped a list item that does not decode");
                }
            }
        }
        match page.next_cursor {
            // A missing cursor ends the listing; an empty one is taken the same way, since no
            // server means "start again" by it.
            None => return Ok(items),
            Some(next) if next.is_empty() => return Ok(items),
            Some(next) => {
                if !cursors.insert(next.clone()) {
                    tracing::warn!(server, method = M::METHOD, cursor = %next, items = items.len(), "the server repeated a pagination cursor; stopping with what it sent so far");
                    return Ok(items);
                }
                cursor = Some(next);
            }
        }
    }
    tracing::warn!(
        server,
        method = M::METHOD,
        pages = MAX_PAGES,
        items = items.len(),
        "stopped a listing at the page cap"
    );
    Ok(items)
}
