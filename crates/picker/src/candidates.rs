//! Which tools or groups a round may ask about.
//!
//! Internal tools, tools and groups already available on the branch, and allowlisted ones are
//! never candidates (so they never cost a request); in `mcp` mode an extension tool with no
//! usable provenance name is left unfiltered. A tool whose name the ledger cannot record
//! ([`pcd_ledger::is_recordable_name`]) is never a candidate, in either mode: no round could
//! record deciding it, and one round holding it would fail whole.

use crate::text::bounded;
use pcd_ledger::is_recordable_name;
use pcd_model::{
    Allowlists, Classified, Classifier, GroupKey, GroupScope, Mode, ToolInfo, ToolKind,
};
use std::collections::{HashMap, HashSet};

/// The longest description a request carries, in characters. Enough for the one or two
/// sentences that say what a tool is for; the rest of a long description is usage detail.
pub const MAX_REQUEST_DESCRIPTION_CHARS: usize = 1024;
/// The longest tool name a request carries, in characters (allowlisted names are at most 128).
pub const MAX_REQUEST_NAME_CHARS: usize = 128;
/// How many member names a group candidate carries in `mcp` mode; the rest are only counted.
pub const MAX_REQUEST_MEMBER_NAMES: usize = 64;

/// What a candidate is: one tool (`tools` mode) or one group (`mcp` mode).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CandidateKey {
    /// A tool, by name.
    Tool(String),
    /// A group, by canonical key.
    Group(GroupKey),
}

impl CandidateKey {
    /// The tool name or the group key.
    pub fn as_str(&self) -> &str {
        match self {
            CandidateKey::Tool(name) => name,
            CandidateKey::Group(key) => key.as_str(),
        }
    }
}

/// One candidate with the bounded text a decision request may carry about it, and nothing else
/// (no schema, annotation, instruction or path is ever copied here).
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The tool or group.
    pub key: CandidateKey,
    /// The server or extension label (bounded to 48 characters by the model crate), or empty.
    pub label: String,
    /// `tools` mode: the tool's description; `mcp` mode: the MCP namespace description (none for
    /// extensions). Bounded to [`MAX_REQUEST_DESCRIPTION_CHARS`].
    pub description: String,
    /// The tool's name, or the group's first [`MAX_REQUEST_MEMBER_NAMES`] member names, each
    /// bounded to [`MAX_REQUEST_NAME_CHARS`].
    pub names: Vec<String>,
    /// Indices of its tools in the inventory, in inventory order.
    pub members: Vec<usize>,
    /// The characters of tool definitions it stands for (for the share withheld).
    pub definition_chars: usize,
}

impl Candidate {
    /// One tool as a candidate, with no label and no size: the `index`-th tool of an inventory,
    /// named `name` and described by `description` (for probes, tests and benches; a round's
    /// candidates come from [`candidates`], which bounds and measures them).
    pub fn tool(name: &str, description: &str, index: usize) -> Candidate {
        Candidate {
            key: CandidateKey::Tool(name.to_owned()),
            label: String::new(),
            description: description.to_owned(),
            names: vec![name.to_owned()],
            members: vec![index],
            definition_chars: 0,
        }
    }
}

/// What is already available on the branch (from the ledger), by name and by group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Available {
    /// Tool names made available.
    pub tools: HashSet<String>,
    /// Groups made available as a whole.
    pub groups: HashSet<GroupKey>,
}

impl Available {
    /// Whether the tool `name` (of `group`, if any) is available.
    pub fn has_tool(&self, name: &str, group: Option<&GroupKey>) -> bool {
        self.tools.contains(name) || group.is_some_and(|g| self.groups.contains(g))
    }
}

/// Why a tool that is not a candidate is available anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exempt {
    /// Built-in provenance.
    Internal,
    /// Already available on the branch.
    Available,
    /// Allowlisted by name, or its group is allowlisted (or promoted by a member in `mcp` mode).
    Allowlisted,
    /// `mcp` mode: an extension tool with no usable provenance name.
    Unfiltered,
    /// Its name cannot be recorded in the ledger: it is never decided, and left as Pi declared
    /// it.
    Unrecordable,
}

/// The candidates of an inventory, and why every other tool is exempt.
#[derive(Debug, Clone, Default)]
pub struct CandidateSet {
    /// Candidates in inventory order (a group at the position of its first tool).
    pub candidates: Vec<Candidate>,
    /// `(inventory index, reason)` for every tool that is no candidate's member.
    pub exempt: Vec<(usize, Exempt)>,
}

/// Forms the candidates of `tools` in `mode`.
///
/// `allowlists` are the global and project allowlists; an entry only grants tools and groups of
/// its own scope, and a member's allowlisting promotes its group in `mcp` mode unless the group's
/// members have mixed scopes.
pub fn candidates(
    tools: &[ToolInfo],
    classifier: &Classifier,
    mode: Mode,
    allowlists: &Allowlists,
    available: &Available,
) -> CandidateSet {
    let (classes, scopes) = classifier.classify_all(tools);
    classified_candidates(tools, (&classes, &scopes), mode, allowlists, available)
}

/// [`candidates`] of `tools` already classified: `classified` is what
/// [`Classifier::classify_all`] returns for them (a host that keeps it does not classify the
/// inventory again at every boundary).
pub fn classified_candidates(
    tools: &[ToolInfo],
    classified: (&[Classified], &HashMap<GroupKey, GroupScope>),
    mode: Mode,
    allowlists: &Allowlists,
    available: &Available,
) -> CandidateSet {
    let (classes, scopes) = classified;
    let group_pinned = |key: &GroupKey| {
        scopes
            .get(key)
            .and_then(|s| s.single())
            .is_some_and(|s| allowlists.for_scope(s).has_group(key))
    };
    let tool_pinned =
        |tool: &ToolInfo, c: &Classified| allowlists.for_scope(c.scope).has_tool(&tool.name);
    let mut set = CandidateSet::default();
    match mode {
        Mode::Tools => {
            for (i, (tool, c)) in tools.iter().zip(classes).enumerate() {
                let group = c.group.as_ref().map(|g| &g.key);
                let exempt = if c.kind.is_internal() {
                    Some(Exempt::Internal)
                } else if tool_pinned(tool, c) || group.is_some_and(group_pinned) {
                    Some(Exempt::Allowlisted)
                } else if !is_recordable_name(&tool.name) {
                    Some(Exempt::Unrecordable)
                } else if available.has_tool(&tool.name, group) {
                    Some(Exempt::Available)
                } else {
                    None
                };
                match exempt {
                    Some(e) => set.exempt.push((i, e)),
                    None => set.candidates.push(Candidate {
                        key: CandidateKey::Tool(tool.name.clone()),
                        label: c
                            .group
                            .as_ref()
                            .map(|g| g.label.clone())
                            .unwrap_or_default(),
                        description: bounded(&tool.description, MAX_REQUEST_DESCRIPTION_CHARS),
                        names: vec![bounded(&tool.name, MAX_REQUEST_NAME_CHARS)],
                        members: vec![i],
                        definition_chars: tool.definition_chars,
                    }),
                }
            }
        }
        Mode::Mcp => {
            // A group is promoted by any allowlisted member unless its scopes are mixed.
            let mut promoted: HashSet<&GroupKey> = HashSet::new();
            for (tool, c) in tools.iter().zip(classes) {
                if let Some(g) = &c.group {
                    let mixed = scopes.get(&g.key) == Some(&GroupScope::Mixed);
                    if !mixed && tool_pinned(tool, c) {
                        promoted.insert(&g.key);
                    }
                }
            }
            let mut position: HashMap<&GroupKey, usize> = HashMap::new();
            for (i, (tool, c)) in tools.iter().zip(classes).enumerate() {
                let pinned = tool_pinned(tool, c)
                    || c.group
                        .as_ref()
                        .is_some_and(|g| promoted.contains(&g.key) || group_pinned(&g.key));
                if !c.kind.is_internal() && !pinned && !is_recordable_name(&tool.name) {
                    set.exempt.push((i, Exempt::Unrecordable));
                    continue;
                }
                let Some(g) = c.group.as_ref().filter(|_| !c.kind.is_internal()) else {
                    let reason = if c.kind.is_internal() {
                        Exempt::Internal
                    } else {
                        debug_assert_eq!(c.kind, ToolKind::Unfiltered);
                        Exempt::Unfiltered
                    };
                    set.exempt.push((i, reason));
                    continue;
                };
                let exempt = if promoted.contains(&g.key) || group_pinned(&g.key) {
                    Some(Exempt::Allowlisted)
                } else if available.groups.contains(&g.key) {
                    Some(Exempt::Available)
                } else {
                    None
                };
                if let Some(e) = exempt {
                    set.exempt.push((i, e));
                    continue;
                }
                let slot = *position.entry(&g.key).or_insert_with(|| {
                    set.candidates.push(Candidate {
                        key: CandidateKey::Group(g.key.clone()),
                        label: g.label.clone(),
                        // Only an MCP server's namespace description travels; an extension
                        // group has none, whatever namespace its tools claim.
                        description: tool
                            .namespace
                            .as_ref()
                            .filter(|_| g.key.kind() == pcd_model::GroupKind::Mcp)
                            .and_then(|ns| ns.description.as_deref())
                            .map(|d| bounded(d, MAX_REQUEST_DESCRIPTION_CHARS))
                            .unwrap_or_default(),
                        names: Vec::new(),
                        members: Vec::new(),
                        definition_chars: 0,
                    });
                    set.candidates.len() - 1
                });
                let candidate = &mut set.candidates[slot];
                if candidate.names.len() < MAX_REQUEST_MEMBER_NAMES {
                    candidate
                        .names
                        .push(bounded(&tool.name, MAX_REQUEST_NAME_CHARS));
                }
                candidate.members.push(i);
                candidate.definition_chars += tool.definition_chars;
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_model::{parse_group_entry, parse_inventory, parse_tool_entry, Inventory};

    fn inventory() -> Inventory {
        parse_inventory(
            r#"[
            {"name": "read", "sourceInfo": {"path": "builtin:read", "source": "builtin"}},
            {"name": "mcp__gh__issue", "namespace": {"name": "mcp__gh", "description": "GitHub"},
             "sourceInfo": {"path": "builtin:mcp", "source": "builtin"}},
            {"name": "mcp__gh__pr", "namespace": {"name": "mcp__gh"},
             "sourceInfo": {"path": "builtin:mcp", "source": "builtin"}},
            {"name": "web_fetch", "description": "Fetch",
             "sourceInfo": {"path": "/a/index.ts", "source": "npm:@acme/pi-web@2.0.0", "scope": "user", "origin": "package"}},
            {"name": "web_search",
             "sourceInfo": {"path": "/a/index.ts", "source": "npm:@acme/pi-web@2.0.0", "scope": "user", "origin": "package"}},
            {"name": "notes_add",
             "sourceInfo": {"path": "/g/notes.ts", "source": "local", "scope": "user", "origin": "top-level"}},
            {"name": "notes_find",
             "sourceInfo": {"path": "/p/.pi/notes.ts", "source": "local", "scope": "project", "origin": "top-level"}},
            {"name": "mystery"}
        ]"#,
        )
        .unwrap()
    }

    fn keys(set: &CandidateSet) -> Vec<String> {
        set.candidates
            .iter()
            .map(|c| c.key.as_str().to_owned())
            .collect()
    }

    fn run(mode: Mode, allow: &Allowlists, available: &Available) -> CandidateSet {
        candidates(
            &inventory().tools,
            &Classifier::default(),
            mode,
            allow,
            available,
        )
    }

    #[test]
    fn tools_mode_makes_every_external_tool_a_candidate_and_never_an_internal_one() {
        let set = run(Mode::Tools, &Allowlists::default(), &Available::default());
        assert_eq!(
            keys(&set),
            [
                "mcp__gh__issue",
                "mcp__gh__pr",
                "web_fetch",
                "web_search",
                "notes_add",
                "notes_find",
                "mystery"
            ]
        );
        assert_eq!(set.exempt, vec![(0, Exempt::Internal)]);
        assert_eq!(set.candidates[0].label, "gh");
    }

    #[test]
    fn mcp_mode_makes_groups_and_leaves_nameless_extension_tools_unfiltered() {
        let set = run(Mode::Mcp, &Allowlists::default(), &Available::default());
        let k = keys(&set);
        assert_eq!(k.len(), 3, "{k:?}");
        assert_eq!(k[0], "mcp__gh");
        assert!(k[1].starts_with("ext__acme_pi_web_"));
        assert_eq!(k[2], "ext__notes");
        assert_eq!(set.candidates[0].names, ["mcp__gh__issue", "mcp__gh__pr"]);
        assert_eq!(set.candidates[0].description, "GitHub");
        assert_eq!(
            set.candidates[1].description, "",
            "member descriptions are never copied"
        );
        assert!(set.exempt.contains(&(7, Exempt::Unfiltered)));
    }

    #[test]
    fn allowlisting_one_member_promotes_its_group_in_mcp_mode_unless_scopes_are_mixed() {
        let mut allow = Allowlists::default();
        allow
            .global
            .tools
            .push(parse_tool_entry("web_fetch").unwrap());
        allow
            .global
            .tools
            .push(parse_tool_entry("notes_add").unwrap());
        let set = run(Mode::Mcp, &allow, &Available::default());
        let k = keys(&set);
        assert!(
            !k.iter().any(|k| k.starts_with("ext__acme")),
            "promoted: {k:?}"
        );
        assert!(
            k.contains(&"ext__notes".to_owned()),
            "mixed scopes never promote: {k:?}"
        );
        // In tools mode the pin covers the one tool only.
        let set = run(Mode::Tools, &allow, &Available::default());
        assert!(keys(&set).contains(&"web_search".to_owned()));
        assert!(!keys(&set).contains(&"web_fetch".to_owned()));
    }

    #[test]
    fn an_entry_only_grants_its_own_scope() {
        let mut allow = Allowlists::default();
        allow
            .global
            .tools
            .push(parse_tool_entry("notes_find").unwrap());
        allow
            .project
            .tools
            .push(parse_tool_entry("notes_add").unwrap());
        let set = run(Mode::Tools, &allow, &Available::default());
        assert!(keys(&set).contains(&"notes_find".to_owned()));
        assert!(keys(&set).contains(&"notes_add".to_owned()));
    }

    #[test]
    fn allowlisted_groups_and_available_tools_are_never_candidates() {
        let mut allow = Allowlists::default();
        allow.global.groups.push(parse_group_entry("gh").unwrap());
        let available = Available {
            tools: ["mystery".to_owned()].into(),
            groups: HashSet::new(),
        };
        let set = run(Mode::Tools, &allow, &available);
        let k = keys(&set);
        assert!(!k.iter().any(|k| k.starts_with("mcp__gh")), "{k:?}");
        assert!(!k.contains(&"mystery".to_owned()));
        assert!(set.exempt.contains(&(7, Exempt::Available)));
        let set = run(
            Mode::Mcp,
            &Allowlists::default(),
            &Available {
                tools: HashSet::new(),
                groups: [GroupKey::for_mcp_server("gh")].into(),
            },
        );
        assert!(!keys(&set).contains(&"mcp__gh".to_owned()));
    }

    /// Issue 18, finding 4: a name the ledger cannot record would fail every round it is in.
    #[test]
    fn a_tool_the_ledger_cannot_record_is_never_a_candidate() {
        let mut tools = inventory().tools;
        let extra = parse_inventory(
            r#"[
            {"name": "fetch page",
             "sourceInfo": {"path": "/g/notes.ts", "source": "local", "scope": "user", "origin": "top-level"}},
            {"name": "mcp__gh__two words", "namespace": {"name": "mcp__gh"},
             "sourceInfo": {"path": "builtin:mcp", "source": "builtin"}}
        ]"#,
        )
        .unwrap();
        tools.extend(extra.tools);
        let (fetch, gh) = (tools.len() - 2, tools.len() - 1);
        for mode in [Mode::Tools, Mode::Mcp] {
            let set = candidates(
                &tools,
                &Classifier::default(),
                mode,
                &Allowlists::default(),
                &Available::default(),
            );
            assert!(
                set.exempt.contains(&(fetch, Exempt::Unrecordable)),
                "{mode:?}"
            );
            assert!(set.exempt.contains(&(gh, Exempt::Unrecordable)), "{mode:?}");
            for c in &set.candidates {
                assert!(!c.members.contains(&fetch) && !c.members.contains(&gh));
                assert!(c.names.iter().all(|n| pcd_ledger::is_recordable_name(n)));
            }
            // The rest of the group is still decided.
            assert!(keys(&set)
                .iter()
                .any(|k| k == "mcp__gh" || k == "mcp__gh__issue"));
        }
        // Its group allowlisted: allowlisted, like its members.
        let mut allow = Allowlists::default();
        allow.global.groups.push(parse_group_entry("gh").unwrap());
        let set = candidates(
            &tools,
            &Classifier::default(),
            Mode::Mcp,
            &allow,
            &Available::default(),
        );
        assert!(set.exempt.contains(&(gh, Exempt::Allowlisted)));
    }
}
