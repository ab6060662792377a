//! VS Code's `.vscode/mcp.json`: its `servers` entries have the `mcpServers` shape (read by
//! [`crate::mcp_servers`]); this reads its `inputs[]`, the questions `${input:ID}` refers to.

use serde_json::{Map, Value};

use crate::error::Error;
use crate::types::ConfigInput;
use crate::values::{expected, object, optional_bool, optional_string};

/// The `inputs` of the document (none when absent). Each is `{"type": "promptString", "id",
/// "description", "password", "default"}`; another `type` (VS Code's `pickString`, `command`)
/// is an error naming it, since sidewire cannot answer it.
pub(crate) fn inputs(top: &Map<String, Value>) -> Result<Vec<ConfigInput>, Error> {
    let Some(value) = top.get("inputs").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = value else {
        return Err(expected("inputs", "an array", value));
    };
    let mut inputs: Vec<ConfigInput> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("inputs[{i}]");
        let members = object(item, &path)?;
        let field = |member: &str| format!("{path}.{member}");
        let id = optional_string(members, "id", &field("id"))?
            .filter(|id| !id.trim().is_empty())
            .ok_or_else(|| {
                Error::invalid(format!("{}: an input needs a non-empty `id`", field("id")))
            })?;
        match optional_string(members, "type", &field("type"))? {
            None | Some("promptString") => {}
            Some(other) => {
                return Err(Error::invalid(format!(
                    "{}: input {id} is of type {other:?}; only \"promptString\" can be answered",
                    field("type")
                )));
            }
        }
        if inputs.iter().any(|input| input.id == id) {
            return Err(Error::invalid(format!(
                "{}: the input id {id} is used twice",
                field("id")
            )));
        }
        inputs.push(ConfigInput {
            id: id.to_owned(),
            description: optional_string(members, "description", &field("description"))?
                .unwrap_or_default()
                .to_owned(),
            password: optional_bool(members, "password", &field("password"))?.unwrap_or(false),
            default: optional_string(members, "default", &field("default"))?.map(str::to_owned),
        });
    }
    Ok(inputs)
}
