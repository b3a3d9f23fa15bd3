//! The `mcp-origins` command's output: which MCP servers the `mcp.json` files define, and where,
//! names only. Running it is the user's explicit approval of the read.

use context_decisions::mcp_origins::McpOrigins;
use serde_json::{json, Value};

/// The `--json` shape: `{"servers":[{"name","namespace","scope"}],"warnings":[{"file","code",
/// "server"?}]}`. `server` is present only for names that passed the name rule.
pub fn origins_json(origins: &McpOrigins) -> Value {
    let servers: Vec<Value> = origins
        .servers()
        .iter()
        .map(|s| {
            json!({
                "name": s.name().as_str(),
                "namespace": s.namespace().as_str(),
                "scope": s.scope().as_str(),
            })
        })
        .collect();
    let warnings: Vec<Value> = origins
        .warnings()
        .iter()
        .map(|w| {
            let mut o = serde_json::Map::new();
            o.insert("file".into(), w.file.as_str().into());
            o.insert("code".into(), w.code.as_str().into());
            if let Some(server) = &w.server {
                o.insert("server".into(), server.as_str().into());
            }
            Value::Object(o)
        })
        .collect();
    json!({ "servers": servers, "warnings": warnings })
}

/// A plain listing: one `name  namespace  scope` row per server, then each warning as a sentence
/// naming the file it is about; with no server and no warning, which files were looked for.
/// `global` and `project` are the files' paths (`project` only when it was read: trusted).
pub fn origins_text_for(
    origins: &McpOrigins,
    global: &std::path::Path,
    project: Option<&std::path::Path>,
) -> String {
    let mut out = pcd_ui_text::origins_report(&origin_rows(origins), &[]);
    if origins.servers().is_empty() && origins.warnings().is_empty() {
        out.push_str(&pcd_ui_text::no_mcp_servers(
            &global.display().to_string(),
            project.map(|p| p.display().to_string()).as_deref(),
        ));
    }
    for w in origins.warnings() {
        let path = match w.file {
            pcd_model::ConfigFile::Global => global.display().to_string(),
            pcd_model::ConfigFile::Project => {
                project.map(|p| p.display().to_string()).unwrap_or_default()
            }
        };
        out.push_str(&pcd_ui_text::origin_warning_sentence(
            &path,
            &pcd_ui_text::config_warning(w),
        ));
    }
    out
}

/// One `name  namespace  scope` row per server.
fn origin_rows(origins: &McpOrigins) -> Vec<pcd_ui_text::OriginRow> {
    origins
        .servers()
        .iter()
        .map(|s| pcd_ui_text::OriginRow {
            name: s.name().as_str().to_owned(),
            namespace: s.namespace().as_str().to_owned(),
            scope: s.scope().as_str(),
        })
        .collect()
}

/// A plain listing: one `name  namespace  scope` row per server, then one `warning` row per
/// warning (codes, not sentences).
pub fn origins_text(origins: &McpOrigins) -> String {
    let rows = origin_rows(origins);
    let warnings: Vec<pcd_ui_text::OriginWarning> = origins
        .warnings()
        .iter()
        .map(|w| pcd_ui_text::OriginWarning {
            file: w.file.as_str(),
            code: w.code.as_str(),
            server: w.server.as_ref().map(ToString::to_string),
        })
        .collect();
    pcd_ui_text::origins_report(&rows, &warnings)
}

/// Parses `--trusted`: `yes` or `no`.
pub fn parse_trusted(value: &str) -> Result<bool, String> {
    match value {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(pcd_ui_text::trusted_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use context_decisions::mcp_origins::PiVersion;

    #[test]
    fn json_shape() {
        let origins = pcd_config_reader::evaluate(
            pcd_config_reader::McpFileInput::Bytes(
                br#"{"mcpServers":{"dev-radius":{"command":"x","env":{"T":"sk-SECRET"}},"bad.name":{}}}"#,
            ),
            Some(pcd_config_reader::McpFileInput::Bytes(
                br#"{"mcpServers":{"docs":{"url":"https://sk-SECRET.example"},"docs2":{"enabled":false}}}"#,
            )),
            PiVersion::NEWEST,
        );
        let v = origins_json(&origins);
        assert_eq!(
            v,
            json!({
                "servers": [
                    {"name": "dev-radius", "namespace": "mcp__dev_radius", "scope": "global"},
                    {"name": "docs", "namespace": "mcp__docs", "scope": "project"},
                ],
                "warnings": [
                    {"file": "global", "code": "invalid_name"},
                    {"file": "project", "code": "override_without_base", "server": "docs2"},
                ]
            })
        );
        let text = origins_text(&origins);
        assert!(!v.to_string().contains("SECRET") && !text.contains("SECRET"));
        assert!(text.contains("dev-radius  mcp__dev_radius  global\n"));
        assert!(text.contains("warning  project  override_without_base  docs2\n"));
    }

    #[test]
    fn trusted_values() {
        assert_eq!(parse_trusted("yes"), Ok(true));
        assert_eq!(parse_trusted("no"), Ok(false));
        assert!(parse_trusted("true").is_err());
    }
}
