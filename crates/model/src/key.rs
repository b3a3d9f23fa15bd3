//! Canonical group keys (`mcp__…`, `ext__…`) and display labels. The only place keys are made.
//! The allowlist builds on this module (a group entry becomes a key through [`GroupKey`], and the
//! longest pinnable name, `MAX_GROUP_NAME_CHARS`, is defined here); this module uses nothing of
//! the allowlist's.

use sha2::{Digest, Sha256};
use std::fmt;

/// The longest `ext__` key.
pub const MAX_GROUP_KEY_CHARS: usize = 64;

/// The longest display label; longer names are shortened for display only.
pub const MAX_LABEL_CHARS: usize = 48;

/// The longest server or extension name a group entry accepts (after an optional prefix).
pub const MAX_GROUP_NAME_CHARS: usize = 64;

const EXT_PREFIX: &str = "ext__";
const MCP_PREFIX: &str = "mcp__";
/// Readable slug characters kept in a hashed `ext__` key: 64 - `ext__` - `_` - 10 hex digits.
const MAX_SLUG_CHARS: usize = MAX_GROUP_KEY_CHARS - EXT_PREFIX.len() - 1 - 10;

/// Bytes of SHA-256 in the key of a namespace that is no server's (16 hex digits).
const FOREIGN_HASH_BYTES: usize = 8;
/// Readable slug characters kept in such a key: 64 (a pinnable server name) - `_` - 16 hex digits.
const MAX_MCP_SLUG_CHARS: usize = MAX_GROUP_NAME_CHARS - 1 - 2 * FOREIGN_HASH_BYTES;

/// The two kinds of group, treated identically by the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupKind {
    /// An MCP server, identified by Pi's namespace.
    Mcp,
    /// An extension, identified by the name derived from its `sourceInfo`.
    Extension,
}

/// The canonical key of a group: `mcp__<server>` (Pi's namespace) or `ext__<slug>`.
///
/// Keys are deterministic: the same name gives the same key on every machine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKey {
    kind: GroupKind,
    key: String,
}

impl GroupKey {
    /// The key of the MCP server `server` as Pi spells its namespace: `mcp__` + the name with
    /// every `-` replaced by `_`. Never truncated; case is kept (Pi folds only `-`).
    pub fn for_mcp_server(server: &str) -> GroupKey {
        GroupKey {
            kind: GroupKind::Mcp,
            key: format!("{MCP_PREFIX}{}", server.replace('-', "_")),
        }
    }

    /// The key of an MCP namespace as Pi reports it (`ToolInfo.namespace.name`). Returns `None`
    /// unless it is `mcp__` followed by at least one character.
    ///
    /// - When the rest is a valid server name (`[A-Za-z0-9_-]+`, Pi's rule), the key is Pi's
    ///   spelling of that server: `mcp__` + the name with every `-` as `_`. Pi's own namespaces
    ///   are already in this form and are kept as they are.
    /// - Any other namespace (a third-party adapter's `mcp__dev.radius`) is no server's
    ///   namespace, so it gets a key of its own and is never folded onto the key of a server it
    ///   resembles (`mcp__dev_radius`): `mcp__` + a readable slug (ASCII letters and digits as
    ///   they are, every other run of characters one `_`, trimmed, at most 47 characters; `ns`
    ///   when nothing is left) + `_` + the first 16 hex digits of SHA-256 over the namespace's
    ///   UTF-8 bytes exactly as reported (prefix included, nothing folded). The key is canonical
    ///   and at most 64 characters after `mcp__`, so it can be pinned by its text. It could equal
    ///   a server's key only for a server named exactly `<slug>_<those 16 hex digits>`.
    pub fn for_mcp_namespace(namespace: &str) -> Option<GroupKey> {
        let rest = namespace
            .strip_prefix(MCP_PREFIX)
            .filter(|r| !r.is_empty())?;
        let valid_server_name = rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if valid_server_name {
            return Some(GroupKey::for_mcp_server(rest));
        }
        let digest = Sha256::digest(namespace.as_bytes());
        let hash = hex::encode(&digest[..FOREIGN_HASH_BYTES]);
        let mut slug = mcp_slug(rest);
        if slug.is_empty() {
            slug.push_str("ns");
        }
        Some(GroupKey {
            kind: GroupKind::Mcp,
            key: format!("{MCP_PREFIX}{slug}_{hash}"),
        })
    }

    /// The key of the extension named `name` (the full derived name, never a shortened label).
    ///
    /// - A name that is canonical up to case and `-`/`_` (only ASCII letters, digits, `-` and
    ///   `_`), and whose key fits in 64 characters, is used as is: lowercased, `-` as `_`
    ///   (`Pi-Web` → `ext__pi_web`).
    /// - Any other name keeps a readable slug (ASCII letters and digits lowercased, every other
    ///   run of characters one `_`, trimmed, at most 48 characters) followed by `_` and the first
    ///   10 hex digits of a hash; a name with no ASCII letter or digit becomes `ext__ext_<hash>`.
    ///
    /// **Hash input:** SHA-256 over the UTF-8 bytes of the full name after ASCII letters are
    /// lowercased and every `-` is replaced by `_` (nothing else is changed, no prefix, no
    /// terminator). Folding first keeps names that are equal up to case and `-`/`_` in one group,
    /// as the canonical form does; `@acme/pi-web` and `acme-pi-web` still differ.
    pub fn for_extension(name: &str) -> GroupKey {
        let canonical = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        let key = if canonical && EXT_PREFIX.len() + name.len() <= MAX_GROUP_KEY_CHARS {
            format!("{EXT_PREFIX}{}", fold(name))
        } else {
            let digest = Sha256::digest(fold(name).as_bytes());
            let hash = &hex::encode(&digest[..5]);
            let slug = slug(name);
            if slug.is_empty() {
                format!("{EXT_PREFIX}ext_{hash}")
            } else {
                format!("{EXT_PREFIX}{slug}_{hash}")
            }
        };
        GroupKey {
            kind: GroupKind::Extension,
            key,
        }
    }

    /// Rebuilds a key from its canonical text (as stored in a ledger or a settings file), or
    /// `None` when the text is not a canonical key: `mcp__` + `[A-Za-z0-9_]+`, or `ext__` +
    /// `[a-z0-9_]+` of at most 64 characters in all.
    pub fn from_canonical(text: &str) -> Option<GroupKey> {
        if let Some(rest) = text.strip_prefix(MCP_PREFIX) {
            let ok =
                !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            return ok.then(|| GroupKey {
                kind: GroupKind::Mcp,
                key: text.to_owned(),
            });
        }
        if let Some(rest) = text.strip_prefix(EXT_PREFIX) {
            let ok = !rest.is_empty()
                && text.len() <= MAX_GROUP_KEY_CHARS
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            return ok.then(|| GroupKey {
                kind: GroupKind::Extension,
                key: text.to_owned(),
            });
        }
        None
    }

    /// An extension key from an allowlist entry's text after `ext__` (already validated as
    /// `[A-Za-z0-9_-]+`): lowercased, `-` as `_`. It may be longer than any real key; such an
    /// entry stays saved and grants nothing.
    pub(crate) fn extension_entry(rest: &str) -> GroupKey {
        GroupKey {
            kind: GroupKind::Extension,
            key: format!("{EXT_PREFIX}{}", fold(rest)),
        }
    }

    /// Whether this is an MCP server or an extension.
    pub fn kind(&self) -> GroupKind {
        self.kind
    }

    /// The canonical text, e.g. `mcp__dev_radius` or `ext__notes`.
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// For an MCP key, the namespace's server part (`dev_radius` for `mcp__dev_radius`).
    pub fn mcp_server_part(&self) -> Option<&str> {
        match self.kind {
            GroupKind::Mcp => Some(&self.key[MCP_PREFIX.len()..]),
            GroupKind::Extension => None,
        }
    }
}

impl fmt::Display for GroupKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

/// ASCII letters lowercased and `-` replaced by `_`; everything else kept.
fn fold(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '-' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// The readable part of a foreign namespace's key: ASCII letters and digits as they are (MCP keys
/// keep case, as Pi's namespaces do), every other run of characters one `_`, trimmed.
fn mcp_slug(rest: &str) -> String {
    let mut out = String::with_capacity(rest.len().min(MAX_MCP_SLUG_CHARS));
    let mut pending_sep = false;
    for c in rest.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_sep && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            out.push(c);
        } else {
            pending_sep = true;
        }
        if out.len() >= MAX_MCP_SLUG_CHARS {
            break;
        }
    }
    out.truncate(MAX_MCP_SLUG_CHARS);
    while out.ends_with('_') {
        out.pop();
    }
    out
}

fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(MAX_SLUG_CHARS));
    let mut pending_sep = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_sep && !out.is_empty() {
                out.push('_');
            }
            pending_sep = false;
            out.push(c.to_ascii_lowercase());
        } else {
            pending_sep = true;
        }
        if out.len() >= MAX_SLUG_CHARS {
            break;
        }
    }
    out.truncate(MAX_SLUG_CHARS);
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// A name made safe and short for display: control, bidi and other invisible formatting
/// characters become `?`, and a name longer than [`MAX_LABEL_CHARS`] is cut to 47 characters and
/// `…`. Only for display: keys always come from the full name.
pub fn bound_label(name: &str) -> String {
    let clean = name
        .chars()
        .map(|c| if is_unsafe_for_display(c) { '?' } else { c });
    let count = name.chars().count();
    if count <= MAX_LABEL_CHARS {
        clean.collect()
    } else {
        let mut out: String = clean.take(MAX_LABEL_CHARS - 1).collect();
        out.push('…');
        out
    }
}

fn is_unsafe_for_display(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        assert_eq!(GroupKey::for_extension("notes").as_str(), "ext__notes");
        assert_eq!(GroupKey::for_extension("Pi-Web").as_str(), "ext__pi_web");
        let acme = GroupKey::for_extension("@acme/pi-web");
        assert!(acme.as_str().starts_with("ext__acme_pi_web_"));
        assert_eq!(acme.as_str().len(), "ext__acme_pi_web_".len() + 10);
        assert_ne!(acme, GroupKey::for_extension("acme-pi-web"));
        let cjk = GroupKey::for_extension("笔记");
        assert!(cjk.as_str().starts_with("ext__ext_"));
        assert_eq!(cjk.as_str().len(), "ext__ext_".len() + 10);
        assert_eq!(
            GroupKey::for_mcp_server("dev-radius").as_str(),
            "mcp__dev_radius"
        );
        assert_eq!(
            GroupKey::for_mcp_server("mcp__prod").as_str(),
            "mcp__mcp__prod"
        );
        assert_eq!(GroupKey::for_mcp_server("ext__x").as_str(), "mcp__ext__x");
    }

    #[test]
    fn hash_input_is_the_folded_full_name() {
        let digest = Sha256::digest("@acme/pi_web".as_bytes());
        let expected = format!("ext__acme_pi_web_{}", hex::encode(&digest[..5]));
        assert_eq!(GroupKey::for_extension("@ACME/pi-web").as_str(), expected);
    }

    #[test]
    fn long_canonical_names_are_hashed_to_fit() {
        let name = "a".repeat(60);
        let key = GroupKey::for_extension(&name);
        assert_eq!(key.as_str().len(), 64);
        assert!(key
            .as_str()
            .starts_with(&format!("ext__{}_", "a".repeat(48))));
        let fits = "b".repeat(59);
        assert_eq!(
            GroupKey::for_extension(&fits).as_str(),
            format!("ext__{fits}")
        );
    }

    #[test]
    fn canonical_round_trip() {
        for key in [
            GroupKey::for_extension("@acme/pi-web"),
            GroupKey::for_mcp_server("Dev-Radius"),
        ] {
            assert_eq!(GroupKey::from_canonical(key.as_str()), Some(key.clone()));
        }
        assert_eq!(GroupKey::from_canonical("ext__Upper"), None);
        assert_eq!(GroupKey::from_canonical("mcp__"), None);
        assert_eq!(GroupKey::from_canonical("mcp__a-b"), None);
        assert_eq!(GroupKey::from_canonical("notes"), None);
        assert_eq!(
            GroupKey::for_mcp_namespace("mcp__Dev")
                .unwrap()
                .mcp_server_part(),
            Some("Dev")
        );
        assert_eq!(GroupKey::for_mcp_namespace("mcp__"), None);
        // Found by fuzzing: a third-party namespace with other characters still gets a canonical
        // key (of its own: see `a_foreign_namespace_gets_a_key_of_its_own`).
        for odd in ["mcp__a-b", "mcp__笔记", "mcp__a b\u{7}"] {
            let key = GroupKey::for_mcp_namespace(odd).unwrap();
            assert_eq!(
                GroupKey::from_canonical(key.as_str()),
                Some(key.clone()),
                "{odd}"
            );
        }
        assert_eq!(
            GroupKey::for_mcp_namespace("mcp__a-b").unwrap().as_str(),
            "mcp__a_b"
        );
    }

    /// Issue 18, item 7: a foreign namespace whose name is not a valid server name is never
    /// folded onto the key of the server whose name it resembles.
    #[test]
    fn a_foreign_namespace_gets_a_key_of_its_own() {
        let server = GroupKey::for_mcp_server("dev-radius");
        let foreign = GroupKey::for_mcp_namespace("mcp__dev.radius").unwrap();
        assert_ne!(foreign, server);
        assert_ne!(
            foreign,
            GroupKey::for_mcp_namespace("mcp__dev_radius").unwrap()
        );
        assert_ne!(
            foreign,
            GroupKey::for_mcp_namespace("mcp__dev radius").unwrap()
        );
        // Deterministic, documented: the readable slug, `_`, and 16 hex digits of SHA-256 over
        // the namespace as Pi reports it.
        let digest = Sha256::digest("mcp__dev.radius".as_bytes());
        assert_eq!(
            foreign.as_str(),
            format!("mcp__dev_radius_{}", hex::encode(&digest[..8]))
        );
        assert_eq!(
            GroupKey::for_mcp_namespace("mcp__dev.radius"),
            Some(foreign.clone())
        );
        // It is canonical and can be pinned by its key.
        assert_eq!(
            GroupKey::from_canonical(foreign.as_str()),
            Some(foreign.clone())
        );
        // A valid server name after `mcp__` is Pi's spelling of that server (`-` folds to `_`).
        assert_eq!(GroupKey::for_mcp_namespace("mcp__dev-radius"), Some(server));
        // Without an ASCII letter or digit, and very long names, still get keys that fit.
        let cjk = GroupKey::for_mcp_namespace("mcp__笔记").unwrap();
        assert!(cjk.as_str().starts_with("mcp__ns_"), "{cjk}");
        let long = GroupKey::for_mcp_namespace(&format!("mcp__{}.x", "a".repeat(200))).unwrap();
        assert!(long.as_str().len() <= "mcp__".len() + crate::MAX_GROUP_NAME_CHARS);
    }

    #[test]
    fn labels_are_bounded_and_made_safe() {
        assert_eq!(bound_label("notes"), "notes");
        let long = "x".repeat(60);
        let label = bound_label(&long);
        assert_eq!(label.chars().count(), MAX_LABEL_CHARS);
        assert!(label.ends_with('…'));
        assert_eq!(bound_label("a\u{202E}b\u{7}c"), "a?b?c");
    }
}
