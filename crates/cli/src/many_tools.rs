//! `sidewire __mcp-server --many-tools N`: a stdio MCP server that offers `N` realistic tools
//! (a description and an `inputSchema` of four described properties, about 800 bytes each)
//! over pages of `--page-size` tools, for the tests and the benchmark of listing memory.
//!
//! The server is `sidewire_mcp_server::serve_paged_tools` (shared with the `scale_mcp` bench):
//! it builds each page as it is asked for and holds no list, so its own memory stays small
//! whatever `N` is: a peak RSS measured over sidewire and its children is sidewire's.

use std::io::BufWriter;
use std::process::ExitCode;

use serde_json::{Value, json};

/// One synthetic tool, about 800 bytes of JSON.
fn tool(i: usize) -> Value {
    let property = |name: &str, kind: &str, what: &str| {
        (
            name.to_owned(),
            json!({"type": kind, "description": format!("The {what} the operation works on, in the forms the server accepts.")}),
        )
    };
    let properties: serde_json::Map<String, Value> = [
        property("path", "string", "file or directory path"),
        property("limit", "integer", "largest number of entries"),
        property(
            "recursive",
            "boolean",
            "choice to descend into subdirectories",
        ),
        property("pattern", "string", "glob pattern of names"),
    ]
    .into_iter()
    .collect();
    json!({
        "name": format!("tool_{i:07}"),
        "description": format!("Synthetic tool number {i}: reads, filters and summarises entries under a path, as a real file-system tool would describe itself to a model."),
        "inputSchema": {"type": "object", "properties": properties, "required": ["path"]},
        "annotations": {"readOnlyHint": true},
    })
}

/// Serves until stdin ends.
pub(crate) fn serve(count: usize, page_size: usize) -> ExitCode {
    let stdin = std::io::stdin().lock();
    let stdout = BufWriter::new(std::io::stdout().lock());
    // A closed stdout ends the server as a closed stdin does.
    let _ =
        sidewire_mcp_server::serve_paged_tools(stdin, stdout, "many-tools", count, page_size, tool);
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tool_is_about_800_bytes() {
        let len = super::tool(1_234_567).to_string().len();
        assert!((700..=830).contains(&len), "{len}");
    }
}
