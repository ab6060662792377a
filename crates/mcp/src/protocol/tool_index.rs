//! Where each cached tool sits in the cached list, by name, so a call finds its tool (for its
//! schemas and its task support) in constant time instead of a scan of every listed tool: a
//! listing may keep `max_list_items` tools, and the scan ran on every `tools/call`.
//!
//! The table holds positions only (8 bytes and a control byte per tool), not copies of the
//! names, and hashes with a random SipHash key: the names are the server's, so one that
//! picks colliding names gets no more than a slow lookup of its own tools. Of two tools with
//! one name the first wins, as the scan had it.

use std::hash::{BuildHasher as _, RandomState};

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;

use crate::protocol::types::Tool;

/// The positions of one tool list, by name. Valid only with the list it was built from (the
/// cache replaces both under one lock).
#[derive(Default)]
pub(crate) struct ToolIndex {
    positions: HashTable<usize>,
    keys: RandomState,
}

impl ToolIndex {
    /// Indexes `tools`.
    pub(crate) fn new(tools: &[Tool]) -> Self {
        let keys = RandomState::new();
        let hash = |at: &usize| keys.hash_one(tools[*at].name.as_str());
        let mut positions = HashTable::with_capacity(tools.len());
        for (at, tool) in tools.iter().enumerate() {
            let name = tool.name.as_str();
            if let Entry::Vacant(slot) = positions.entry(
                keys.hash_one(name),
                |other: &usize| tools[*other].name == name,
                hash,
            ) {
                slot.insert(at);
            }
        }
        ToolIndex { positions, keys }
    }

    /// Where the tool named `name` is in `tools` (the list this index was built from).
    pub(crate) fn find(&self, tools: &[Tool], name: &str) -> Option<usize> {
        self.positions
            .find(self.keys.hash_one(name), |at| {
                tools.get(*at).is_some_and(|tool| tool.name == name)
            })
            .copied()
    }

    /// How many names it holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.positions.len()
    }
}

/// Minimal tools (a name and an object schema) with these names, for tests.
#[cfg(test)]
pub(crate) fn minimal_tools(names: &[&str]) -> Vec<Tool> {
    names
        .iter()
        .map(|name| {
            serde_json::from_value(serde_json::json!({
                "name": name, "inputSchema": {"type": "object"}
            }))
            .expect("a minimal tool")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<Tool> {
        minimal_tools(names)
    }

    #[test]
    fn finds_every_tool_where_it_is() {
        let names: Vec<String> = (0..1000).map(|n| format!("tool_{n}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let tools = tools(&names);
        let index = ToolIndex::new(&tools);
        for (at, name) in names.iter().enumerate() {
            assert_eq!(index.find(&tools, name), Some(at));
        }
        assert_eq!(index.find(&tools, "tool_1000"), None);
        assert_eq!(index.find(&tools, ""), None);
    }

    #[test]
    fn the_first_of_two_tools_with_one_name_wins() {
        let tools = tools(&["a", "b", "a", "c", "b"]);
        let index = ToolIndex::new(&tools);
        assert_eq!(index.len(), 3);
        assert_eq!(index.find(&tools, "a"), Some(0));
        assert_eq!(index.find(&tools, "b"), Some(1));
        assert_eq!(index.find(&tools, "c"), Some(3));
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let index = ToolIndex::default();
        assert_eq!(index.find(&[], "a"), None);
        assert_eq!(index.find(&tools(&["a"]), "a"), None);
    }
}
