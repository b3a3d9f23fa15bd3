use super::*;
use crate::lists::Availability;
use crate::words::width;
use pcd_model::{parse_group_entry, parse_tool_entry};
use proptest::prelude::*;

fn row(name: &str, kind: ToolKind, group: Option<(GroupKey, &str)>, scope: Scope) -> ToolRow {
    ToolRow {
        name: name.to_owned(),
        kind,
        label: group.as_ref().map(|(_, l)| (*l).to_owned()),
        group: group.map(|(k, _)| k),
        scope,
        definition_chars: 100,
        availability: Availability::Withheld,
        calls: 0,
    }
}

fn long_server() -> String {
    "s".repeat(70)
}

/// Built-ins, three global MCP servers (one with a 70-character name), a global extension, a
/// project extension, an extension with members in both scopes, and tools with no group.
fn inventory() -> Vec<ToolRow> {
    fn mcp(s: &str) -> Option<(GroupKey, &str)> {
        Some((GroupKey::for_mcp_server(s), s))
    }
    let radius = Some((GroupKey::for_mcp_server("dev-radius"), "dev-radius"));
    let long = long_server();
    let web = Some((GroupKey::for_extension("@acme/pi-web"), "@acme/pi-web"));
    let notes = Some((GroupKey::for_extension("notes"), "notes"));
    let proj = Some((GroupKey::for_extension("proj-tools"), "proj-tools"));
    let g = Scope::Global;
    let p = Scope::Project;
    vec![
        row("read", ToolKind::Internal, None, g),
        row("bash", ToolKind::Internal, None, g),
        row("codemode", ToolKind::Internal, None, g),
        row("list_mcp_resources", ToolKind::McpResource, None, g),
        row("mcp__dev_radius__search", ToolKind::Mcp, radius.clone(), g),
        row("mcp__dev_radius__fetch", ToolKind::Mcp, radius.clone(), g),
        row("mcp__dev_radius__status", ToolKind::Mcp, radius, g),
        row("mcp__kb__query", ToolKind::Mcp, mcp("kb"), g),
        row(
            "mcp__sssssssssssssssssssssssssssssssssssssssssssssssssss_1a2b3c4d",
            ToolKind::Mcp,
            Some((GroupKey::for_mcp_server(&long), long.as_str())),
            g,
        ),
        row("web_fetch", ToolKind::Extension, web.clone(), g),
        row("web_search", ToolKind::Extension, web, g),
        row("notes_add", ToolKind::Extension, notes.clone(), p),
        row("notes_find", ToolKind::Extension, notes, g),
        row("deploy", ToolKind::Extension, proj.clone(), p),
        row("rollback", ToolKind::Extension, proj, p),
        row("ask_host", ToolKind::Unfiltered, None, g),
        row("project_helper", ToolKind::Unfiltered, None, p),
    ]
}

fn allowlist(tools: &[&str], groups: &[&str]) -> ScopedAllowlist {
    ScopedAllowlist {
        tools: tools.iter().map(|t| parse_tool_entry(t).unwrap()).collect(),
        groups: groups
            .iter()
            .map(|g| parse_group_entry(g).unwrap())
            .collect(),
    }
}

fn global_saved() -> ScopedAllowlist {
    allowlist(
        &["web_fetch", "old_tool", "read"],
        &["kb", "mcp__gone", "ext__old_ext"],
    )
}

fn global_editor() -> AllowlistEditor {
    AllowlistEditor::new(
        EditorKind::Tools,
        Scope::Global,
        &inventory(),
        &global_saved(),
    )
}

fn press(editor: &mut AllowlistEditor, keys: &[Key]) {
    for &k in keys {
        editor.handle_key(k);
    }
}

fn typing(text: &str) -> Vec<Key> {
    text.chars().map(Key::Char).collect()
}

fn screen(editor: &AllowlistEditor) -> String {
    editor.render(80, 30).join("\n")
}

/// Moves the cursor to the row whose target is `target`, from the top.
fn go_to(editor: &mut AllowlistEditor, target: &CursorTarget) {
    editor.cursor = 0;
    for _ in 0..200 {
        if editor.cursor_target().as_ref() == Some(target) {
            return;
        }
        editor.handle_key(Key::Down);
    }
    panic!("{target:?} is not shown");
}

fn group(key: GroupKey) -> CursorTarget {
    CursorTarget::Group(key)
}

fn tool(name: &str) -> CursorTarget {
    CursorTarget::Tool(name.to_owned())
}

fn names(list: &ScopedAllowlist) -> (Vec<&str>, Vec<&str>) {
    (
        list.tools.iter().map(|t| t.as_str()).collect(),
        list.groups.iter().map(|g| g.as_str()).collect(),
    )
}

#[test]
fn opens_collapsed_with_builtins_first_and_stale_entries_marked() {
    let editor = global_editor();
    insta::assert_snapshot!(screen(&editor));
}

#[test]
fn enter_expands_a_group_and_the_builtins() {
    let mut editor = global_editor();
    press(&mut editor, &[Key::Enter]);
    go_to(&mut editor, &group(GroupKey::for_mcp_server("dev-radius")));
    press(&mut editor, &[Key::Enter]);
    insta::assert_snapshot!(screen(&editor));
    press(&mut editor, &[Key::Enter]);
    assert!(!screen(&editor).contains("mcp__dev_radius__fetch"));
}

#[test]
fn space_on_a_header_pins_then_unchecking_a_tool_replaces_the_pin() {
    let mut editor = global_editor();
    let radius = GroupKey::for_mcp_server("dev-radius");
    go_to(&mut editor, &group(radius.clone()));
    press(&mut editor, &[Key::Space, Key::Enter]);
    let pinned = screen(&editor);
    go_to(&mut editor, &tool("mcp__dev_radius__fetch"));
    press(&mut editor, &[Key::Space]);
    let replaced = screen(&editor);
    insta::assert_snapshot!(format!(
        "after Space on the header:\n{pinned}\n\nafter unchecking fetch:\n{replaced}"
    ));
    let saved = editor.save().unwrap();
    let (tools, groups) = names(&saved);
    assert!(!groups.contains(&"mcp__dev_radius"));
    assert!(tools.contains(&"mcp__dev_radius__search"));
    assert!(tools.contains(&"mcp__dev_radius__status"));
    assert!(!tools.contains(&"mcp__dev_radius__fetch"));
}

#[test]
fn checking_every_tool_one_by_one_shows_full_but_saves_names() {
    let mut editor = global_editor();
    let web = GroupKey::for_extension("@acme/pi-web");
    go_to(&mut editor, &group(web.clone()));
    press(&mut editor, &[Key::Enter]);
    go_to(&mut editor, &tool("web_search"));
    press(&mut editor, &[Key::Space]);
    let text = screen(&editor);
    insta::assert_snapshot!(text);
    let saved = editor.save().unwrap();
    let (tools, groups) = names(&saved);
    assert!(tools.contains(&"web_fetch") && tools.contains(&"web_search"));
    assert!(!groups.contains(&web.as_str()));
}

#[test]
fn space_on_a_full_header_clears_the_pin_and_every_pick() {
    let mut editor = global_editor();
    let web = GroupKey::for_extension("@acme/pi-web");
    go_to(&mut editor, &group(web.clone()));
    press(&mut editor, &[Key::Space]); // [-] (web_fetch picked) -> pinned
    press(&mut editor, &[Key::Down, Key::Up]);
    press(&mut editor, &[Key::Space]); // [x] -> cleared
    let saved = editor.save().unwrap();
    let (tools, groups) = names(&saved);
    assert!(!tools.contains(&"web_fetch"));
    assert!(!groups.contains(&web.as_str()));
}

/// Issue 17, item 8: a second Space on a header just pinned from `[-]` clears the pin and every
/// pick (it used to bring the individual picks back).
#[test]
fn space_twice_on_a_partly_picked_header_clears_the_pin_and_every_pick() {
    let mut editor = global_editor();
    let web = GroupKey::for_extension("@acme/pi-web");
    go_to(&mut editor, &group(web.clone()));
    assert!(editor.lists.tools.iter().any(|t| t == "web_fetch"), "[-]");
    press(&mut editor, &[Key::Space]);
    assert!(editor.lists.groups.contains(&web), "pinned");
    press(&mut editor, &[Key::Space]);
    let saved = editor.save().unwrap();
    let (tools, groups) = names(&saved);
    assert!(!tools.contains(&"web_fetch"), "{tools:?}");
    assert!(!groups.contains(&web.as_str()), "{groups:?}");
}

#[test]
fn a_search_expands_the_groups_it_matches() {
    let mut editor = global_editor();
    press(&mut editor, &typing("fetch"));
    insta::assert_snapshot!(screen(&editor));
    press(&mut editor, &[Key::Backspace; 5]);
    assert!(!screen(&editor).contains("mcp__dev_radius__fetch"));
    press(&mut editor, &typing("kb"));
    assert_eq!(editor.handle_key(Key::Escape), EditorOutcome::Continue);
    assert_eq!(editor.query, "");
    assert_eq!(editor.handle_key(Key::Escape), EditorOutcome::Cancel);
}

#[test]
fn a_server_name_over_64_characters_cannot_be_pinned() {
    let mut editor = global_editor();
    go_to(
        &mut editor,
        &group(GroupKey::for_mcp_server(&long_server())),
    );
    press(&mut editor, &[Key::Space]);
    let after_space = screen(&editor);
    let outcome = editor.handle_key(Key::Save);
    assert_eq!(outcome, EditorOutcome::Continue, "nothing is saved");
    let after_save = screen(&editor);
    assert!(after_save.contains("Not saved."));
    insta::assert_snapshot!(format!(
        "after Space:\n{after_space}\n\nafter Save:\n{after_save}"
    ));
    // Its tool can still be allowlisted by name.
    press(
        &mut editor,
        &[Key::Space, Key::Enter, Key::Down, Key::Space],
    );
    let EditorOutcome::Save(saved) = editor.handle_key(Key::Save) else {
        panic!("saving the tool by name works: {}", screen(&editor));
    };
    assert!(saved
        .tools
        .iter()
        .any(|t| t.as_str().starts_with("mcp__sss")));
}

#[test]
fn one_save_writes_both_lists_and_keeps_names_not_loaded() {
    let mut editor = global_editor();
    go_to(&mut editor, &group(GroupKey::for_mcp_server("dev-radius")));
    press(&mut editor, &[Key::Space]);
    go_to(&mut editor, &tool("ask_host"));
    press(&mut editor, &[Key::Space]);
    let EditorOutcome::Save(saved) = editor.handle_key(Key::Save) else {
        panic!("save failed: {}", screen(&editor));
    };
    let (tools, groups) = names(&saved);
    assert_eq!(tools, ["web_fetch", "old_tool", "read", "ask_host"]);
    assert_eq!(
        groups,
        ["mcp__kb", "mcp__gone", "ext__old_ext", "mcp__dev_radius"]
    );
}

#[test]
fn project_scope_lists_mixed_group_tools_one_by_one() {
    let saved = allowlist(&["notes_add"], &["ext__proj_tools"]);
    let mut editor = AllowlistEditor::new(EditorKind::Tools, Scope::Project, &inventory(), &saved);
    let text = screen(&editor);
    insta::assert_snapshot!(text);
    assert!(
        !text.contains("ext__notes"),
        "mixed groups are no candidates"
    );
    assert!(
        !text.contains("notes_find"),
        "its global tool belongs to the global editor"
    );
    go_to(&mut editor, &tool("project_helper"));
    press(&mut editor, &[Key::Space]);
    let EditorOutcome::Save(saved) = editor.handle_key(Key::Save) else {
        panic!()
    };
    assert_eq!(
        names(&saved),
        (vec!["notes_add", "project_helper"], vec!["ext__proj_tools"])
    );
}

#[test]
fn the_flat_editor_is_the_same_group_list() {
    let mut editor = AllowlistEditor::new(
        EditorKind::Groups,
        Scope::Global,
        &inventory(),
        &global_saved(),
    );
    let initial = screen(&editor);
    go_to(&mut editor, &group(GroupKey::for_extension("@acme/pi-web")));
    press(&mut editor, &[Key::Space, Key::Enter]);
    let after = screen(&editor);
    insta::assert_snapshot!(format!(
        "{initial}\n\nafter Space on @acme/pi-web:\n{after}"
    ));
    assert!(!after.contains("web_search"), "flat: Enter does not expand");
    let EditorOutcome::Save(saved) = editor.handle_key(Key::Save) else {
        panic!()
    };
    let (tools, groups) = names(&saved);
    assert_eq!(tools, ["old_tool", "read"], "the pin replaced the pick");
    assert!(groups.contains(&GroupKey::for_extension("@acme/pi-web").as_str()));
}

#[test]
fn narrow_and_short_screens_with_ranking() {
    let mut editor = global_editor();
    editor.set_ranking(true);
    press(&mut editor, &[Key::Enter]);
    for _ in 0..6 {
        editor.handle_key(Key::Down);
    }
    insta::assert_snapshot!(editor.render(32, 8).join("\n"));
}

#[test]
fn builtins_are_locked() {
    let mut editor = global_editor();
    let before = editor.lists.clone();
    press(
        &mut editor,
        &[Key::Space, Key::Enter, Key::Down, Key::Space],
    );
    assert_eq!(editor.lists, before);
    assert!(screen(&editor).contains("always available and never saved"));
}

#[test]
fn hostile_names_cannot_break_lines() {
    let rows = vec![row(
        "evil\n\u{1b}[2J\u{202E}tool",
        ToolKind::Unfiltered,
        None,
        Scope::Global,
    )];
    let editor = AllowlistEditor::new(
        EditorKind::Tools,
        Scope::Global,
        &rows,
        &ScopedAllowlist::default(),
    );
    for line in editor.render(60, 10) {
        assert!(!line.contains(['\n', '\u{1b}', '\u{202E}']), "{line:?}");
    }
}

fn arb_key() -> impl Strategy<Value = Key> {
    prop_oneof![
        3 => Just(Key::Down),
        2 => Just(Key::Up),
        2 => Just(Key::Enter),
        3 => Just(Key::Space),
        1 => Just(Key::Backspace),
        1 => Just(Key::Escape),
        1 => Just(Key::Save),
        2 => prop::sample::select(vec!['w', 'e', 'b', 'k', 'd', 'x', '_', 'é', '笔'])
            .prop_map(Key::Char),
    ]
}

fn arb_scope() -> impl Strategy<Value = (EditorKind, Scope)> {
    (
        prop::sample::select(vec![EditorKind::Tools, EditorKind::Groups]),
        prop::sample::select(vec![Scope::Global, Scope::Project]),
    )
}

fn editor_for(kind: EditorKind, scope: Scope) -> AllowlistEditor {
    let saved = match scope {
        Scope::Global => global_saved(),
        Scope::Project => allowlist(&["notes_add", "gone_tool"], &["ext__proj_tools", "gone"]),
    };
    AllowlistEditor::new(kind, scope, &inventory(), &saved)
}

proptest! {
    #[test]
    fn rendering_never_exceeds_the_width_or_height(
        (kind, scope) in arb_scope(),
        keys in prop::collection::vec(arb_key(), 0..60),
        width_limit in 0usize..100,
        height in 0usize..30,
    ) {
        let mut editor = editor_for(kind, scope);
        editor.set_ranking(keys.len() % 2 == 0);
        for key in keys {
            if editor.handle_key(key) == EditorOutcome::Cancel {
                break;
            }
            let lines = editor.render(width_limit, height);
            prop_assert!(lines.len() <= height);
            for line in &lines {
                prop_assert!(width(line) <= width_limit, "{line:?} exceeds {width_limit}");
            }
        }
    }

    #[test]
    fn without_space_a_save_returns_the_saved_lists_exactly(
        (kind, scope) in arb_scope(),
        keys in prop::collection::vec(arb_key(), 0..60),
    ) {
        let mut editor = editor_for(kind, scope);
        let saved = editor.save().unwrap();
        for key in keys.into_iter().filter(|k| *k != Key::Space) {
            if let EditorOutcome::Save(lists) = editor.handle_key(key) {
                prop_assert_eq!(&lists, &saved);
            }
        }
        prop_assert_eq!(editor.save().unwrap(), saved);
    }

    #[test]
    fn a_save_never_drops_a_saved_name_nobody_touched(
        (kind, scope) in arb_scope(),
        keys in prop::collection::vec(arb_key(), 0..80),
    ) {
        let mut editor = editor_for(kind, scope);
        let saved = editor.save().unwrap();
        // Names whose own row (or, for tools, whose group's rows) received a Space.
        let mut touched_tools = HashSet::new();
        let mut touched_groups = HashSet::new();
        for key in keys {
            if key == Key::Space {
                match editor.cursor_target() {
                    Some(CursorTarget::Tool(name)) => {
                        touched_tools.insert(name);
                    }
                    Some(CursorTarget::Group(key)) => {
                        touched_groups.insert(key);
                    }
                    _ => {}
                }
            }
            editor.handle_key(key);
        }
        let Ok(out) = editor.save() else {
            // Only the unpinnable server can refuse a save, and it was never saved before.
            prop_assert!(touched_groups.contains(&GroupKey::for_mcp_server(&long_server())));
            return Ok(());
        };
        let member_of_touched = |name: &str| {
            editor.groups.iter().any(|g| {
                touched_groups.contains(&g.key) && g.members.iter().any(|m| m == name)
            })
        };
        for name in &saved.tools {
            let kept = out.tools.contains(name)
                || touched_tools.contains(name.as_str())
                || member_of_touched(name.as_str());
            prop_assert!(kept, "{} was dropped", name);
        }
        for key in &saved.groups {
            let pinned_member_unchecked = editor.groups.iter().any(|g| {
                &g.key == key && g.members.iter().any(|m| touched_tools.contains(m))
            });
            let kept = out.groups.contains(key)
                || touched_groups.contains(key)
                || pinned_member_unchecked;
            prop_assert!(kept, "{} was dropped", key);
        }
    }

    #[test]
    fn space_twice_on_a_header_leaves_the_pin_alone_or_nothing(
        (kind, scope) in arb_scope(),
        keys in prop::collection::vec(arb_key(), 0..60),
        pick in 0usize..8,
    ) {
        let mut editor = editor_for(kind, scope);
        for key in keys {
            if editor.handle_key(key) == EditorOutcome::Cancel {
                break;
            }
        }
        press(&mut editor, &[Key::Escape]); // clear any search: every header is shown
        let headers: Vec<usize> = editor
            .rows()
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Row::GroupHeader(_)))
            .map(|(i, _)| i)
            .collect();
        prop_assume!(!headers.is_empty());
        editor.cursor = headers[pick % headers.len()];
        let before = editor.lists.clone();
        press(&mut editor, &[Key::Space]);
        prop_assert_ne!(&editor.lists, &before, "a header press changes something");
        press(&mut editor, &[Key::Space]);
        // The group ends with no individual pick: pinned by key, or cleared. Nothing outside it
        // changes.
        let Row::GroupHeader(g) = editor.rows()[editor.cursor] else { unreachable!() };
        let group = editor.groups[g].clone();
        prop_assert!(!editor.lists.tools.iter().any(|t| group.members.contains(t)));
        let outside = |lists: &Lists| -> (Vec<String>, Vec<GroupKey>) {
            (
                lists.tools.iter().filter(|t| !group.members.contains(t)).cloned().collect(),
                lists.groups.iter().filter(|k| **k != group.key).cloned().collect(),
            )
        };
        prop_assert_eq!(outside(&editor.lists), outside(&before));
    }
}

/// The rows' targets from the top, with every group expanded.
fn order(editor: &AllowlistEditor) -> Vec<CursorTarget> {
    let mut editor = editor.clone();
    for g in &mut editor.groups {
        g.expanded = true;
    }
    editor
        .rows()
        .into_iter()
        .map(|r| editor.target_of(r))
        .collect()
}

#[test]
fn relevance_orders_within_each_section_and_keeps_the_cursor_and_the_lists() {
    let mut editor = global_editor();
    let (tools, groups) = editor.rank_targets();
    assert!(groups.is_empty());
    assert!(tools.contains(&"mcp__kb__query".to_owned()));
    assert!(tools.contains(&"ask_host".to_owned()));
    assert!(
        !tools.iter().any(|t| t == "read" || t == "old_tool"),
        "no built-in, no stale"
    );
    assert!(
        tools.contains(&"notes_find".to_owned()) && !tools.contains(&"notes_add".to_owned()),
        "a mixed-scope group's tool of this scope is ranked, one by one"
    );
    let before = order(&editor);
    go_to(&mut editor, &group(GroupKey::for_mcp_server("kb")));
    press(&mut editor, &[Key::Space]);
    let lists = editor.save().unwrap();
    editor.set_ranking(true);
    assert!(screen(&editor).contains("ranking…"));
    let scores: HashMap<String, f64> = [
        ("mcp__dev_radius__status", 0.9),
        ("mcp__dev_radius__search", 0.1),
        ("web_search", 0.8),
        ("mcp__kb__query", 0.95),
        ("notes_find", 0.7),
        ("ask_host", 0.2),
    ]
    .iter()
    .map(|(n, s)| ((*n).to_owned(), *s))
    .collect();
    editor.set_relevance(&scores, &HashMap::new());
    assert!(!editor.is_ranking());
    assert!(!screen(&editor).contains("ranking…"));
    assert_eq!(
        editor.cursor_target(),
        Some(group(GroupKey::for_mcp_server("kb"))),
        "the cursor stays on its row"
    );
    assert_eq!(editor.save().unwrap(), lists, "ranking selects nothing");
    let after = order(&editor);
    assert_eq!(after.len(), before.len());
    let pos = |t: &CursorTarget| after.iter().position(|x| x == t).unwrap();
    let kb = pos(&group(GroupKey::for_mcp_server("kb")));
    let radius = pos(&group(GroupKey::for_mcp_server("dev-radius")));
    let web = pos(&group(GroupKey::for_extension("@acme/pi-web")));
    // MCP servers still come before extensions; within them the best first.
    assert!(kb < radius && radius < web, "{after:?}");
    assert!(
        pos(&tool("mcp__dev_radius__status")) < pos(&tool("mcp__dev_radius__search"))
            && pos(&tool("mcp__dev_radius__search")) < pos(&tool("mcp__dev_radius__fetch")),
        "members by score, unscored last"
    );
    assert!(pos(&tool("notes_find")) < pos(&tool("ask_host")));
    assert_eq!(
        after[0],
        CursorTarget::BuiltinHeader,
        "built-ins stay first"
    );
    assert_eq!(
        after.last(),
        before.last(),
        "(not loaded) entries stay last"
    );
}

#[test]
fn the_flat_editor_ranks_groups() {
    let mut editor = AllowlistEditor::new(
        EditorKind::Groups,
        Scope::Global,
        &inventory(),
        &ScopedAllowlist::default(),
    );
    let (tools, groups) = editor.rank_targets();
    assert!(tools.is_empty());
    assert!(groups.contains(&GroupKey::for_extension("@acme/pi-web")));
    let first_ext = |e: &AllowlistEditor| {
        order(e)
            .into_iter()
            .find(|t| matches!(t, CursorTarget::Group(k) if k.kind() == GroupKind::Extension))
    };
    let scores: HashMap<GroupKey, f64> = [(GroupKey::for_mcp_server("kb"), 0.9)]
        .into_iter()
        .collect();
    editor.set_relevance(&HashMap::new(), &scores);
    assert_eq!(order(&editor)[0], group(GroupKey::for_mcp_server("kb")));
    assert_eq!(
        first_ext(&editor),
        Some(group(GroupKey::for_extension("@acme/pi-web")))
    );
}
