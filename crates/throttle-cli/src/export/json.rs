//! `--json`: the report as pretty-printed JSON (layout documented in docs/json.md).

use anyhow::Context;
use serde::Serialize;

/// Any serialisable value as pretty JSON with a trailing newline.
pub fn to_string(value: &impl Serialize) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(value).context("encoding results as JSON")?;
    text.push('\n');
    Ok(text)
}
