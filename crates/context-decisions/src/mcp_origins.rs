//! Which MCP servers the `mcp.json` files define, and where (names only), as a session captures
//! them at its start; the `mcp-origins` command shows the same read (the program's `origins`).
//!
//! Resolving Pi's agent directory from the environment happens here, at the edge; the reader
//! takes paths as arguments.

pub use pcd_config_reader::{read_mcp_origins, McpOrigins, PiVersion};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The environment variable Pi reads its agent directory from.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// Why the agent directory could not be resolved. Never echoes the variable's value; the
/// sentences are ui-text's ([`pcd_ui_text::agent_dir_error`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentDirError {
    /// `~` is needed but there is no home folder (`HOME` unset, empty or relative).
    #[error(
        "{}",
        pcd_ui_text::agent_dir_error(pcd_ui_text::AgentDirProblem::NoHome)
    )]
    NoHome,
    /// `PI_CODING_AGENT_DIR` is a `file://` URL that is not a local file path.
    #[error(
        "{}",
        pcd_ui_text::agent_dir_error(pcd_ui_text::AgentDirProblem::BadFileUrl)
    )]
    BadFileUrl,
}

/// Pi's `getAgentDir()`: `PI_CODING_AGENT_DIR` when set and not empty (`~` and `~/x` expanded to
/// the home folder, a `file://` URL converted to a path, anything else as it is), else
/// `<home>/.pi/agent`. `env_value` and `home` are passed in so this stays testable.
pub fn resolve_agent_dir(
    env_value: Option<&OsStr>,
    home: Option<&Path>,
) -> Result<PathBuf, AgentDirError> {
    // A relative home (`HOME=.`, `HOME=repo`) would put the agent folder, its settings and the
    // vector cache's secret in whatever folder Pi runs in: it counts as no home.
    let home = || {
        home.filter(|h| h.is_absolute())
            .map(Path::to_path_buf)
            .ok_or(AgentDirError::NoHome)
    };
    let Some(value) = env_value.filter(|v| !v.is_empty()) else {
        return Ok(home()?.join(".pi").join("agent"));
    };
    let bytes = value.as_encoded_bytes();
    if bytes == b"~" {
        return home();
    }
    if let Some(rest) = value.to_str().and_then(|s| s.strip_prefix("~/")) {
        return Ok(home()?.join(rest));
    }
    if bytes.starts_with(b"file://") {
        return file_url_to_path(value.to_str().ok_or(AgentDirError::BadFileUrl)?);
    }
    Ok(PathBuf::from(value))
}

/// The capture a session makes at `session_start`: the names-only read only when the user
/// approved it (`tools.readMcpConfig`), the project file only when Pi says the project is
/// trusted (`None`, an unavailable trust accessor, means untrusted). Without approval nothing is
/// read and every built-in MCP namespace keeps the Global fallback (an empty capture).
pub fn capture(
    settings: &pcd_model::Settings,
    agent_dir: &Path,
    cwd: &Path,
    project_trusted: Option<bool>,
    version: PiVersion,
) -> McpOrigins {
    if !settings.tools.read_mcp_config {
        return McpOrigins::default();
    }
    read_mcp_origins(agent_dir, cwd, project_trusted == Some(true), version)
}

/// Node's `fileURLToPath` on POSIX, for the URLs an agent directory can be: `file:///p` or
/// `file://localhost/p`, percent-decoded, query and fragment dropped; an encoded `/` or another
/// host is refused, as Node refuses it.
fn file_url_to_path(url: &str) -> Result<PathBuf, AgentDirError> {
    let rest = &url["file://".len()..];
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return Err(AgentDirError::BadFileUrl);
    }
    let path = rest.split(['?', '#']).next().unwrap_or("");
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b'/') => return Err(AgentDirError::BadFileUrl),
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => {}
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let text = String::from_utf8(out).map_err(|_| AgentDirError::BadFileUrl)?;
    Ok(PathBuf::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn agent_dir_follows_pi() {
        let home = Path::new("/home/u");
        let r = |v: Option<&str>| resolve_agent_dir(v.map(OsStr::new), Some(home));
        assert_eq!(r(None).unwrap(), PathBuf::from("/home/u/.pi/agent"));
        assert_eq!(r(Some("")).unwrap(), PathBuf::from("/home/u/.pi/agent"));
        assert_eq!(r(Some("~")).unwrap(), PathBuf::from("/home/u"));
        assert_eq!(r(Some("~/x/y")).unwrap(), PathBuf::from("/home/u/x/y"));
        assert_eq!(r(Some("~x")).unwrap(), PathBuf::from("~x"));
        assert_eq!(r(Some("rel/dir")).unwrap(), PathBuf::from("rel/dir"));
        assert_eq!(r(Some("/abs")).unwrap(), PathBuf::from("/abs"));
        assert_eq!(
            r(Some("file:///tmp/a%20b")).unwrap(),
            PathBuf::from("/tmp/a b")
        );
        assert_eq!(
            r(Some("file://localhost/tmp/x?q#f")).unwrap(),
            PathBuf::from("/tmp/x")
        );
        assert_eq!(r(Some("file://remote/x")), Err(AgentDirError::BadFileUrl));
        assert_eq!(r(Some("file:///a%2Fb")), Err(AgentDirError::BadFileUrl));
        assert_eq!(resolve_agent_dir(None, None), Err(AgentDirError::NoHome));
        // Issue 32, item 3: a relative or empty home put the settings (and the vector cache's
        // secret) in whatever folder Pi runs in. It counts as no home, with `~` too.
        for home in ["", ".", "repo", "./home/u"] {
            let home = Some(Path::new(home));
            assert_eq!(resolve_agent_dir(None, home), Err(AgentDirError::NoHome));
            let tilde = OsString::from("~/agent");
            assert_eq!(
                resolve_agent_dir(Some(&tilde), home),
                Err(AgentDirError::NoHome)
            );
        }
        assert_eq!(
            resolve_agent_dir(Some(&OsString::from("/set")), None).unwrap(),
            PathBuf::from("/set")
        );
    }

    #[test]
    fn capture_needs_approval_and_trust() {
        let dir = std::env::temp_dir().join(format!("pcd-capture-{}", std::process::id()));
        let agent = dir.join("agent");
        let cwd = dir.join("project");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(cwd.join(".pi")).unwrap();
        std::fs::write(
            agent.join("mcp.json"),
            br#"{"mcpServers":{"g":{"command":"x"}}}"#,
        )
        .unwrap();
        std::fs::write(
            cwd.join(".pi/mcp.json"),
            br#"{"mcpServers":{"p":{"command":"x"}}}"#,
        )
        .unwrap();
        let names = |o: &McpOrigins| -> Vec<String> {
            o.servers().iter().map(|s| s.name().to_string()).collect()
        };
        let mut settings = pcd_model::Settings::default();
        let v = PiVersion::NEWEST;
        assert_eq!(
            capture(&settings, &agent, &cwd, Some(true), v),
            McpOrigins::default()
        );
        settings.tools.read_mcp_config = true;
        assert_eq!(
            names(&capture(&settings, &agent, &cwd, Some(true), v)),
            ["g", "p"]
        );
        assert_eq!(
            names(&capture(&settings, &agent, &cwd, Some(false), v)),
            ["g"]
        );
        assert_eq!(names(&capture(&settings, &agent, &cwd, None, v)), ["g"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
