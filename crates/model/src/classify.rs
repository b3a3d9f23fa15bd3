//! Classification by provenance, never by tool name.

use crate::extension_name::extension_name;
use crate::key::{bound_label, GroupKey};
use crate::scope::{GroupScope, Scope};
use crate::tool::{SourceInfo, SourceOrigin, ToolInfo};
use std::collections::HashMap;

/// What kind of tool this is, for the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Built-in provenance (core tools, `codemode`, `tool_search`, …): always allowed.
    Internal,
    /// One of the MCP resource tools (built-in MCP provenance, no namespace): internal and always
    /// declared, but every call is routed by its `server` argument.
    McpResource,
    /// A tool of an MCP server namespace (`mcp__…`), built-in or registered by a third-party
    /// adapter. Built-in MCP provenance does not make it internal.
    Mcp,
    /// An extension tool, grouped by the name derived from its `sourceInfo`.
    Extension,
    /// An external tool whose provenance yields no usable name: decided per tool in `tools` mode,
    /// left unfiltered in `mcp` mode.
    Unfiltered,
}

impl ToolKind {
    /// `internal`, `mcp`, `extension` or `unfiltered` (resource tools are `internal`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Internal | ToolKind::McpResource => "internal",
            ToolKind::Mcp => "mcp",
            ToolKind::Extension => "extension",
            ToolKind::Unfiltered => "unfiltered",
        }
    }

    /// Whether the tool is internal (always allowed, never a candidate).
    pub fn is_internal(self) -> bool {
        matches!(self, ToolKind::Internal | ToolKind::McpResource)
    }
}

/// A group a tool belongs to: an MCP server or an extension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Group {
    /// The canonical key (`mcp__dev_radius`, `ext__notes`).
    pub key: GroupKey,
    /// The display label, bounded to 48 characters and safe to print: the raw server name where
    /// Pi gives an alias, else the namespace's server part; or the derived extension name.
    pub label: String,
}

/// A tool's classification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// Its kind.
    pub kind: ToolKind,
    /// Its group, for MCP and extension tools.
    pub group: Option<Group>,
    /// The allowlist scope of the tool itself.
    pub scope: Scope,
    /// Whether it carries built-in MCP provenance (its scope then comes from the config origins).
    pub builtin_mcp: bool,
}

/// Classifies tools. Holds the built-in MCP server origins captured from the `mcp.json` files
/// (names only); a built-in MCP namespace whose origin is unknown is global.
#[derive(Debug, Clone, Default)]
pub struct Classifier {
    mcp_origins: HashMap<GroupKey, Scope>,
}

impl Classifier {
    /// A classifier that knows where each built-in MCP namespace was defined.
    pub fn with_mcp_origins(origins: impl IntoIterator<Item = (GroupKey, Scope)>) -> Classifier {
        Classifier {
            mcp_origins: origins.into_iter().collect(),
        }
    }

    /// The captured file scope of a built-in MCP namespace, if known.
    pub fn mcp_origin(&self, key: &GroupKey) -> Option<Scope> {
        self.mcp_origins.get(key).copied()
    }

    /// Classifies one tool by its provenance and namespace. Its name is never consulted.
    pub fn classify(&self, tool: &ToolInfo) -> Classified {
        self.classify_with(tool, &mut |info| extension_group(info))
    }

    fn classify_with(
        &self,
        tool: &ToolInfo,
        extension_group: &mut dyn FnMut(&SourceInfo) -> Option<Group>,
    ) -> Classified {
        let info = tool.source_info.as_ref();
        let builtin = info.is_some_and(|i| i.is_builtin());
        let mcp_key = tool
            .namespace
            .as_ref()
            .and_then(|ns| GroupKey::for_mcp_namespace(&ns.name));
        if let Some(key) = mcp_key {
            let ns = tool
                .namespace
                .as_ref()
                .expect("an MCP key comes from a namespace");
            let raw = ns
                .aliases
                .iter()
                .find(|a| !a.is_empty())
                .map_or_else(|| key.mcp_server_part().unwrap_or_default(), String::as_str);
            let scope = if builtin {
                self.mcp_origins.get(&key).copied().unwrap_or(Scope::Global)
            } else {
                Scope::of_source(info)
            };
            return Classified {
                kind: ToolKind::Mcp,
                group: Some(Group {
                    label: bound_label(raw),
                    key,
                }),
                scope,
                builtin_mcp: builtin,
            };
        }
        if builtin {
            let resource = info.is_some_and(|i| i.path == "builtin:mcp");
            return Classified {
                kind: if resource {
                    ToolKind::McpResource
                } else {
                    ToolKind::Internal
                },
                group: None,
                scope: Scope::Global,
                builtin_mcp: resource,
            };
        }
        let scope = Scope::of_source(info);
        match info.and_then(extension_group) {
            Some(group) => Classified {
                kind: ToolKind::Extension,
                group: Some(group),
                scope,
                builtin_mcp: false,
            },
            None => Classified {
                kind: ToolKind::Unfiltered,
                group: None,
                scope,
                builtin_mcp: false,
            },
        }
    }

    /// Classifies every tool and works out each group's common scope (global, project or mixed).
    pub fn classify_all<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a ToolInfo>,
    ) -> (Vec<Classified>, HashMap<GroupKey, GroupScope>) {
        let mut classes = Vec::new();
        let mut scopes: HashMap<GroupKey, GroupScope> = HashMap::new();
        // Extensions register many tools with one provenance: derive (and hash) each name once.
        let mut names: HashMap<ProvenanceKey<'a>, Option<Group>> = HashMap::new();
        for tool in tools {
            let group = tool.source_info.as_ref().and_then(|info| {
                let key = (
                    info.path.as_str(),
                    info.source.as_str(),
                    info.base_dir.as_deref(),
                    info.origin,
                );
                names
                    .entry(key)
                    .or_insert_with(|| extension_group(info))
                    .clone()
            });
            let c = self.classify_with(tool, &mut |_| group.clone());
            if let Some(group) = &c.group {
                scopes
                    .entry(group.key.clone())
                    .and_modify(|s| *s = s.join(c.scope))
                    .or_insert_with(|| c.scope.into());
            }
            classes.push(c);
        }
        (classes, scopes)
    }
}

/// What an extension name is derived from: path, source, base directory, origin.
type ProvenanceKey<'a> = (&'a str, &'a str, Option<&'a str>, Option<SourceOrigin>);

fn extension_group(info: &SourceInfo) -> Option<Group> {
    extension_name(info).map(|name| Group {
        key: GroupKey::for_extension(&name),
        label: bound_label(&name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{SourceScope, ToolNamespace};

    fn src(path: &str, source: &str, scope: SourceScope) -> Option<SourceInfo> {
        Some(SourceInfo {
            path: path.into(),
            source: source.into(),
            scope: Some(scope),
            origin: Some(SourceOrigin::TopLevel),
            base_dir: None,
        })
    }

    fn builtin(path: &str) -> Option<SourceInfo> {
        src(path, "builtin", SourceScope::Temporary)
    }

    fn mcp(name: &str, ns: &str, aliases: &[&str], info: Option<SourceInfo>) -> ToolInfo {
        ToolInfo {
            namespace: Some(ToolNamespace {
                name: ns.into(),
                description: None,
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
            }),
            ..ToolInfo::new(name, "", info)
        }
    }

    #[test]
    fn built_in_provenance_is_internal_and_names_do_not_matter() {
        let c = Classifier::default();
        for path in [
            "builtin:read",
            "builtin:bash",
            "builtin:codemode",
            "builtin:tool-search",
        ] {
            assert_eq!(
                c.classify(&ToolInfo::new("anything", "", builtin(path)))
                    .kind,
                ToolKind::Internal
            );
        }
        // An extension tool called `read` is external.
        let fake = ToolInfo::new(
            "read",
            "",
            src("/a/extensions/evil.ts", "auto", SourceScope::User),
        );
        assert_eq!(c.classify(&fake).kind, ToolKind::Extension);
        // Unknown provenance is external, without a group.
        let unknown = ToolInfo::new("read", "", None);
        let class = c.classify(&unknown);
        assert_eq!(
            (class.kind, class.group, class.scope),
            (ToolKind::Unfiltered, None, Scope::Global)
        );
        // An SDK host tool (`customTools`) is external and a group of its own, named by its
        // synthetic path, so `mcp` mode filters it too (issue 30, item 7).
        let sdk = ToolInfo::new("bash", "", src("<sdk:bash>", "sdk", SourceScope::Temporary));
        let class = c.classify(&sdk);
        assert_eq!(class.kind, ToolKind::Extension);
        assert_eq!(
            class.group.map(|g| g.key.as_str().to_owned()).as_deref(),
            Some("ext__bash")
        );
        // One whose path names nothing stays without a group.
        let nameless = ToolInfo::new("bash", "", src("<sdk:>", "sdk", SourceScope::Temporary));
        assert_eq!(c.classify(&nameless).kind, ToolKind::Unfiltered);
    }

    #[test]
    fn resource_tools_are_internal_but_routed() {
        let c = Classifier::default();
        let t = ToolInfo::new("list_mcp_resources", "", builtin("builtin:mcp"));
        let class = c.classify(&t);
        assert_eq!(class.kind, ToolKind::McpResource);
        assert_eq!(class.kind.as_str(), "internal");
    }

    #[test]
    fn built_in_mcp_server_tools_are_mcp_with_config_scope() {
        let key = GroupKey::for_mcp_server("dev-radius");
        let c = Classifier::with_mcp_origins([(key.clone(), Scope::Project)]);
        let t = mcp(
            "mcp__dev_radius__search",
            "mcp__dev_radius",
            &["dev-radius"],
            builtin("builtin:mcp"),
        );
        let class = c.classify(&t);
        assert_eq!(class.kind, ToolKind::Mcp);
        assert_eq!(class.scope, Scope::Project);
        assert!(class.builtin_mcp);
        let group = class.group.unwrap();
        assert_eq!(group.key, key);
        assert_eq!(group.label, "dev-radius");
        // Without an alias (Pi <= 1.1) the label is the namespace's server part.
        let old = mcp(
            "mcp__dev_radius__search",
            "mcp__dev_radius",
            &[],
            builtin("builtin:mcp"),
        );
        assert_eq!(
            Classifier::default().classify(&old).group.unwrap().label,
            "dev_radius"
        );
        // Unknown origin: global.
        assert_eq!(Classifier::default().classify(&t).scope, Scope::Global);
    }

    #[test]
    fn third_party_mcp_namespaces_keep_their_source_scope() {
        let key = GroupKey::for_mcp_server("kb");
        let c = Classifier::with_mcp_origins([(key.clone(), Scope::Global)]);
        let t = mcp(
            "kb_search",
            "mcp__kb",
            &[],
            src("/w/.pi/extensions/adapter.ts", "auto", SourceScope::Project),
        );
        let class = c.classify(&t);
        assert_eq!(
            (class.kind, class.scope, class.builtin_mcp),
            (ToolKind::Mcp, Scope::Project, false)
        );
        // A namespace that is not `mcp__…` groups by the extension.
        let other = mcp(
            "x",
            "tools",
            &[],
            src("/w/.pi/extensions/adapter.ts", "auto", SourceScope::Project),
        );
        assert_eq!(
            c.classify(&other).group.unwrap().key.as_str(),
            "ext__adapter"
        );
    }

    #[test]
    fn sdk_inline_codemode_is_external() {
        let t = ToolInfo::new(
            "codemode",
            "",
            src("<inline:1>", "inline", SourceScope::Temporary),
        );
        let class = Classifier::default().classify(&t);
        assert_eq!(class.kind, ToolKind::Extension);
        assert_eq!(class.group.unwrap().key.as_str(), "ext__inline_1");
    }

    #[test]
    fn group_scopes_detect_mixed_members() {
        let tools = [
            ToolInfo::new(
                "a",
                "",
                src("/u/extensions/notes.ts", "auto", SourceScope::User),
            ),
            ToolInfo::new(
                "b",
                "",
                src("/w/.pi/extensions/notes.ts", "auto", SourceScope::Project),
            ),
            ToolInfo::new(
                "c",
                "",
                src("/w/.pi/extensions/todo.ts", "auto", SourceScope::Project),
            ),
        ];
        let (_, scopes) = Classifier::default().classify_all(&tools);
        assert_eq!(scopes[&GroupKey::for_extension("notes")], GroupScope::Mixed);
        assert_eq!(
            scopes[&GroupKey::for_extension("todo")],
            GroupScope::Project
        );
    }
}
