//! Property: whatever the sequence of events, the gate never allows an external tool that is
//! neither available on the branch nor allowlisted in its scope (the only other way through is a
//! tool nobody has considered while nothing can be scored, which the spec keeps available).
//!
//! The oracle below restates the rules with plain loops over the inventory and the lists; the
//! gate answers from its precomputed indexes.

use pcd_gate::{decide, BranchIndex, Call, GateContext, Grants, LazyScores, Registry, Verdict};
use pcd_model::{
    parse_inventory, parse_tool_entry, Allowlists, Classifier, GroupKey, GroupScope, Mode, Scope,
    ToolInfo, ToolKind,
};
use proptest::prelude::*;

fn inventory() -> Vec<ToolInfo> {
    let mut items = vec![
        r#"{"name":"read","sourceInfo":{"path":"builtin:read","source":"builtin"}}"#.to_owned(),
    ];
    let exts = [
        ("alpha", "user"),
        ("beta", "project"),
        ("mixed", "user"),
        ("mixed", "project"),
    ];
    for (i, (ext, scope)) in exts.iter().enumerate() {
        for t in 0..3 {
            let base = if *scope == "project" { "/w/.pi" } else { "/a" };
            items.push(format!(
                r#"{{"name":"{ext}_{i}_{t}","sourceInfo":{{"path":"{base}/extensions/{ext}.ts","source":"auto","scope":"{scope}","origin":"top-level"}}}}"#
            ));
        }
    }
    for server in ["one", "two-x"] {
        for t in 0..3 {
            let ns = server.replace('-', "_");
            items.push(format!(
                r#"{{"name":"mcp__{ns}__t{t}","namespace":{{"name":"mcp__{ns}","aliases":["{server}"]}},"sourceInfo":{{"path":"builtin:mcp","source":"builtin"}}}}"#
            ));
        }
    }
    items.push(r#"{"name":"loose_a"}"#.to_owned());
    items.push(r#"{"name":"loose_b","sourceInfo":{"path":"<sdk:>","source":"sdk"}}"#.to_owned());
    parse_inventory(&format!("[{}]", items.join(",")))
        .unwrap()
        .tools
}

use pcd_gate::fixture::Sets;

#[derive(Debug, Clone)]
enum Event {
    MakeToolAvailable(usize),
    MakeGroupAvailable(usize),
    ConsiderTool(usize),
    ConsiderGroup(usize),
    PinTool(usize, bool),
    UnpinTools,
    PinGroup(usize, bool),
    UnpinGroups,
    SwitchMode,
    BranchReadable(bool),
    Scoring(bool),
    CanGrant(bool),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (0..30usize).prop_map(Event::MakeToolAvailable),
        (0..6usize).prop_map(Event::MakeGroupAvailable),
        (0..30usize).prop_map(Event::ConsiderTool),
        (0..6usize).prop_map(Event::ConsiderGroup),
        (0..30usize, any::<bool>()).prop_map(|(i, p)| Event::PinTool(i, p)),
        Just(Event::UnpinTools),
        (0..6usize, any::<bool>()).prop_map(|(i, p)| Event::PinGroup(i, p)),
        Just(Event::UnpinGroups),
        Just(Event::SwitchMode),
        any::<bool>().prop_map(Event::BranchReadable),
        any::<bool>().prop_map(Event::Scoring),
        any::<bool>().prop_map(Event::CanGrant),
    ]
}

struct Oracle<'a> {
    tools: &'a [ToolInfo],
    classifier: Classifier,
}

impl Oracle<'_> {
    fn group_scope(&self, key: &GroupKey) -> GroupScope {
        let mut scope: Option<GroupScope> = None;
        for t in self.tools {
            let c = self.classifier.classify(t);
            if c.group.as_ref().is_some_and(|g| &g.key == key) {
                scope = Some(scope.map_or(c.scope.into(), |s| s.join(c.scope)));
            }
        }
        scope.unwrap()
    }

    /// Whether an allow of this external tool is justified.
    #[allow(clippy::too_many_arguments)]
    fn justified(
        &self,
        tool: &ToolInfo,
        lists: &Allowlists,
        branch: &Sets,
        readable: bool,
        mode: Mode,
        scoring: bool,
        can_grant: bool,
    ) -> bool {
        let c = self.classifier.classify(tool);
        if c.kind == ToolKind::Unfiltered && mode == Mode::Mcp {
            return true;
        }
        let pinned_by_name = |name: &str, scope: Scope| lists.for_scope(scope).has_tool(name);
        if pinned_by_name(&tool.name, c.scope) {
            return true;
        }
        if let Some(g) = &c.group {
            if lists.for_scope(c.scope).has_group(&g.key) {
                return true;
            }
            if mode == Mode::Mcp && self.group_scope(&g.key) != GroupScope::Mixed {
                let promoted = self.tools.iter().any(|t| {
                    let tc = self.classifier.classify(t);
                    tc.group.as_ref().is_some_and(|tg| tg.key == g.key)
                        && pinned_by_name(&t.name, tc.scope)
                });
                if promoted {
                    return true;
                }
            }
        }
        if !readable {
            return false;
        }
        if branch.tools.contains(&tool.name)
            || c.group
                .as_ref()
                .is_some_and(|g| branch.groups.contains(g.key.as_str()))
        {
            return true;
        }
        let considered = match (&c.group, mode) {
            (Some(g), Mode::Mcp) => branch.considered_groups.contains(g.key.as_str()),
            _ => branch.considered_tools.contains(&tool.name),
        };
        !considered && !scoring && can_grant
    }
}

fn scope_list(lists: &mut Allowlists, project: bool) -> &mut pcd_model::ScopedAllowlist {
    if project {
        &mut lists.project
    } else {
        &mut lists.global
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_gate_never_allows_an_unjustified_external_call(events in proptest::collection::vec(event(), 1..40)) {
        let tools = inventory();
        let classifier = Classifier::default();
        let (classes, _) = classifier.classify_all(&tools);
        let mut group_keys: Vec<GroupKey> = classes.iter().filter_map(|c| c.group.as_ref().map(|g| g.key.clone())).collect();
        group_keys.dedup();
        let registry = Registry::build(&tools, &classifier, []);
        let oracle = Oracle { tools: &tools, classifier: Classifier::default() };
        let lazy = LazyScores::default();
        let mut lists = Allowlists::default();
        let mut branch = Sets::default();
        let (mut mode, mut readable, mut scoring, mut can_grant) = (Mode::Tools, true, true, true);
        for ev in events {
            let name = |i: usize| tools[i % tools.len()].name.clone();
            let key = |i: usize| group_keys[i % group_keys.len()].clone();
            match ev {
                Event::MakeToolAvailable(i) => { branch.tools.insert(name(i)); }
                Event::MakeGroupAvailable(i) => { branch.groups.insert(key(i).as_str().to_owned()); }
                Event::ConsiderTool(i) => { branch.considered_tools.insert(name(i)); }
                Event::ConsiderGroup(i) => { branch.considered_groups.insert(key(i).as_str().to_owned()); }
                Event::PinTool(i, project) => scope_list(&mut lists, project).tools.push(parse_tool_entry(&name(i)).unwrap()),
                Event::UnpinTools => { lists.global.tools.clear(); lists.project.tools.clear(); }
                Event::PinGroup(i, project) => scope_list(&mut lists, project).groups.push(key(i)),
                Event::UnpinGroups => { lists.global.groups.clear(); lists.project.groups.clear(); }
                Event::SwitchMode => mode = if mode == Mode::Tools { Mode::Mcp } else { Mode::Tools },
                Event::BranchReadable(r) => readable = r,
                Event::Scoring(s) => scoring = s,
                Event::CanGrant(g) => can_grant = g,
            }
            let grants = Grants::compute(&registry, &lists);
            let index = BranchIndex::build(&registry, &branch);
            let mut ctx = GateContext::enabled(mode, &registry, &grants, &lazy);
            ctx.branch = readable.then_some(&index);
            ctx.scoring = scoring;
            ctx.can_grant = can_grant && readable;
            for (tool, class) in tools.iter().zip(&classes) {
                let verdict = decide(&ctx, &Call::tool(&tool.name));
                if class.kind.is_internal() {
                    prop_assert_eq!(verdict, Verdict::Allow);
                    continue;
                }
                let justified = oracle.justified(tool, &lists, &branch, readable, mode, scoring, can_grant);
                if verdict == Verdict::Allow {
                    prop_assert!(justified, "{} allowed without cause in {:?}", tool.name, mode);
                } else {
                    prop_assert!(!justified, "{} refused though justified in {:?}: {:?}", tool.name, mode, verdict);
                }
            }
        }
    }
}
