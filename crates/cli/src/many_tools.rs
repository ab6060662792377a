//! `sidewire __mcp-server --many-tools N`: a stdio MCP server that offers `N` realistic tools
//! (a description and an `inputSchema` of four described properties, about 800 bytes each)
//! over pages of `--page-size` tools, for the tests and the benchmark of listing memory.
//!
//! It builds each page as it is asked for and holds no list, so its own memory stays small
//! whatever `N` is: a peak RSS measured over sidewire and its children is sidewire's.

use std::io::{BufRead, BufWriter, Write};
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

/// Writes one tools/list response, each tool serialised as it goes (the page is never held).
fn write_page(
    out: &mut impl Write,
    id: &Value,
    tools: std::ops::Range<usize>,
    next: Option<&str>,
) -> std::io::Result<()> {
    write!(out, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":["#)?;
    for (n, i) in tools.enumerate() {
        if n > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &tool(i))?;
    }
    writeln!(out, r#"],"nextCursor":{}}}}}"#, json!(next))?;
    out.flush()
}

/// Serves until stdin ends.
pub(crate) fn serve(count: usize, page_size: usize) -> ExitCode {
    let page_size = page_size.max(1);
    let stdin = std::io::stdin().lock();
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue;
        };
        let result = match request["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": request["params"]["protocolVersion"].as_str().unwrap_or(sidewire_mcp::LATEST_PROTOCOL_VERSION),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "many-tools", "version": "1"},
            }),
            "tools/list" => {
                let start: usize = (request["params"]["cursor"].as_str())
                    .and_then(|cursor| cursor.parse().ok())
                    .unwrap_or(0)
                    .min(count);
                let end = (start + page_size).min(count);
                let next = (end < count).then(|| end.to_string());
                let _ = write_page(&mut stdout, &id, start..end, next.as_deref());
                continue;
            }
            "ping" => json!({}),
            _ => {
                let error = json!({"code": -32601, "message": "method not found"});
                let _ = writeln!(
                    stdout,
                    "{}",
                    json!({"jsonrpc": "2.0", "id": id, "error": error})
                );
                let _ = stdout.flush();
                continue;
            }
        };
        let _ = writeln!(
            stdout,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        );
        let _ = stdout.flush();
    }
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
