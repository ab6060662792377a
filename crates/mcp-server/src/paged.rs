//! A blocking stdio MCP server that offers many tools over pages, for the tests and benchmarks
//! that measure listing: the CLI's `__mcp-server --many-tools N` and the `scale_mcp` bench's
//! minimal fixture.
//!
//! It builds each page as it is asked for and holds no list, so its own memory stays small
//! whatever the count: a peak RSS measured over a client and its children is the client's.

use std::io::{BufRead, Write};
use std::ops::Range;

use serde_json::{Value, json};

/// Serves `count` tools, `page_size` a page (at least 1), until `input` ends: `initialize`
/// (echoing the version the client offers), `ping`, `tools/list` (the cursor is the index of the
/// page's first tool) and `tools/call` of any tool (a text block `ok`); anything else with an
/// id is answered `-32601`, and a line that is not a request with an id is skipped. `tool(i)`
/// builds the `i`th tool when its page is written; `name` is the `serverInfo` name.
///
/// # Errors
///
/// The first failure to write to `output`.
pub fn serve_paged_tools(
    input: impl BufRead,
    mut output: impl Write,
    name: &str,
    count: usize,
    page_size: usize,
    tool: impl Fn(usize) -> Value,
) -> std::io::Result<()> {
    let page_size = page_size.max(1);
    for line in input.lines() {
        let Ok(line) = line else { break };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue;
        };
        let result = match request["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": request["params"]["protocolVersion"]
                    .as_str()
                    .unwrap_or(sidewire_mcp::LATEST_PROTOCOL_VERSION),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "1"},
            }),
            "tools/list" => {
                let start: usize = (request["params"]["cursor"].as_str())
                    .and_then(|cursor| cursor.parse().ok())
                    .unwrap_or(0)
                    .min(count);
                let end = start.saturating_add(page_size).min(count);
                let next = (end < count).then(|| end.to_string());
                write_page(&mut output, &id, start..end, next.as_deref(), &tool)?;
                continue;
            }
            "ping" => json!({}),
            "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
            _ => {
                let error = json!({"code": -32601, "message": "method not found"});
                writeln!(
                    output,
                    "{}",
                    json!({"jsonrpc": "2.0", "id": id, "error": error})
                )?;
                output.flush()?;
                continue;
            }
        };
        writeln!(
            output,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        )?;
        output.flush()?;
    }
    Ok(())
}

/// Writes one `tools/list` response, each tool serialized as it goes (the page is never held).
fn write_page(
    out: &mut impl Write,
    id: &Value,
    tools: Range<usize>,
    next: Option<&str>,
    tool: &impl Fn(usize) -> Value,
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    /// The answers to `requests`, one line each, from a server of 5 tools, 2 a page.
    fn answers(requests: &[Value]) -> Vec<Value> {
        let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let mut output = Vec::new();
        super::serve_paged_tools(
            input.as_bytes(),
            &mut output,
            "t",
            5,
            2,
            |i| json!({"name": format!("tool_{i}"), "inputSchema": {"type": "object"}}),
        )
        .unwrap();
        let text = String::from_utf8(output).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn pages_follow_the_cursor_to_the_last_tool() {
        let list = |id: u32, cursor: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {"cursor": cursor}});
        let got = answers(&[
            list(1, Value::Null),
            list(2, json!("2")),
            list(3, json!("4")),
        ]);
        let names = |answer: &Value| -> Vec<String> {
            let tools = answer["result"]["tools"].as_array().unwrap();
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(names(&got[0]), ["tool_0", "tool_1"]);
        assert_eq!(got[0]["result"]["nextCursor"], "2");
        assert_eq!(names(&got[2]), ["tool_4"]);
        assert_eq!(got[2]["result"]["nextCursor"], Value::Null);
    }

    #[test]
    fn calls_answer_ok_and_other_methods_are_not_found() {
        let got = answers(&[
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tool_0"}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
        ]);
        assert_eq!(got.len(), 2, "a notification is not answered: {got:?}");
        assert_eq!(got[0]["result"]["content"][0]["text"], "ok");
        assert_eq!(got[1]["error"]["code"], -32601);
    }
}
