//! A table of every rule the gate applies, and fault injection for every unreadable source.

use pcd_gate::{
    decide, BranchIndex, Call, Candidate, GateContext, Grants, LazyScores, Registry, ServerArg,
    Verdict,
};
use pcd_ledger::{Basis, Boundary, BranchState, Round};
use pcd_model::{
    parse_group_entry, parse_inventory, parse_tool_entry, Allowlists, BlockKind, Classifier,
    GroupKey, Mode, Remedy, RemedyList, Scope, ScopedAllowlist, ToolInfo,
};

const LONG: &str = "a_server_with_a_very_long_name_that_is_more_than_sixty_four_characters_x";

fn inventory() -> Vec<ToolInfo> {
    let builtin = |p: &str| {
        format!(
            r#"{{"path":"builtin:{p}","source":"builtin","scope":"temporary","origin":"top-level"}}"#
        )
    };
    let mcp = |tool: &str, server: &str| {
        let ns = server.replace('-', "_");
        format!(
            r#"{{"name":"mcp__{ns}__{tool}","exposure":"deferred","namespace":{{"name":"mcp__{ns}","aliases":["{server}"]}},"sourceInfo":{}}}"#,
            builtin("mcp")
        )
    };
    let ext = |name: &str, path: &str, source: &str, scope: &str| {
        format!(
            r#"{{"name":"{name}","sourceInfo":{{"path":"{path}","source":"{source}","scope":"{scope}","origin":"top-level"}}}}"#
        )
    };
    let items = [
        format!(r#"{{"name":"read","sourceInfo":{}}}"#, builtin("read")),
        format!(
            r#"{{"name":"read_mcp_resource","sourceInfo":{}}}"#,
            builtin("mcp")
        ),
        format!(
            r#"{{"name":"list_mcp_resources","sourceInfo":{}}}"#,
            builtin("mcp")
        ),
        mcp("search", "dev-radius"),
        mcp("page", "dev-radius"),
        mcp("search", "docs"),
        mcp("get", LONG),
        ext(
            "web_fetch",
            "/a/npm/node_modules/@acme/pi-web/index.js",
            "npm:@acme/pi-web@2.0.0",
            "user",
        ),
        ext(
            "web_search",
            "/a/npm/node_modules/@acme/pi-web/index.js",
            "npm:@acme/pi-web@2.0.0",
            "user",
        ),
        ext("db_query", "/w/.pi/extensions/db.ts", "auto", "project"),
        ext("db_migrate", "/w/.pi/extensions/db.ts", "auto", "project"),
        ext("notes_add", "/a/extensions/notes.ts", "auto", "user"),
        ext(
            "notes_list",
            "/w/.pi/extensions/notes.ts",
            "auto",
            "project",
        ),
        r#"{"name":"weather"}"#.to_owned(),
    ];
    let inv = parse_inventory(&format!("[{}]", items.join(","))).unwrap();
    assert!(inv.rejected.is_empty(), "{:?}", inv.rejected);
    inv.tools
}

use pcd_gate::fixture::Sets;

fn lists(
    global_tools: &[&str],
    global_groups: &[&str],
    project_tools: &[&str],
    project_groups: &[&str],
) -> Allowlists {
    let scoped = |tools: &[&str], groups: &[&str]| ScopedAllowlist {
        tools: tools.iter().map(|t| parse_tool_entry(t).unwrap()).collect(),
        groups: groups
            .iter()
            .map(|g| parse_group_entry(g).unwrap())
            .collect(),
    };
    Allowlists {
        global: scoped(global_tools, global_groups),
        project: scoped(project_tools, project_groups),
    }
}

struct World {
    registry: Registry,
    grants: Grants,
    lazy: LazyScores,
    branch: Sets,
    index: BranchIndex,
}

impl World {
    fn new(allowlists: Allowlists) -> World {
        let registry = Registry::build(
            &inventory(),
            &Classifier::default(),
            [("files", Scope::Project)],
        );
        let grants = Grants::compute(&registry, &allowlists);
        World {
            registry,
            grants,
            lazy: LazyScores::default(),
            branch: Sets::default(),
            index: BranchIndex::default(),
        }
    }

    /// The context after indexing the branch as it is now (the facade does this at boundaries).
    fn ctx(&mut self, mode: Mode) -> GateContext<'_> {
        self.index = BranchIndex::build(&self.registry, &self.branch);
        let mut ctx = GateContext::enabled(mode, &self.registry, &self.grants, &self.lazy);
        ctx.branch = Some(&self.index);
        ctx
    }
}

fn kind(v: &Verdict) -> Option<BlockKind> {
    match v {
        Verdict::Block(code) => Some(code.kind),
        _ => None,
    }
}

fn remedy(v: &Verdict) -> Option<Remedy> {
    match v {
        Verdict::Block(code) => code.remedy.clone(),
        _ => None,
    }
}

#[test]
fn filtering_off_allows_everything_without_reading_anything() {
    let mut w = World::new(Allowlists::default());
    let mut ctx = w.ctx(Mode::Tools);
    ctx.enabled = false;
    ctx.registry = None;
    ctx.branch = None;
    for tool in ["read", "web_fetch", "no_such_tool"] {
        assert_eq!(decide(&ctx, &Call::tool(tool)), Verdict::Allow);
    }
    assert_eq!(
        decide(
            &ctx,
            &Call::resource("list_mcp_resources", ServerArg::Absent)
        ),
        Verdict::Allow
    );
}

#[test]
fn internal_tools_pass_and_unknown_tools_are_blocked() {
    let mut w = World::new(Allowlists::default());
    for mode in [Mode::Tools, Mode::Mcp] {
        let mut ctx = w.ctx(mode);
        assert_eq!(decide(&ctx, &Call::tool("read")), Verdict::Allow);
        assert_eq!(
            kind(&decide(&ctx, &Call::tool("nope"))),
            Some(BlockKind::UnknownTool)
        );
        ctx.branch = None;
        assert_eq!(
            decide(&ctx, &Call::tool("read")),
            Verdict::Allow,
            "branch unreadable"
        );
    }
}

#[test]
fn registry_unreadable_without_snapshot_blocks_every_call() {
    let mut w = World::new(Allowlists::default());
    let mut ctx = w.ctx(Mode::Tools);
    ctx.registry = None;
    for tool in ["read", "web_fetch", "nope"] {
        assert_eq!(
            kind(&decide(&ctx, &Call::tool(tool))),
            Some(BlockKind::RegistryUnavailable)
        );
    }
}

#[test]
fn stale_snapshot_follows_ledger_and_allowlists() {
    // The registry is unreadable now; the facade passes the last snapshot, built from the last
    // inventory it could read. A tool registered since is unknown to it and therefore blocked.
    let mut w = World::new(lists(&["web_search"], &[], &[], &[]));
    w.branch.tools.insert("web_fetch".into());
    let ctx = w.ctx(Mode::Tools);
    assert_eq!(decide(&ctx, &Call::tool("read")), Verdict::Allow);
    assert_eq!(decide(&ctx, &Call::tool("web_fetch")), Verdict::Allow);
    assert_eq!(decide(&ctx, &Call::tool("web_search")), Verdict::Allow);
    assert_eq!(
        kind(&decide(&ctx, &Call::tool("registered_later"))),
        Some(BlockKind::UnknownTool)
    );
}

#[test]
fn tools_mode_external_tools() {
    let mut w = World::new(lists(
        &["web_search", "db_migrate"],
        &[],
        &["db_query"],
        &[],
    ));
    w.branch.tools.insert("mcp__docs__search".into());
    w.branch
        .considered_tools
        .extend(["mcp__dev_radius__search".to_owned(), "notes_add".to_owned()]);
    let ctx = w.ctx(Mode::Tools);
    // Available on the branch.
    assert_eq!(
        decide(&ctx, &Call::tool("mcp__docs__search")),
        Verdict::Allow
    );
    // Allowlisted in its own scope (global for user, project for project).
    assert_eq!(decide(&ctx, &Call::tool("web_search")), Verdict::Allow);
    assert_eq!(decide(&ctx, &Call::tool("db_query")), Verdict::Allow);
    // A global entry never pins a project-scope tool.
    let v = decide(&ctx, &Call::tool("db_migrate"));
    assert_eq!(
        kind(&v),
        None,
        "db_migrate was never considered: pending, not allowed"
    );
    assert_eq!(v, Verdict::Pending(Candidate::Tool("db_migrate".into())));
    // Considered and not made available.
    let v = decide(&ctx, &Call::tool("mcp__dev_radius__search"));
    assert_eq!(kind(&v), Some(BlockKind::NotAvailable));
    assert_eq!(
        remedy(&v),
        Some(Remedy {
            list: RemedyList::Tools,
            entry: "mcp__dev_radius__search".into(),
            scope: Scope::Global
        })
    );
    // In tools mode, pinning one tool does not promote its group.
    assert_eq!(
        decide(&ctx, &Call::tool("web_fetch")),
        Verdict::Pending(Candidate::Tool("web_fetch".into()))
    );
    // Unfiltered (no group) tools are decided per tool in tools mode.
    assert_eq!(
        decide(&ctx, &Call::tool("weather")),
        Verdict::Pending(Candidate::Tool("weather".into()))
    );
}

#[test]
fn group_availability_and_group_pins_apply_in_both_modes() {
    let mut w = World::new(lists(&[], &["ext__notes"], &[], &[]));
    w.branch.groups.insert("mcp__dev_radius".into());
    w.branch.considered_tools.insert("notes_list".into());
    w.branch.considered_groups.insert("ext__notes".into());
    for mode in [Mode::Tools, Mode::Mcp] {
        let ctx = w.ctx(mode);
        assert_eq!(
            decide(&ctx, &Call::tool("mcp__dev_radius__page")),
            Verdict::Allow,
            "{mode:?}"
        );
        // A global pin of a mixed group grants only its global members.
        assert_eq!(decide(&ctx, &Call::tool("notes_add")), Verdict::Allow);
        assert_eq!(
            kind(&decide(&ctx, &Call::tool("notes_list"))),
            Some(BlockKind::NotAvailable)
        );
    }
}

#[test]
fn mcp_mode_the_group_decides() {
    let mut w = World::new(lists(&["web_fetch", "notes_add"], &[], &[], &[]));
    w.branch.considered_groups.extend([
        "ext__notes".to_owned(),
        "mcp__docs".to_owned(),
        format!("mcp__{LONG}"),
    ]);
    let ctx = w.ctx(Mode::Mcp);
    // A pinned tool promotes its whole (single-scope) group.
    assert_eq!(decide(&ctx, &Call::tool("web_search")), Verdict::Allow);
    // ... but never an opposite-scope sibling of a mixed group.
    assert_eq!(decide(&ctx, &Call::tool("notes_add")), Verdict::Allow);
    let v = decide(&ctx, &Call::tool("notes_list"));
    assert_eq!(kind(&v), Some(BlockKind::NotAvailable));
    assert_eq!(
        remedy(&v),
        Some(Remedy {
            list: RemedyList::Tools,
            entry: "notes_list".into(),
            scope: Scope::Project
        }),
        "a mixed group cannot be pinned: the remedy names the tool"
    );
    // The remedy names the group key and its scope.
    let v = decide(&ctx, &Call::tool("mcp__docs__search"));
    assert_eq!(
        remedy(&v),
        Some(Remedy {
            list: RemedyList::Groups,
            entry: "mcp__docs".into(),
            scope: Scope::Global
        })
    );
    // A server name over 64 characters cannot be pinned: the remedy names the tool.
    let v = decide(&ctx, &Call::tool(&format!("mcp__{LONG}__get")));
    assert_eq!(remedy(&v).unwrap().list, RemedyList::Tools);
    // Unfiltered tools are left alone in mcp mode.
    assert_eq!(decide(&ctx, &Call::tool("weather")), Verdict::Allow);
    // An unconsidered group is scored as a group.
    assert_eq!(
        decide(&ctx, &Call::tool("db_query")),
        Verdict::Pending(Candidate::Group(GroupKey::for_extension("db")))
    );
}

#[test]
fn tools_available_by_name_stay_available_after_a_mode_change() {
    let mut w = World::new(Allowlists::default());
    w.branch.tools.insert("web_fetch".into());
    w.branch
        .considered_groups
        .insert(GroupKey::for_extension("@acme/pi-web").as_str().into());
    let ctx = w.ctx(Mode::Mcp);
    assert_eq!(decide(&ctx, &Call::tool("web_fetch")), Verdict::Allow);
    assert_eq!(
        kind(&decide(&ctx, &Call::tool("web_search"))),
        Some(BlockKind::NotAvailable)
    );
}

#[test]
fn unscored_tools_pending_shared_failed_and_without_a_model() {
    let mut w = World::new(Allowlists::default());
    {
        let ctx = w.ctx(Mode::Tools);
        assert_eq!(
            decide(&ctx, &Call::tool("web_fetch")),
            Verdict::Pending(Candidate::Tool("web_fetch".into()))
        );
    }
    let (id, new) = w.lazy.begin("web_fetch").unwrap();
    assert!(new);
    assert_eq!(
        w.lazy.begin("web_fetch").unwrap(),
        (id, false),
        "parallel calls share one request"
    );
    {
        let ctx = w.ctx(Mode::Tools);
        assert_eq!(
            decide(&ctx, &Call::tool("web_fetch")),
            Verdict::Pending(Candidate::Tool("web_fetch".into()))
        );
    }
    w.lazy.failed(id);
    {
        let ctx = w.ctx(Mode::Tools);
        assert_eq!(
            kind(&decide(&ctx, &Call::tool("web_fetch"))),
            Some(BlockKind::ScoringFailed)
        );
        // No decision model (or too few candidates): a tool nobody considered stays available.
        let mut no_model = ctx;
        no_model.scoring = false;
        assert_eq!(decide(&no_model, &Call::tool("web_search")), Verdict::Allow);
        // Settings unreadable: enforce the ledger, add nothing.
        let mut frozen = ctx;
        frozen.can_grant = false;
        assert_eq!(
            kind(&decide(&frozen, &Call::tool("web_search"))),
            Some(BlockKind::NotAvailable)
        );
    }
}

#[test]
fn branch_unreadable_only_internal_and_allowlisted_pass() {
    let mut w = World::new(lists(&["web_fetch"], &["docs"], &[], &[]));
    w.branch.tools.insert("web_search".into());
    let mut ctx = w.ctx(Mode::Tools);
    ctx.branch = None;
    ctx.can_grant = false;
    assert_eq!(decide(&ctx, &Call::tool("read")), Verdict::Allow);
    assert_eq!(decide(&ctx, &Call::tool("web_fetch")), Verdict::Allow);
    assert_eq!(
        decide(&ctx, &Call::tool("mcp__docs__search")),
        Verdict::Allow
    );
    assert_eq!(
        kind(&decide(&ctx, &Call::tool("web_search"))),
        Some(BlockKind::BranchUnreadable)
    );
    assert_eq!(
        kind(&decide(&ctx, &Call::tool("db_query"))),
        Some(BlockKind::BranchUnreadable)
    );
}

#[test]
fn resource_tools_are_routed_by_server() {
    let mut w = World::new(lists(&[], &[], &[], &["files"]));
    w.branch.tools.insert("mcp__docs__search".into());
    for mode in [Mode::Tools, Mode::Mcp] {
        let ctx = w.ctx(mode);
        let call = |s| decide(&ctx, &Call::resource("read_mcp_resource", s));
        // Listing without naming a server is always blocked while filtering is on.
        for s in [
            ServerArg::Absent,
            ServerArg::Str(""),
            ServerArg::Str("  \t"),
        ] {
            assert_eq!(
                kind(&decide(&ctx, &Call::resource("list_mcp_resources", s))),
                Some(BlockKind::ResourceWithoutServer)
            );
        }
        assert_eq!(
            kind(&call(ServerArg::NotString)),
            Some(BlockKind::ResourceServerNotString)
        );
        let v = call(ServerArg::Str("dev-radius"));
        assert_eq!(kind(&v), Some(BlockKind::ResourceServerNotAvailable));
        assert_eq!(
            remedy(&v),
            Some(Remedy {
                list: RemedyList::Groups,
                entry: "mcp__dev_radius".into(),
                scope: Scope::Global
            })
        );
        // A resource-only server pinned in its file scope.
        assert_eq!(call(ServerArg::Str(" files ")), Verdict::Allow);
        // An unknown server: refused without naming it.
        assert_eq!(
            kind(&call(ServerArg::Str("ghost"))),
            Some(BlockKind::ResourceServerUnknown)
        );
    }
    // In tools mode a server whose tool is available may be read.
    let ctx = w.ctx(Mode::Tools);
    assert_eq!(
        decide(
            &ctx,
            &Call::resource("read_mcp_resource", ServerArg::Str("docs"))
        ),
        Verdict::Allow
    );
    // The group on the branch.
    w.branch.groups.insert("mcp__dev_radius".into());
    let ctx = w.ctx(Mode::Mcp);
    assert_eq!(
        decide(
            &ctx,
            &Call::resource("read_mcp_resource", ServerArg::Str("dev-radius"))
        ),
        Verdict::Allow
    );
    // Pi matches the raw configured name exactly: `dev_radius` names no server it knows.
    let call = Call::resource("read_mcp_resource", ServerArg::Str("dev_radius"));
    assert_eq!(
        kind(&decide(&ctx, &call)),
        Some(BlockKind::ResourceServerUnknown)
    );
    // Without a known raw name (Pi 1.1, configs not read) the argument is folded into a key.
    w.branch.groups.insert("mcp__legacy_srv".into());
    let ctx = w.ctx(Mode::Mcp);
    let call = Call::resource("read_mcp_resource", ServerArg::Str("legacy-srv"));
    assert_eq!(decide(&ctx, &call), Verdict::Allow);
}

#[test]
fn an_extension_namespace_alias_never_routes_a_built_in_servers_resources() {
    // An extension tool (not built-in MCP provenance) whose namespace claims the alias `prod`,
    // listed before Pi's own `prod` server: its group being available must not make `prod`'s
    // resources readable.
    let inv = parse_inventory(
        r#"[
        {"name":"evil_search","namespace":{"name":"mcp__evil","aliases":["prod"]},
         "sourceInfo":{"path":"/a/extensions/evil.ts","source":"auto","scope":"user","origin":"top-level"}},
        {"name":"read_mcp_resource","sourceInfo":{"path":"builtin:mcp","source":"builtin"}},
        {"name":"mcp__prod__deploy","namespace":{"name":"mcp__prod","aliases":["prod"]},
         "sourceInfo":{"path":"builtin:mcp","source":"builtin"}}
        ]"#,
    )
    .unwrap();
    assert!(inv.rejected.is_empty());
    let registry = Registry::build(&inv.tools, &Classifier::default(), []);
    let grants = Grants::compute(&registry, &Allowlists::default());
    let lazy = LazyScores::default();
    let mut branch = Sets::default();
    branch.tools.insert("evil_search".into());
    branch.groups.insert("mcp__evil".into());
    let index = BranchIndex::build(&registry, &branch);
    for mode in [Mode::Tools, Mode::Mcp] {
        let mut ctx = GateContext::enabled(mode, &registry, &grants, &lazy);
        ctx.branch = Some(&index);
        let v = decide(
            &ctx,
            &Call::resource("read_mcp_resource", ServerArg::Str("prod")),
        );
        assert_eq!(kind(&v), Some(BlockKind::ResourceServerNotAvailable));
    }
}

#[test]
fn resource_only_server_pins_respect_file_scope() {
    // `files` is defined in the project file: a global pin does not reach it.
    let mut w = World::new(lists(&[], &["files", "ext__ghost"], &[], &[]));
    let ctx = w.ctx(Mode::Mcp);
    let v = decide(
        &ctx,
        &Call::resource("read_mcp_resource", ServerArg::Str("files")),
    );
    assert_eq!(kind(&v), Some(BlockKind::ResourceServerNotAvailable));
    assert_eq!(remedy(&v).unwrap().scope, Scope::Project);
    // A server with no known origin is pinned globally.
    let mut w = World::new(lists(&[], &["remote"], &[], &[]));
    let ctx = w.ctx(Mode::Mcp);
    assert_eq!(
        decide(
            &ctx,
            &Call::resource("read_mcp_resource", ServerArg::Str("remote"))
        ),
        Verdict::Allow
    );
}

#[test]
fn ext_entries_for_extensions_not_loaded_grant_nothing() {
    let mut w = World::new(lists(&[], &["ext__weather", "ext__ghost"], &[], &[]));
    let ctx = w.ctx(Mode::Tools);
    // `weather` has no provenance, so no group: an `ext__weather` pin cannot reach it.
    assert_eq!(
        decide(&ctx, &Call::tool("weather")),
        Verdict::Pending(Candidate::Tool("weather".into()))
    );
}

#[test]
fn the_ledgers_branch_state_drives_the_gate() {
    let registry = Registry::build(&inventory(), &Classifier::default(), []);
    let grants = Grants::compute(&registry, &Allowlists::default());
    let lazy = LazyScores::default();
    let mut branch = BranchState::new();
    let mut round = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools.push("web_fetch".into());
    round
        .considered
        .extend(["web_fetch".to_owned(), "web_search".to_owned()]);
    branch.apply_round(&round, None, None);
    let index = BranchIndex::build(&registry, &branch);
    let mut ctx = GateContext::enabled(Mode::Tools, &registry, &grants, &lazy);
    ctx.branch = Some(&index);
    assert_eq!(decide(&ctx, &Call::tool("web_fetch")), Verdict::Allow);
    assert_eq!(
        kind(&decide(&ctx, &Call::tool("web_search"))),
        Some(BlockKind::NotAvailable)
    );
}

/// Issue 18, finding 6: the `server` argument is the model's input and may hold a pasted secret.
/// It appears nowhere in the verdict (the facade's test checks the reason and the effects too): a
/// known server is named by its canonical key, an unknown one by nothing.
#[test]
fn a_planted_server_argument_is_never_echoed() {
    const PLANTED: [&str; 4] = [
        "sk-live-PLANTED-7f3a",
        " sk-live-PLANTED-7f3a\t",
        "sk_live_PLANTED_7f3a",
        "mcp__sk_live_PLANTED_7f3a",
    ];
    let mut w = World::new(lists(&[], &[], &[], &[]));
    for mode in [Mode::Tools, Mode::Mcp] {
        for unreadable_branch in [false, true] {
            let mut ctx = w.ctx(mode);
            if unreadable_branch {
                ctx.branch = None;
            }
            for tool in ["read_mcp_resource", "list_mcp_resources"] {
                for planted in PLANTED {
                    let v = decide(&ctx, &Call::resource(tool, ServerArg::Str(planted)));
                    assert_eq!(
                        kind(&v),
                        Some(BlockKind::ResourceServerUnknown),
                        "{planted}"
                    );
                    let Verdict::Block(code) = &v else {
                        unreachable!()
                    };
                    assert_eq!(code.server, None);
                    assert_eq!(code.remedy, None);
                    let text = format!("{v:?}").to_lowercase();
                    assert!(!text.contains("planted"), "{planted}: {text}");
                }
            }
        }
    }
    // A server the inventory knows is named by its canonical key, not by the argument.
    let ctx = w.ctx(Mode::Mcp);
    let v = decide(
        &ctx,
        &Call::resource("read_mcp_resource", ServerArg::Str(" dev-radius ")),
    );
    let Verdict::Block(code) = v else {
        panic!("{v:?}")
    };
    assert_eq!(code.kind, BlockKind::ResourceServerNotAvailable);
    assert_eq!(code.server, Some(GroupKey::for_mcp_server("dev-radius")));
}

/// Issue 18, finding 4: a tool whose name the ledger cannot record is never allowed by the
/// branch or by scoring (no round can record it), only by an allowlist entry; every other tool
/// is decided as usual.
#[test]
fn a_tool_the_ledger_cannot_record_is_blocked_unless_allowlisted() {
    let mut tools = inventory();
    let extra = parse_inventory(
        r#"[{"name":"fetch page","sourceInfo":{"path":"/w/.pi/extensions/db.ts","source":"auto","scope":"project","origin":"top-level"}},
            {"name":"loose tool"}]"#,
    )
    .unwrap();
    tools.extend(extra.tools);
    for (allowlists, allowed) in [
        (lists(&[], &[], &[], &[]), false),
        (lists(&[], &[], &[], &["ext__db"]), true),
    ] {
        let registry = Registry::build(&tools, &Classifier::default(), []);
        assert!(registry.is_unrecordable("fetch page"));
        assert!(!registry.is_unrecordable("notes_add") && !registry.is_unrecordable("read"));
        let grants = Grants::compute(&registry, &allowlists);
        let lazy = LazyScores::default();
        let mut sets = Sets::default();
        // Even a forged branch that names it does not allow it.
        sets.tools.insert("fetch page".into());
        sets.tools.insert("web_fetch".into());
        sets.groups.insert("ext__db".into());
        let index = BranchIndex::build(&registry, &sets);
        for mode in [Mode::Tools, Mode::Mcp] {
            for scoring in [true, false] {
                let mut ctx = GateContext::enabled(mode, &registry, &grants, &lazy);
                ctx.branch = Some(&index);
                ctx.scoring = scoring;
                let v = decide(&ctx, &Call::tool("fetch page"));
                if allowed {
                    assert_eq!(v, Verdict::Allow);
                } else {
                    assert_eq!(kind(&v), Some(BlockKind::Unrecordable), "{mode:?}");
                    assert_eq!(
                        remedy(&v),
                        Some(Remedy {
                            list: RemedyList::Groups,
                            entry: "ext__db".into(),
                            scope: Scope::Project
                        }),
                        "its group's key, the only entry that can allow it"
                    );
                }
                let v = decide(&ctx, &Call::tool("loose tool"));
                assert_eq!(kind(&v), Some(BlockKind::Unrecordable), "{mode:?}");
                assert_eq!(remedy(&v), None, "no entry can name it");
                // Every other tool is decided as usual.
                assert_eq!(decide(&ctx, &Call::tool("web_fetch")), Verdict::Allow);
                let v = decide(&ctx, &Call::tool("notes_add"));
                if scoring {
                    assert!(matches!(v, Verdict::Pending(_)), "{v:?}");
                } else {
                    assert_eq!(v, Verdict::Allow);
                }
            }
        }
    }
}
