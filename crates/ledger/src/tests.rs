//! Unit and property tests of the pure core: codec, digest, fold.

use crate::*;
use pcd_model::{AuditFindingCode, GroupKey, Mode};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The envelope Pi writes around `appendEntry` data.
fn entry(data: Value, id: &str) -> Value {
    json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data, "id": id,
           "parentId": null, "timestamp": "2026-11-29T17:13:20.686Z"})
}

fn entries_of(round: &Round, chunk: usize) -> Vec<Value> {
    encode_round_chunked(round, chunk)
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(i, d)| entry(d, &format!("{}-{i}", round.id)))
        .collect()
}

fn user(id: &str) -> Value {
    json!({"type": "message", "id": id, "parentId": null,
           "message": {"role": "user", "content": "secret prompt text sk-live-123"}})
}

fn codes(findings: &[pcd_model::AuditFinding]) -> Vec<AuditFindingCode> {
    findings.iter().map(|f| f.code).collect()
}

fn sample() -> Round {
    let mut r = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
    r.tools = vec!["web_fetch".into(), "notes_add".into()];
    r.groups = vec![GroupKey::for_extension("@acme/pi-web")];
    r.allowlisted_tools = vec!["bar_tool".into()];
    r.allowlisted_groups = vec![GroupKey::for_mcp_server("dev-radius")];
    r.considered = vec!["web_fetch".into(), "notes_add".into(), "other".into()];
    r.scores = vec![
        ("web_fetch".into(), Score::from_f64(0.9123).unwrap()),
        ("other".into(), Score::from_f64(0.1).unwrap()),
    ];
    r.threshold = Score::from_f64(0.5);
    r.inventory = Some(inventory_fingerprint(["web_fetch", "notes_add", "other"]));
    r.first_prompt = Some(FirstPromptRef::NextUserMessage);
    r
}

#[test]
fn a_round_round_trips_through_one_entry() {
    let round = sample();
    let data = encode_round(&round).unwrap();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0]["v"], 1);
    assert_eq!(data[0]["scores"][0][1], 0.912);
    assert_eq!(decode_single(&data[0]).unwrap(), {
        let mut r = round.clone();
        r.scores[0].1 = Score::from_thousandths(912).unwrap();
        r
    });
}

#[test]
fn the_fold_makes_names_available_and_answers_queries() {
    let round = sample();
    let mut branch = entries_of(&round, 1000);
    branch.push(json!({"type": "message", "id": "a1", "parentId": null,
                       "message": {"role": "assistant"}}));
    branch.push(user("u1"));
    branch.push(user("u2"));
    let (state, findings) = fold(&branch);
    assert!(findings.is_empty(), "{findings:?}");
    for tool in ["web_fetch", "notes_add", "bar_tool"] {
        assert!(state.is_tool_available(tool), "{tool}");
    }
    assert!(!state.is_tool_available("other"));
    assert!(state.is_group_available(&GroupKey::for_mcp_server("dev_radius")));
    assert!(state.is_group_allowlist_granted("mcp__dev_radius"));
    assert!(state.is_group_available(&GroupKey::for_extension("@acme/pi-web")));
    assert!(state.was_tool_considered("other"));
    assert!(!state.was_tool_considered("bar_tool"));
    assert_eq!(
        state
            .cached_score(Mode::Tools, "web_fetch")
            .map(Score::thousandths),
        Some(912)
    );
    let first = state.first_prompt().unwrap();
    assert_eq!(&*first.round, "r1");
    assert_eq!(first.entry_id.as_deref(), Some("u1"));
    assert_eq!(state.current_mode(), Some(Mode::Tools));
    let summary = &state.rounds()[0];
    assert_eq!(summary.entry_id.as_deref(), Some("r1-0"));
    assert_eq!(summary.new_tools.len(), 3);
    assert_eq!(summary.allowlisted, 2);
}

#[test]
fn large_lists_are_chunked_at_most_1000_names_per_list() {
    let mut round = Round::new("big", Mode::Tools, Boundary::Prompt, Basis::Unscored);
    round.tools = (0..2500).map(|i| format!("t{i}")).collect();
    round.considered = round.tools.clone();
    let data = encode_round(&round).unwrap();
    assert_eq!(data.len(), 3);
    for (i, part) in data.iter().enumerate() {
        assert_eq!(part["part"], i);
        assert_eq!(part["parts"], 3);
        assert_eq!(part["digest"], data[0]["digest"]);
        for list in ["tools", "considered"] {
            assert!(part[list].as_array().unwrap().len() <= MAX_NAMES_PER_CHUNK);
        }
    }
    let (state, findings) = fold(&entries_of(&round, 1000));
    assert!(findings.is_empty());
    assert_eq!(state.available_tools().count(), 2500);
    assert!(state.is_tool_available("t2499"));
}

#[test]
fn a_torn_round_grants_nothing_and_is_reported() {
    let mut round = Round::new("torn", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = (0..30).map(|i| format!("t{i}")).collect();
    let mut branch = entries_of(&round, 10);
    branch.remove(1);
    let (state, findings) = fold(&branch);
    assert_eq!(state.available_tools().count(), 0);
    assert_eq!(codes(&findings), [AuditFindingCode::TornRound]);
    assert_eq!(findings[0].round.as_deref(), Some("torn"));

    // Its first parts, then the next round (a crash while appending, and the session that
    // went on after it): interrupted, not torn, and the next round still counts.
    let mut branch = entries_of(&round, 10);
    branch.truncate(2);
    branch.extend(entries_of(&sample(), 1000));
    let (state, findings) = fold(&branch);
    assert!(!state.is_tool_available("t0"));
    assert!(state.is_tool_available("web_fetch"));
    assert_eq!(codes(&findings), [AuditFindingCode::InterruptedRound]);
    assert!(!findings[0].code.untrusts_branch());

    // A part missing before the last present one is a gap: torn, and the branch is untrusted.
    let mut branch = entries_of(&round, 10);
    branch.remove(0);
    branch.extend(entries_of(&sample(), 1000));
    let (_, findings) = fold(&branch);
    assert_eq!(codes(&findings), [AuditFindingCode::TornRound]);
    assert!(findings[0].code.untrusts_branch());

    // A duplicated part is not a whole round either.
    let mut branch = entries_of(&round, 10);
    branch[1] = branch[0].clone();
    let (state, findings) = fold(&branch);
    assert!(!state.is_tool_available("t0"));
    assert!(codes(&findings).contains(&AuditFindingCode::TornRound));
}

#[test]
fn a_round_cut_short_whose_parts_disagree_was_edited_not_interrupted() {
    // Found by fuzzing (session_fold): an edit of a part's digest or part count in a round that
    // is not whole was reported as an interrupted append, which does not untrust the branch and
    // passes the audit, though the edit changes what the round grants.
    let mut round = Round::new("edited", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = (0..30).map(|i| format!("t{i}")).collect();

    // The first two of three parts, the second with an edited digest.
    let mut branch = entries_of(&round, 10);
    branch.truncate(2);
    let digest = branch[1]["data"]["digest"].as_str().unwrap().to_owned();
    let flipped = if digest.starts_with('0') { "1" } else { "0" };
    branch[1]["data"]["digest"] = json!(format!("{flipped}{}", &digest[1..]));
    let (state, findings) = fold(&branch);
    assert_eq!(state.available_tools().count(), 0);
    assert_eq!(codes(&findings), [AuditFindingCode::DigestMismatch]);
    assert!(findings[0].code.untrusts_branch());

    // Every part there, the last one claiming a fourth part: it looked cut short.
    let mut branch = entries_of(&round, 10);
    branch[2]["data"]["parts"] = json!(4);
    let (state, findings) = fold(&branch);
    assert_eq!(state.available_tools().count(), 0);
    assert_eq!(codes(&findings), [AuditFindingCode::DigestMismatch]);

    // Followed by another round, the same.
    branch.extend(entries_of(&sample(), 1000));
    let (state, findings) = fold(&branch);
    assert!(state.is_tool_available("web_fetch") && !state.is_tool_available("t0"));
    assert_eq!(codes(&findings), [AuditFindingCode::DigestMismatch]);

    // Parts that agree, cut short: still an interrupted append.
    let mut branch = entries_of(&round, 10);
    branch.truncate(2);
    let (_, findings) = fold(&branch);
    assert_eq!(codes(&findings), [AuditFindingCode::InterruptedRound]);
}

#[test]
fn parts_in_any_order_with_other_entries_between_still_count() {
    let mut round = Round::new("spread", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = (0..30).map(|i| format!("t{i}")).collect();
    let mut branch = entries_of(&round, 10);
    branch.swap(0, 2);
    branch.insert(1, json!({"type": "label", "id": "l1", "parentId": null}));
    let (state, findings) = fold(&branch);
    assert!(findings.is_empty());
    assert_eq!(state.available_tools().count(), 30);
}

#[test]
fn an_altered_round_grants_nothing_and_is_reported() {
    let mut branch = entries_of(&sample(), 1000);
    branch[0]["data"]["tools"][0] = json!("evil_tool");
    let (state, findings) = fold(&branch);
    assert!(!state.is_tool_available("evil_tool"));
    assert!(!state.is_tool_available("notes_add"));
    assert_eq!(codes(&findings), [AuditFindingCode::DigestMismatch]);

    // Parts that disagree about the digest.
    let mut round = Round::new("two", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = vec!["a".into(), "b".into()];
    let mut branch = entries_of(&round, 1);
    branch[1]["data"]["digest"] = json!("0".repeat(64));
    let (state, findings) = fold(&branch);
    assert!(!state.is_tool_available("a"));
    assert_eq!(codes(&findings), [AuditFindingCode::DigestMismatch]);
}

#[test]
fn undecodable_entries_are_reported_and_skipped() {
    let good = encode_round(&sample()).unwrap().remove(0);
    let mut extra = good.clone();
    extra["description"] = json!("hidden text");
    let mut bad_score = good.clone();
    bad_score["scores"][0][1] = json!(0.12345);
    let mut spaced = good.clone();
    spaced["tools"][0] = json!("two words");
    let mut bad_group = good.clone();
    bad_group["groups"][0] = json!("not-a-key");
    for (i, data) in [
        json!("string"),
        json!({"v": 1}),
        extra,
        bad_score,
        spaced,
        bad_group,
    ]
    .into_iter()
    .enumerate()
    {
        let (state, findings) = fold(&[entry(data, "x1")]);
        assert_eq!(
            codes(&findings),
            [AuditFindingCode::Undecodable],
            "case {i}"
        );
        assert_eq!(findings[0].entry_id.as_deref(), Some("x1"));
        assert_eq!(state.available_tools().count(), 0, "case {i}");
    }
    let missing_data = json!({"type": "custom", "customType": CUSTOM_TYPE, "id": "x2"});
    assert_eq!(
        codes(&fold(&[missing_data]).1),
        [AuditFindingCode::Undecodable]
    );
}

#[test]
fn an_unknown_version_is_skipped_with_a_finding() {
    let mut data = encode_round(&sample()).unwrap().remove(0);
    data["v"] = json!(2);
    data["whatever"] = json!({"new": true});
    let (state, findings) = fold(&[entry(data, "f1")]);
    assert_eq!(codes(&findings), [AuditFindingCode::UnknownVersion]);
    assert!(!findings[0].code.is_tampering());
    assert_eq!(state.available_tools().count(), 0);

    // Issue 18, finding 2: no version before 1 ever existed, so `"v": 0` is damage, not a
    // future version.
    let mut data = encode_round(&sample()).unwrap().remove(0);
    data["v"] = json!(0);
    let (state, findings) = fold(&[entry(data, "f2")]);
    assert_eq!(codes(&findings), [AuditFindingCode::Undecodable]);
    assert!(findings[0].code.is_tampering());
    assert_eq!(state.available_tools().count(), 0);
}

#[test]
fn other_types_and_custom_types_are_ignored() {
    let data = encode_round(&sample()).unwrap().remove(0);
    let branch = [
        json!({"type": "custom", "customType": "other-extension", "data": data, "id": "o1"}),
        json!({"type": "custom_message", "customType": CUSTOM_TYPE, "content": "x", "id": "o2"}),
        json!({"type": "compaction", "id": "o3"}),
        json!(null),
        json!([1, 2]),
    ];
    let (state, findings) = fold(&branch);
    assert!(findings.is_empty());
    assert_eq!(state, BranchState::new());
}

#[test]
fn cached_scores_belong_to_the_current_task() {
    let mut first = Round::new("p1", Mode::Tools, Boundary::Prompt, Basis::Scored);
    first.scores = vec![("a".into(), Score::from_f64(0.4).unwrap())];
    let mut tool_round = Round::new("t1", Mode::Tools, Boundary::ToolRound, Basis::Scored);
    tool_round.scores = vec![("b".into(), Score::from_f64(0.3).unwrap())];
    let mut next = Round::new("p2", Mode::Tools, Boundary::Prompt, Basis::Scored);
    next.scores = vec![("c".into(), Score::from_f64(0.2).unwrap())];

    let mut branch = entries_of(&first, 1000);
    branch.extend(entries_of(&tool_round, 1000));
    let (state, _) = fold(&branch);
    assert!(state.cached_score(Mode::Tools, "a").is_some());
    assert!(state.cached_score(Mode::Tools, "b").is_some());
    branch.extend(entries_of(&next, 1000));
    let (state, _) = fold(&branch);
    assert!(state.cached_score(Mode::Tools, "a").is_none());
    assert_eq!(state.cached_scores(Mode::Tools).count(), 1);
    assert!(state.cached_score(Mode::Mcp, "c").is_none());
}

#[test]
fn mode_history_and_group_candidates() {
    let tools = Round::new("m1", Mode::Tools, Boundary::InitialPrompt, Basis::Unscored);
    let mut mcp = Round::new("m2", Mode::Mcp, Boundary::Prompt, Basis::Scored);
    mcp.considered = vec!["mcp__kb".into(), "ext__notes".into()];
    mcp.scores = vec![("mcp__kb".into(), Score::from_f64(0.8).unwrap())];
    mcp.groups = vec![GroupKey::for_mcp_server("kb")];
    let mcp_again = Round::new("m3", Mode::Mcp, Boundary::ToolRound, Basis::Scored);
    let mut branch = entries_of(&tools, 1000);
    branch.extend(entries_of(&mcp, 1000));
    branch.extend(entries_of(&mcp_again, 1000));
    let (state, findings) = fold(&branch);
    assert!(findings.is_empty());
    let history: Vec<_> = state
        .mode_history()
        .iter()
        .map(|m| (&*m.round, m.mode))
        .collect();
    assert_eq!(history, [("m1", Mode::Tools), ("m2", Mode::Mcp)]);
    assert!(state.was_group_considered(&GroupKey::for_extension("notes")));
    assert!(!state.was_tool_considered("mcp__kb"));
    assert!(state.cached_score(Mode::Mcp, "mcp__kb").is_some());

    // In mcp mode a candidate must be a canonical group key.
    let mut bad = Round::new("m4", Mode::Mcp, Boundary::Prompt, Basis::Scored);
    bad.considered = vec!["web_fetch".into()];
    assert!(matches!(
        encode_round(&bad),
        Err(EncodeError::NotAGroupKey { .. })
    ));
}

#[test]
fn the_first_prompt_is_the_first_anchor_and_a_known_id_is_kept() {
    let mut later = Round::new("r2", Mode::Tools, Boundary::Prompt, Basis::Scored);
    later.first_prompt = Some(FirstPromptRef::NextUserMessage);
    let mut branch = entries_of(&sample(), 1000);
    branch.push(user("u1"));
    branch.extend(entries_of(&later, 1000));
    branch.push(user("u2"));
    let (state, _) = fold(&branch);
    assert_eq!(
        state.first_prompt().unwrap().entry_id.as_deref(),
        Some("u1")
    );

    let mut known = Round::new("k", Mode::Tools, Boundary::InitialPrompt, Basis::Scored);
    known.first_prompt = Some(FirstPromptRef::Entry("abcd1234".into()));
    let (state, _) = fold(&entries_of(&known, 1000));
    assert_eq!(
        state.first_prompt().unwrap().entry_id.as_deref(),
        Some("abcd1234")
    );
}

#[test]
fn the_live_path_matches_the_fold() {
    let round = sample();
    let mut live = BranchState::new();
    live.apply_round(&round, Some("r1-0"), Some("2026-11-29T17:13:20.686Z"));
    live.observe_user_message("u1");
    let mut branch = entries_of(&round, 1000);
    branch.push(user("u1"));
    assert_eq!(live, fold(&branch).0);
}

#[test]
fn encoding_refuses_what_is_not_a_name_without_echoing_it() {
    let secret = "sk-live-SECRET";
    let mut round = Round::new("r", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = vec![format!("Authorization: Bearer {secret}")];
    let error = encode_round(&round).unwrap_err();
    assert_eq!(
        error,
        EncodeError::Name {
            list: "tools",
            index: 0
        }
    );
    assert!(!error.to_string().contains(secret));
    round.tools = vec!["ok".into()];
    round.id = format!("id with {secret}");
    assert!(!encode_round(&round)
        .unwrap_err()
        .to_string()
        .contains(secret));
    round.id = "r".into();
    round.inventory = Some(secret.into());
    assert_eq!(encode_round(&round), Err(EncodeError::Fingerprint));
    round.inventory = None;
    round.tools = vec![String::new()];
    assert!(encode_round(&round).is_err());
    round.tools = vec!["x".repeat(MAX_NAME_CHARS + 1)];
    assert!(encode_round(&round).is_err());
    assert_eq!(
        encode_round_chunked(
            &Round::new("r", Mode::Tools, Boundary::Prompt, Basis::Scored),
            0
        ),
        Err(EncodeError::ChunkSize)
    );
}

#[test]
fn entries_hold_only_the_documented_fields_and_the_names_given() {
    let data = encode_round(&sample()).unwrap().remove(0);
    let keys: Vec<&str> = data
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "v",
            "round",
            "part",
            "parts",
            "digest",
            "mode",
            "boundary",
            "basis",
            "threshold",
            "inventory",
            "firstPrompt",
            "tools",
            "groups",
            "allowlistTools",
            "allowlistGroups",
            "considered",
            "scores"
        ]
    );
    // The user's prompt text on the branch never enters the state's reports.
    let mut branch = entries_of(&sample(), 1000);
    branch.push(user("u1"));
    let (state, _) = fold(&branch);
    assert!(!format!("{state:?}").contains("sk-live-123"));
}

// ---- properties ----

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..40u32).prop_map(|i| format!("tool_{i}")),
        (0..10u32).prop_map(|i| format!("mcp__srv{i}__t")),
        "[a-zA-Z0-9_.:-]{1,12}",
    ]
}

fn group() -> impl Strategy<Value = GroupKey> {
    prop_oneof![
        (0..12u32).prop_map(|i| GroupKey::for_mcp_server(&format!("srv-{i}"))),
        (0..12u32).prop_map(|i| GroupKey::for_extension(&format!("ext{i}"))),
    ]
}

fn score() -> impl Strategy<Value = Score> {
    (0..=1000u16).prop_map(|t| Score::from_thousandths(t).unwrap())
}

prop_compose! {
    fn round(id: usize)(
        mcp in any::<bool>(),
        boundary in prop::sample::select(Boundary::ALL.to_vec()),
        basis in prop::sample::select(Basis::ALL.to_vec()),
        tools in prop::collection::vec(name(), 0..40),
        groups in prop::collection::vec(group(), 0..12),
        allow_tools in prop::collection::vec(name(), 0..5),
        allow_groups in prop::collection::vec(group(), 0..5),
        considered_tools in prop::collection::vec(name(), 0..40),
        considered_groups in prop::collection::vec(group(), 0..12),
        scores in prop::collection::vec((0..40u32, score()), 0..30),
        threshold in prop::option::of(score()),
        first in prop::option::of(any::<bool>()),
    ) -> Round {
        let mode = if mcp { Mode::Mcp } else { Mode::Tools };
        let mut r = Round::new(format!("r{id}"), mode, boundary, basis);
        r.tools = tools;
        r.groups = groups;
        r.allowlisted_tools = allow_tools;
        r.allowlisted_groups = allow_groups;
        r.considered = if mcp {
            considered_groups.iter().map(|g| g.as_str().to_owned()).collect()
        } else {
            considered_tools
        };
        r.scores = scores
            .into_iter()
            .map(|(i, s)| {
                let name = if mcp { format!("mcp__srv{i}") } else { format!("tool_{i}") };
                (name, s)
            })
            .collect();
        r.threshold = threshold;
        r.first_prompt = first.map(|next| {
            if next { FirstPromptRef::NextUserMessage } else { FirstPromptRef::Entry(format!("e{id}")) }
        });
        r
    }
}

fn rounds() -> impl Strategy<Value = Vec<Round>> {
    (0..6usize).prop_flat_map(|n| (0..n).map(round).collect::<Vec<_>>())
}

/// Damage applied to an encoded branch: drop an entry, edit a name, or insert junk.
#[derive(Debug, Clone)]
enum Damage {
    Drop(usize),
    Edit(usize),
    Junk(usize, u8),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<usize>().prop_map(Damage::Drop),
        any::<usize>().prop_map(Damage::Edit),
        (any::<usize>(), 0..5u8).prop_map(|(i, k)| Damage::Junk(i, k)),
    ]
}

fn junk(kind: u8, i: usize) -> Value {
    let id = format!("j{i}");
    match kind {
        0 => json!({"type": "custom", "customType": CUSTOM_TYPE, "data": {"v": 1}, "id": id}),
        1 => {
            json!({"type": "custom", "customType": CUSTOM_TYPE, "data": {"v": 7, "x": 1}, "id": id})
        }
        2 => json!({"type": "message", "id": id, "message": {"role": "user"}}),
        3 => json!({"type": "custom", "customType": "someone-else", "data": {"v": 1}, "id": id}),
        _ => json!({"type": "compaction", "id": id, "summary": "…"}),
    }
}

fn availability(state: &BranchState) -> (Vec<String>, Vec<String>) {
    let mut tools: Vec<String> = state.available_tools().map(str::to_owned).collect();
    let mut groups: Vec<String> = state.available_groups().map(str::to_owned).collect();
    tools.sort();
    groups.sort();
    (tools, groups)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// No sequence of entries shrinks availability: every prefix's availability is contained in
    /// the next prefix's, whatever damage the branch has.
    #[test]
    fn no_sequence_of_entries_shrinks_availability(
        rounds in rounds(),
        chunk in 1..50usize,
        damages in prop::collection::vec(damage(), 0..6),
    ) {
        let mut branch: Vec<Value> = rounds.iter().flat_map(|r| entries_of(r, chunk)).collect();
        for d in damages {
            let len = branch.len().max(1);
            match d {
                Damage::Drop(i) if !branch.is_empty() => { branch.remove(i % len); }
                Damage::Edit(i) if !branch.is_empty() => {
                    let e = &mut branch[i % len];
                    if let Some(list) = e["data"]["tools"].as_array_mut() {
                        list.push(json!("intruder"));
                    } else {
                        e["data"]["basis"] = json!("scored");
                        e["data"]["tools"] = json!(["intruder"]);
                    }
                }
                Damage::Junk(i, k) => branch.insert(i % (branch.len() + 1), junk(k, i)),
                _ => {}
            }
        }
        let mut previous = (Vec::new(), Vec::new());
        for end in 0..=branch.len() {
            let (state, _) = fold(&branch[..end]);
            let now = availability(&state);
            prop_assert!(previous.0.iter().all(|t| now.0.contains(t)));
            prop_assert!(previous.1.iter().all(|g| now.1.contains(g)));
            previous = now;
        }
    }

    /// The same rounds chunked at any size up to 1000 fold to the same state.
    #[test]
    fn chunk_size_does_not_change_the_state(
        rounds in rounds(),
        a in 1..=1000usize,
        b in 1..8usize,
    ) {
        let encode = |chunk: usize| -> Vec<Value> {
            rounds.iter().flat_map(|r| entries_of(r, chunk)).collect()
        };
        let (sa, fa) = fold(&encode(a));
        let (sb, fb) = fold(&encode(b));
        prop_assert!(fa.is_empty() && fb.is_empty());
        prop_assert_eq!(&sa, &sb);
        prop_assert_eq!(sa.rounds().len(), rounds.len());
    }

    /// Entries of other types and other custom types are ignored wherever they appear.
    #[test]
    fn other_entries_are_ignored(
        rounds in rounds(),
        chunk in 1..20usize,
        inserts in prop::collection::vec((any::<usize>(), 3..5u8), 0..10),
    ) {
        let clean: Vec<Value> = rounds.iter().flat_map(|r| entries_of(r, chunk)).collect();
        let mut noisy = clean.clone();
        for (i, (at, kind)) in inserts.into_iter().enumerate() {
            noisy.insert(at % (noisy.len() + 1), junk(kind, i));
        }
        prop_assert_eq!(fold(&clean), fold(&noisy));
    }

    /// An entry of an unknown future version is skipped with one finding, even between the
    /// parts of a round.
    #[test]
    fn unknown_versions_are_skipped_with_a_warning(
        rounds in rounds(),
        chunk in 1..20usize,
        inserts in prop::collection::vec(any::<usize>(), 0..5),
    ) {
        let clean: Vec<Value> = rounds.iter().flat_map(|r| entries_of(r, chunk)).collect();
        let mut newer = clean.clone();
        for (i, at) in inserts.iter().enumerate() {
            newer.insert(at % (newer.len() + 1), junk(1, i));
        }
        let (clean_state, _) = fold(&clean);
        let (state, findings) = fold(&newer);
        prop_assert_eq!(clean_state, state);
        prop_assert_eq!(findings.len(), inserts.len());
        prop_assert!(findings.iter().all(|f| f.code == AuditFindingCode::UnknownVersion));
    }

    /// Whatever encodes decodes to itself (scores at 3 decimals already).
    #[test]
    fn single_part_rounds_round_trip(r in round(0)) {
        let data = encode_round(&r).unwrap();
        if data.len() == 1 {
            prop_assert_eq!(decode_single(&data[0]).unwrap(), r);
        }
    }
}

/// Every example in `docs/ledger-format.md` decodes and folds cleanly, parts included, and the
/// scorer note's example is passed by.
#[test]
fn the_format_document_examples_are_valid() {
    let doc = include_str!("../../../docs/ledger-format.md");
    let mut branch = Vec::new();
    for (i, block) in doc.split("```json\n").skip(1).enumerate() {
        let text = &block[..block.find("```").unwrap()];
        let data: Value = serde_json::from_str(text.trim()).unwrap();
        if data.get("customType").is_some() {
            // A whole entry of another type (the scorer note): the fold must pass it by.
            let mut whole = data;
            whole["id"] = format!("d{i}").into();
            branch.push(whole);
        } else {
            branch.push(entry(data, &format!("d{i}")));
        }
    }
    assert!(branch.len() >= 10, "{}", branch.len());
    let (state, findings) = fold(&branch);
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(state.rounds().len(), 8);
    assert!(state.is_tool_available("pi_bar_tool"));
    assert!(state.is_group_available(&GroupKey::for_mcp_server("dev-radius")));
}

/// A round of `parts` parts of one name each, as its branch entries (a generator, so no forged
/// file is checked in).
fn one_name_parts(parts: usize) -> Vec<Value> {
    let mut round = Round::new("many", Mode::Tools, Boundary::Prompt, Basis::Unscored);
    round.tools = (0..parts).map(|i| format!("t{i}")).collect();
    entries_of(&round, 1)
}

/// The fastest of three folds of `entries`, in seconds, checking the round counted.
fn fastest_fold(entries: &[Value], parts: usize) -> f64 {
    (0..3)
        .map(|_| {
            let start = std::time::Instant::now();
            let (state, findings) = fold(entries);
            let elapsed = start.elapsed().as_secs_f64();
            assert!(findings.is_empty());
            assert_eq!(state.available_tools().count(), parts);
            elapsed
        })
        .fold(f64::INFINITY, f64::min)
}

/// Issue 18, finding 3: each incoming part was compared with every pending one, so a round of
/// many parts folded in quadratic time. Four times the parts must cost about four times the
/// time (8 leaves room for a shared machine; quadratic is 16).
#[test]
fn a_round_of_many_parts_folds_in_linear_time() {
    let small = one_name_parts(16_000);
    let large = one_name_parts(64_000);
    let (t_small, t_large) = (fastest_fold(&small, 16_000), fastest_fold(&large, 64_000));
    assert!(
        t_large < 8.0 * t_small.max(0.001),
        "16,000 parts: {t_small:.3} s, 64,000 parts: {t_large:.3} s"
    );
}
