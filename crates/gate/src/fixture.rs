//! A large, realistic world for benchmarks and the allocation test: 10,000 registered tools
//! (built-ins, 100 MCP servers, 200 extensions) and a branch with 1,000 grants.

use crate::branch::BranchIndex;
use crate::registry::{Grants, Registry};
use pcd_ledger::{Basis, Boundary, BranchState, Round};
use pcd_model::{
    Allowlists, Classifier, GroupKey, Mode, SourceInfo, SourceOrigin, SourceScope, ToolInfo,
    ToolNamespace,
};

/// The fixture's parts.
#[derive(Debug)]
pub struct Fixture {
    /// Every tool name, in registry order.
    pub names: Vec<String>,
    /// The classified snapshot.
    pub registry: Registry,
    /// Grants of an allowlist with 50 tools and 10 groups.
    pub grants: Grants,
    /// A branch where 1,000 tools and groups were made available.
    pub branch: BranchState,
    /// That branch indexed over the registry.
    pub index: BranchIndex,
}

/// The fixture's 10,000 tools (deterministic): a tenth built-in, four tenths over 100 MCP
/// servers, the rest over 200 loose extensions (every seventh of those project-scoped). Also
/// the inventory of the facade's benches.
pub fn tools() -> Vec<ToolInfo> {
    let mut tools = Vec::with_capacity(10_000);
    for i in 0..10_000usize {
        let name = format!("tool_{i:05}");
        let mut tool = match i % 10 {
            0 => ToolInfo::new(&name, "", Some(builtin("builtin:read"))),
            1..=4 => {
                let server = format!("server-{}", i % 100);
                let mut t = ToolInfo::new(&name, "", Some(builtin("builtin:mcp")));
                t.namespace = Some(ToolNamespace {
                    name: format!("mcp__{}", server.replace('-', "_")),
                    description: None,
                    aliases: vec![server],
                });
                t
            }
            _ => ToolInfo::new(
                &name,
                "",
                Some(SourceInfo {
                    path: format!("/a/extensions/ext{}.ts", i % 200),
                    source: "auto".into(),
                    scope: Some(if i % 7 == 0 {
                        SourceScope::Project
                    } else {
                        SourceScope::User
                    }),
                    origin: Some(SourceOrigin::TopLevel),
                    base_dir: None,
                }),
            ),
        };
        tool.definition_chars = 200;
        tools.push(tool);
    }
    tools
}

/// Builds the fixture (deterministic).
pub fn fixture() -> Fixture {
    let tools = tools();
    let registry = Registry::build(&tools, &Classifier::default(), []);
    let mut lists = Allowlists::default();
    for i in (0..10_000).step_by(200) {
        lists
            .global
            .tools
            .push(pcd_model::parse_tool_entry(&format!("tool_{i:05}")).unwrap());
    }
    for i in 0..10 {
        lists
            .global
            .groups
            .push(GroupKey::for_extension(&format!("ext{i}")));
    }
    let grants = Grants::compute(&registry, &lists);
    let mut branch = BranchState::new();
    let mut round = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
    for i in (0..10_000).step_by(10).take(990) {
        round.tools.push(format!("tool_{:05}", i + 5));
    }
    for i in 0..10 {
        round
            .groups
            .push(GroupKey::for_mcp_server(&format!("server-{i}")));
    }
    round.considered = (0..10_000).map(|i| format!("tool_{i:05}")).collect();
    branch.apply_round(&round, None, None);
    let index = BranchIndex::build(&registry, &branch);
    Fixture {
        names: tools.into_iter().map(|t| t.name).collect(),
        registry,
        grants,
        branch,
        index,
    }
}

fn builtin(path: &str) -> SourceInfo {
    SourceInfo {
        path: path.into(),
        source: "builtin".into(),
        scope: Some(SourceScope::Temporary),
        origin: Some(SourceOrigin::TopLevel),
        base_dir: None,
    }
}

/// A branch as plain sets, for tests that set availability directly.
#[derive(Debug, Clone, Default)]
pub struct Sets {
    /// Tools available on the branch.
    pub tools: std::collections::HashSet<String>,
    /// Group keys available on the branch.
    pub groups: std::collections::HashSet<String>,
    /// Tools a round considered.
    pub considered_tools: std::collections::HashSet<String>,
    /// Group keys a round considered.
    pub considered_groups: std::collections::HashSet<String>,
}

impl crate::branch::BranchView for Sets {
    fn tool_available(&self, name: &str) -> bool {
        self.tools.contains(name)
    }
    fn group_available(&self, key: &str) -> bool {
        self.groups.contains(key)
    }
    fn tool_considered(&self, name: &str) -> bool {
        self.considered_tools.contains(name)
    }
    fn group_considered(&self, key: &GroupKey) -> bool {
        self.considered_groups.contains(key.as_str())
    }
    fn for_each_available_group(&self, f: &mut dyn FnMut(&str)) {
        self.groups.iter().for_each(|g| f(g));
    }
}
