//! The provenance-classified snapshot of Pi's registry, and the grants the allowlists give over
//! it. Both are built once per boundary or save, so a verdict is a few lookups.

use pcd_model::fnv::FnvBuild;
use pcd_model::{
    Allowlists, Classifier, GroupKey, GroupScope, Scope, ScopedAllowlist, ToolInfo, ToolKind,
    MAX_GROUP_NAME_CHARS,
};
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
pub(crate) struct RegTool {
    pub(crate) kind: ToolKind,
    pub(crate) group: Option<u32>,
    pub(crate) scope: Scope,
    /// Whether the ledger can record its name ([`pcd_ledger::is_recordable_name`]).
    pub(crate) recordable: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct RegGroup {
    pub(crate) key: GroupKey,
    pub(crate) scope: GroupScope,
    pub(crate) members: Vec<u32>,
}

impl RegGroup {
    /// Whether the group can be pinned as a whole: not mixed, and (for MCP) a server name of at
    /// most 64 characters.
    pub(crate) fn pinnable(&self) -> bool {
        self.scope != GroupScope::Mixed
            && self
                .key
                .mcp_server_part()
                .is_none_or(|s| s.len() <= MAX_GROUP_NAME_CHARS)
    }
}

/// The last provenance-classified snapshot of Pi's tool registry: every tool's kind, group and
/// scope, each group's common scope, and the raw MCP server names a resource tool's `server`
/// argument may use.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    pub(crate) index: HashMap<Box<str>, u32, FnvBuild>,
    pub(crate) names: Vec<Box<str>>,
    pub(crate) tools: Vec<RegTool>,
    pub(crate) groups: Vec<RegGroup>,
    pub(crate) group_index: HashMap<GroupKey, u32>,
    /// Raw configured server names (namespace aliases, `mcp.json` names) to their group key.
    pub(crate) servers: HashMap<Box<str>, GroupKey, FnvBuild>,
    /// The file scope of MCP servers known from the configs (resource-only ones included).
    pub(crate) server_scopes: HashMap<GroupKey, Scope>,
    /// The keys for which a raw server name is known.
    pub(crate) named_keys: HashSet<GroupKey>,
}

impl Registry {
    /// Classifies the inventory with `classifier` (which knows the built-in MCP origins) and
    /// indexes it. `config_servers` are the raw server names and file scopes the names-only
    /// `mcp.json` reader found (empty without the user's approval); they let resource calls name
    /// servers that expose no tools.
    pub fn build<'a>(
        tools: &[ToolInfo],
        classifier: &Classifier,
        config_servers: impl IntoIterator<Item = (&'a str, Scope)>,
    ) -> Registry {
        let mut reg = Registry::default();
        let (classes, scopes) = classifier.classify_all(tools);
        for (tool, class) in tools.iter().zip(classes) {
            let group = class.group.map(|g| {
                let next = reg.groups.len() as u32;
                let gi = *reg.group_index.entry(g.key.clone()).or_insert(next);
                if gi == next {
                    reg.groups.push(RegGroup {
                        scope: scopes[&g.key],
                        key: g.key.clone(),
                        members: Vec::new(),
                    });
                }
                gi
            });
            let ti = reg.tools.len() as u32;
            if let Some(gi) = group {
                reg.groups[gi as usize].members.push(ti);
            }
            // Only Pi's built-in MCP extension serves the resource tools, and only its namespaces'
            // aliases are its raw server names: any extension may set a namespace with aliases, and
            // one that claimed a built-in server's name would route that server's resources to its
            // own group's availability.
            if let Some(ns) = tool
                .namespace
                .as_ref()
                .filter(|_| class.kind == ToolKind::Mcp && class.builtin_mcp)
            {
                if let Some(gi) = group {
                    let key = &reg.groups[gi as usize].key;
                    for alias in ns.aliases.iter().filter(|a| !a.is_empty()) {
                        reg.servers
                            .entry(alias.as_str().into())
                            .or_insert_with(|| key.clone());
                    }
                }
            }
            reg.index.insert(tool.name.as_str().into(), ti);
            reg.names.push(tool.name.as_str().into());
            reg.tools.push(RegTool {
                kind: class.kind,
                group,
                scope: class.scope,
                recordable: pcd_ledger::is_recordable_name(&tool.name),
            });
        }
        for (name, scope) in config_servers {
            let key = GroupKey::for_mcp_server(name);
            reg.servers
                .entry(name.into())
                .or_insert_with(|| key.clone());
            reg.server_scopes.entry(key).or_insert(scope);
        }
        reg.named_keys = reg.servers.values().cloned().collect();
        reg
    }

    /// Whether `name` is a registered internal tool (built-in provenance, the MCP resource tools
    /// included): always declared, never withheld from Pi's active set.
    pub fn is_internal(&self, name: &str) -> bool {
        self.index
            .get(name)
            .is_some_and(|&i| self.tools[i as usize].kind.is_internal())
    }

    /// Whether `name` is a registered external tool whose name the ledger cannot record: no round
    /// grants it and this extension never withholds it from Pi's active set (it has no entry to
    /// justify either); the gate blocks its calls unless an allowlist entry allows them.
    pub fn is_unrecordable(&self, name: &str) -> bool {
        self.index.get(name).is_some_and(|&i| {
            let tool = &self.tools[i as usize];
            !tool.recordable && !tool.kind.is_internal()
        })
    }

    /// How many tools the snapshot holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the snapshot holds no tool.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The group key a resource tool's trimmed `server` argument names, matched as Pi matches
    /// it: the raw configured name or a namespace alias, exactly. Only when no raw name is known
    /// for the folded namespace (Pi 1.1 gives no alias and the configs were not read) is the
    /// argument folded into a key. `None` when it names no server Pi would find (a spelling that
    /// differs from the known raw name only in `-`/`_`).
    pub(crate) fn server_key(&self, server: &str) -> Option<GroupKey> {
        if let Some(key) = self.servers.get(server) {
            return Some(key.clone());
        }
        let folded = GroupKey::for_mcp_server(server);
        (!self.named_keys.contains(&folded)).then_some(folded)
    }

    /// Whether `server` is exactly a raw server name or namespace alias the inventory or the
    /// configs know.
    pub(crate) fn names_server(&self, server: &str) -> bool {
        self.servers.contains_key(server)
    }

    /// The pinning scope of a group key: its members' common scope, else its config file scope,
    /// else global. `None` for a mixed group.
    pub(crate) fn key_scope(&self, key: &GroupKey) -> Option<Scope> {
        match self.group_index.get(key) {
            Some(&gi) => self.groups[gi as usize].scope.single(),
            None => Some(
                self.server_scopes
                    .get(key)
                    .copied()
                    .unwrap_or(Scope::Global),
            ),
        }
    }
}

/// What the global and project allowlists grant over a [`Registry`]: precomputed per tool and
/// per group, so the verdict does no list scans.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// The tool is listed by name in the lists of its own scope.
    pub(crate) tool_pinned: Vec<bool>,
    /// The group is listed by key in the global / project lists.
    pub(crate) group_pinned: Vec<[bool; 2]>,
    /// Group mode: a member tool is pinned by name and the group is not mixed.
    pub(crate) group_promoted: Vec<bool>,
    /// Pinned group keys with no tool in the registry (resource-only or disconnected servers,
    /// extensions not loaded), each admitted only in its own scope; an `ext__` key that is not
    /// loaded grants nothing.
    pub(crate) unregistered: HashSet<GroupKey>,
}

fn scope_index(scope: Scope) -> usize {
    match scope {
        Scope::Global => 0,
        Scope::Project => 1,
    }
}

impl Grants {
    /// Applies the allowlists to the registry. A global entry never pins a project-scope tool or
    /// group, nor a project entry a global one.
    pub fn compute(registry: &Registry, allowlists: &Allowlists) -> Grants {
        fn names(list: &ScopedAllowlist) -> HashSet<&str> {
            list.tools.iter().map(|t| t.as_str()).collect()
        }
        let pinned_names = [names(&allowlists.global), names(&allowlists.project)];
        let tool_pinned: Vec<bool> = registry
            .tools
            .iter()
            .zip(&registry.names)
            .map(|(t, name)| pinned_names[scope_index(t.scope)].contains(&**name))
            .collect();
        let group_pinned: Vec<[bool; 2]> = registry
            .groups
            .iter()
            .map(|g| {
                [
                    allowlists.global.has_group(&g.key),
                    allowlists.project.has_group(&g.key),
                ]
            })
            .collect();
        let group_promoted = registry
            .groups
            .iter()
            .map(|g| {
                g.scope != GroupScope::Mixed && g.members.iter().any(|&m| tool_pinned[m as usize])
            })
            .collect();
        let mut unregistered = HashSet::new();
        for (scope, list) in [
            (Scope::Global, &allowlists.global),
            (Scope::Project, &allowlists.project),
        ] {
            for key in &list.groups {
                let registered = registry.group_index.contains_key(key);
                let is_mcp = key.mcp_server_part().is_some();
                if !registered && is_mcp && registry.key_scope(key) == Some(scope) {
                    unregistered.insert(key.clone());
                }
            }
        }
        Grants {
            tool_pinned,
            group_pinned,
            group_promoted,
            unregistered,
        }
    }

    /// Whether group `gi` is pinned by key in the lists of `scope`.
    pub(crate) fn group_pinned_in(&self, gi: u32, scope: Scope) -> bool {
        self.group_pinned
            .get(gi as usize)
            .is_some_and(|p| p[scope_index(scope)])
    }
}
