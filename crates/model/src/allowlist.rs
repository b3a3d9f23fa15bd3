//! Allowlist entries exactly as "Scoped allowlists" defines them. Persistence is names-only.

use crate::key::{GroupKey, MAX_GROUP_NAME_CHARS};
use crate::scope::Scope;
use std::fmt;

/// The longest tool name an allowlist accepts.
pub const MAX_TOOL_NAME_CHARS: usize = 128;

/// A validated tool allowlist entry: 1 to 128 characters, no whitespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolName(String);

impl ToolName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why an allowlist entry was refused. Names the rule, never echoes the entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowlistError {
    /// The entry is empty.
    #[error("the entry is empty")]
    Empty,
    /// A tool name longer than 128 characters.
    #[error("a tool name has at most {MAX_TOOL_NAME_CHARS} characters; this one has {chars}")]
    ToolNameTooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// A tool name with whitespace.
    #[error("a tool name cannot contain whitespace (found at character {position})")]
    ToolNameWhitespace {
        /// The 0-based character position of the first whitespace.
        position: usize,
    },
    /// A group entry with a character outside `[A-Za-z0-9_-]`.
    #[error(
        "a server or extension entry may contain only ASCII letters, digits, `-` and `_` \
         (character {position} is not one)"
    )]
    GroupInvalidCharacter {
        /// The 0-based character position of the first invalid character.
        position: usize,
    },
    /// `mcp__` or `ext__` with nothing after it.
    #[error("`{prefix}` must be followed by a name")]
    EmptyAfterPrefix {
        /// `mcp__` or `ext__`.
        prefix: &'static str,
    },
    /// A server (or extension) name longer than 64 characters: it cannot be pinned as a group.
    #[error(
        "a server or extension name has at most {MAX_GROUP_NAME_CHARS} characters; this one has \
         {chars}, so it cannot be pinned as a group"
    )]
    GroupNameTooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// A value that is not a string where an entry was expected.
    #[error("an entry must be a string")]
    NotAString,
    /// A tool name holding U+FFFD, which stands for text that is not valid Unicode (the settings
    /// reader reads a lone surrogate escape such as `"\ud800"` as U+FFFD): such an entry cannot
    /// be trusted to name the tool it was meant for.
    #[error(
        "a tool name cannot contain text that is not valid Unicode (character {position} is \
         U+FFFD)"
    )]
    NotUnicode {
        /// The 0-based character position of the first U+FFFD.
        position: usize,
    },
}

/// The character that stands for text that is not valid Unicode.
pub(crate) const REPLACEMENT: char = '\u{FFFD}';

/// Validates a tool allowlist entry.
pub fn parse_tool_entry(entry: &str) -> Result<ToolName, AllowlistError> {
    if entry.is_empty() {
        return Err(AllowlistError::Empty);
    }
    if let Some(position) = entry.chars().position(|c| c == REPLACEMENT) {
        return Err(AllowlistError::NotUnicode { position });
    }
    if let Some(position) = entry.chars().position(char::is_whitespace) {
        return Err(AllowlistError::ToolNameWhitespace { position });
    }
    let chars = entry.chars().count();
    if chars > MAX_TOOL_NAME_CHARS {
        return Err(AllowlistError::ToolNameTooLong { chars });
    }
    Ok(ToolName(entry.to_owned()))
}

/// Validates a group allowlist entry and returns the group it names.
///
/// - `mcp__NAME` is exclusively a canonical MCP namespace key (`mcp__prod` is the server `prod`).
/// - `ext__NAME` is exclusively a canonical extension key, stored lowercase with `-` as `_`.
/// - Any other entry is an MCP server name (`dev-radius` and `dev_radius` are the same server);
///   an extension is pinned only by its `ext__` key. A raw server literally named `mcp__prod` is
///   `mcp__mcp__prod`.
///
/// `NAME` is `[A-Za-z0-9_-]{1,64}`.
pub fn parse_group_entry(entry: &str) -> Result<GroupKey, AllowlistError> {
    if entry.is_empty() {
        return Err(AllowlistError::Empty);
    }
    let (prefix, rest) = if let Some(rest) = entry.strip_prefix("mcp__") {
        ("mcp__", rest)
    } else if let Some(rest) = entry.strip_prefix("ext__") {
        ("ext__", rest)
    } else {
        ("", entry)
    };
    if rest.is_empty() {
        return Err(AllowlistError::EmptyAfterPrefix { prefix });
    }
    if let Some(i) = rest
        .chars()
        .position(|c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(AllowlistError::GroupInvalidCharacter {
            position: prefix.len() + i,
        });
    }
    if rest.len() > MAX_GROUP_NAME_CHARS {
        return Err(AllowlistError::GroupNameTooLong { chars: rest.len() });
    }
    Ok(match prefix {
        "ext__" => GroupKey::extension_entry(rest),
        _ => GroupKey::for_mcp_server(rest),
    })
}

/// One scope's two lists, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopedAllowlist {
    /// Always-available tools, by name.
    pub tools: Vec<ToolName>,
    /// Always-available groups (MCP servers and extensions), by canonical key.
    pub groups: Vec<GroupKey>,
}

impl ScopedAllowlist {
    /// Whether the tool name is listed.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.as_str() == name)
    }

    /// Whether the group key is listed.
    pub fn has_group(&self, key: &GroupKey) -> bool {
        self.groups.contains(key)
    }
}

/// The global and project allowlists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlists {
    /// From `<agentDir>/pi-context-decisions/settings.json`.
    pub global: ScopedAllowlist,
    /// From `<cwd>/.pi/pi-context-decisions.json`.
    pub project: ScopedAllowlist,
}

impl Allowlists {
    /// The lists that apply to items of `scope`.
    pub fn for_scope(&self, scope: Scope) -> &ScopedAllowlist {
        match scope {
            Scope::Global => &self.global,
            Scope::Project => &self.project,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_entries() {
        assert_eq!(parse_tool_entry("web_fetch").unwrap().as_str(), "web_fetch");
        assert_eq!(
            parse_tool_entry(&"t".repeat(128)).unwrap().as_str().len(),
            128
        );
        assert_eq!(parse_tool_entry(""), Err(AllowlistError::Empty));
        assert_eq!(
            parse_tool_entry(&"t".repeat(129)),
            Err(AllowlistError::ToolNameTooLong { chars: 129 })
        );
        assert_eq!(
            parse_tool_entry("a b"),
            Err(AllowlistError::ToolNameWhitespace { position: 1 })
        );
        assert_eq!(
            parse_tool_entry("a\tb"),
            Err(AllowlistError::ToolNameWhitespace { position: 1 })
        );
    }

    #[test]
    fn group_entries() {
        let k = |s: &str| parse_group_entry(s).map(|k| k.as_str().to_owned());
        assert_eq!(k("dev-radius").unwrap(), "mcp__dev_radius");
        assert_eq!(k("dev_radius").unwrap(), "mcp__dev_radius");
        assert_eq!(k("mcp__prod").unwrap(), "mcp__prod");
        assert_eq!(k("mcp__dev-radius").unwrap(), "mcp__dev_radius");
        assert_eq!(k("mcp__mcp__prod").unwrap(), "mcp__mcp__prod");
        assert_eq!(k("mcp__ext__x").unwrap(), "mcp__ext__x");
        assert_eq!(k("ext__notes").unwrap(), "ext__notes");
        assert_eq!(k("ext__Pi-Web").unwrap(), "ext__pi_web");
        assert_eq!(k("Prod").unwrap(), "mcp__Prod", "MCP keys keep case");
        assert_eq!(k(&"s".repeat(64)).unwrap().len(), 69);
        assert_eq!(k(&format!("mcp__{}", "s".repeat(64))).unwrap().len(), 69);
        assert_eq!(k(&format!("ext__{}", "s".repeat(64))).unwrap().len(), 69);
        assert_eq!(
            k(&"s".repeat(65)),
            Err(AllowlistError::GroupNameTooLong { chars: 65 })
        );
        assert_eq!(
            k("mcp__"),
            Err(AllowlistError::EmptyAfterPrefix { prefix: "mcp__" })
        );
        assert_eq!(
            k("ext__"),
            Err(AllowlistError::EmptyAfterPrefix { prefix: "ext__" })
        );
        assert_eq!(
            k("bad.name"),
            Err(AllowlistError::GroupInvalidCharacter { position: 3 })
        );
        assert_eq!(
            k("ext__@acme"),
            Err(AllowlistError::GroupInvalidCharacter { position: 5 })
        );
        assert_eq!(k(""), Err(AllowlistError::Empty));
    }

    #[test]
    fn errors_never_echo_the_entry() {
        for bad in [
            "sk-SECRET with space",
            "sk-SECRET.bad",
            &"sk-SECRET".repeat(20),
        ] {
            let e = parse_group_entry(bad).unwrap_err().to_string();
            assert!(!e.contains("SECRET"), "{e}");
            if let Err(e) = parse_tool_entry(bad) {
                assert!(!e.to_string().contains("SECRET"));
            }
        }
    }

    /// Moved from the key's `a_foreign_namespace_gets_a_key_of_its_own`: a foreign namespace's
    /// key, and a very long one, can be pinned by their key.
    #[test]
    fn a_foreign_namespace_key_can_be_pinned_by_its_key() {
        let foreign = GroupKey::for_mcp_namespace("mcp__dev.radius").unwrap();
        assert_eq!(
            crate::parse_group_entry(foreign.as_str()),
            Ok(foreign.clone())
        );
        let long = GroupKey::for_mcp_namespace(&format!("mcp__{}.x", "a".repeat(200))).unwrap();
        assert_eq!(crate::parse_group_entry(long.as_str()), Ok(long.clone()));
    }
}
