//! Listing caps: a listing keeps at most `max_list_items` items and `max_list_bytes` bytes of
//! item text, stops fetching there, and reports the cut as a typed `Truncation`; a malformed
//! item is dropped alone; a refresh after list_changed keeps to the same caps.

use serde_json::json;
use sidewire_mcp::{Client, List, ListLimit, NoHandler, ServerSpec};

use crate::support::*;

fn spec() -> ServerSpec {
    ServerSpec::stdio("mock", "unused")
}

fn pages(pages: &[&[&str]]) -> MockState {
    let state = MockState::default();
    *lock(&state.tool_pages) = (pages.iter())
        .map(|page| page.iter().map(|name| (*name).to_owned()).collect())
        .collect();
    state
}

fn names(tools: &[sidewire_mcp::Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_str()).collect()
}

/// The client's truncations as (list, limit, kept).
fn cuts(client: &Client) -> Vec<(List, ListLimit, usize)> {
    (client.truncations().iter())
        .map(|t| (t.list, t.limit, t.kept))
        .collect()
}

#[tokio::test]
async fn a_listing_of_exactly_the_item_cap_is_whole() {
    let state = pages(&[&["a", "b"], &["c"]]);
    let (client, mock) = mock_with(state, spec().max_list_items(3), NoHandler).await;
    let client = client.unwrap();
    let tools = within("a listing", client.list_tools()).await.unwrap();
    assert_eq!(names(&tools), ["a", "b", "c"]);
    assert_eq!(mock.state.count("tools/list"), 2);
    assert!(client.truncations().is_empty());
}

#[tokio::test]
async fn one_item_past_the_cap_is_cut_and_reported() {
    // The extra item on the same page.
    let state = pages(&[&["a", "b", "c", "d"]]);
    let (client, _mock) = mock_with(state, spec().max_list_items(3), NoHandler).await;
    let client = client.unwrap();
    let tools = within("a listing", client.list_tools()).await.unwrap();
    assert_eq!(names(&tools), ["a", "b", "c"]);
    assert_eq!(cuts(&client), [(List::Tools, ListLimit::Items(3), 3)]);
    // The extra item on a later page: that page is never fetched.
    let state = pages(&[&["a", "b", "c"], &["d"], &["e"]]);
    let (client, mock) = mock_with(state, spec().max_list_items(3), NoHandler).await;
    let client = client.unwrap();
    let tools = within("a listing", client.list_tools()).await.unwrap();
    assert_eq!(names(&tools), ["a", "b", "c"]);
    assert_eq!(mock.state.count("tools/list"), 1);
    assert_eq!(cuts(&client), [(List::Tools, ListLimit::Items(3), 3)]);
}

#[tokio::test]
async fn the_byte_cap_keeps_what_fits_in_server_order() {
    // Bytes are the items' text as sent: the mock sends each tool as serde_json writes it.
    let two = mock_tool("a").to_string().len() + mock_tool("b").to_string().len();
    let state = pages(&[&["a", "b"], &["c", "d"]]);
    let (client, mock) = mock_with(state, spec().max_list_bytes(two), NoHandler).await;
    let client = client.unwrap();
    let tools = within("a listing", client.list_tools()).await.unwrap();
    assert_eq!(names(&tools), ["a", "b"]);
    assert_eq!(mock.state.count("tools/list"), 2);
    assert_eq!(cuts(&client), [(List::Tools, ListLimit::Bytes(two), 2)]);
    // One byte more than everything: whole.
    let all = two + mock_tool("c").to_string().len() + mock_tool("d").to_string().len();
    let state = pages(&[&["a", "b"], &["c", "d"]]);
    let (client, _mock) = mock_with(state, spec().max_list_bytes(all), NoHandler).await;
    let client = client.unwrap();
    within("a listing", client.list_tools()).await.unwrap();
    assert_eq!(client.tools().len(), 4);
    assert!(client.truncations().is_empty());
}

#[tokio::test]
async fn a_refresh_after_list_changed_keeps_to_the_caps() {
    let state = pages(&[&["a"]]);
    let (client, mock) = mock_with(state, spec().max_list_items(2), NoHandler).await;
    let client = client.unwrap();
    within("a listing", client.list_tools()).await.unwrap();
    assert!(client.truncations().is_empty());

    let before = client.list_revision();
    *lock(&mock.state.tool_pages) = vec![vec!["x".into(), "y".into(), "z".into()]];
    mock.notify("notifications/tools/list_changed", None).await;
    let before = within("the refresh", client.list_changed_since(before)).await;
    assert_eq!(names(&client.tools()), ["x", "y"]);
    assert_eq!(cuts(&client), [(List::Tools, ListLimit::Items(2), 2)]);

    // A refresh that fits again clears the mark.
    *lock(&mock.state.tool_pages) = vec![vec!["q".into()]];
    mock.notify("notifications/tools/list_changed", None).await;
    within("the refresh", client.list_changed_since(before)).await;
    assert_eq!(names(&client.tools()), ["q"]);
    assert!(client.truncations().is_empty());
}

#[tokio::test]
async fn a_malformed_item_among_good_ones_is_dropped_alone() {
    let state = MockState::default();
    *lock(&state.tool_items) = Some(vec![
        vec![
            mock_tool("a"),
            json!({"name": 7}),
            json!("not an object"),
            json!({"description": "no name"}),
            mock_tool("a"),
        ],
        vec![
            mock_tool("b"),
            json!({"name": "c", "inputSchema": "any JSON"}),
        ],
    ]);
    let (client, _mock) = mock_with(state, spec().max_list_items(3), NoHandler).await;
    let client = client.unwrap();
    let tools = within("a listing", client.list_tools()).await.unwrap();
    // Dropped items count toward neither cap: the three good ones fit a cap of three.
    assert_eq!(names(&tools), ["a", "b", "c"]);
    assert_eq!(tools[2].input_schema.get(), r#""any JSON""#);
    assert!(client.truncations().is_empty());
}
