//! Soak: 10,000 tools (100 MCP servers and 200 extensions), a branch of 100,000 entries, and
//! 100,000 gated calls per second through the `Session` for 60 seconds (`SOAK_SECONDS` to
//! change). Reports the latency percentiles, the slowest call, and the resident memory after
//! warm-up and at the end. Run: `cargo bench -p context-decisions --bench soak`.

#![allow(missing_docs, clippy::print_stdout)]

use context_decisions::session::{
    BranchRead, InventoryRead, Session, SettingsRead, StartEvent, StartReason, ToolCallEvent,
};
use pcd_gate::ProjectRead;
use pcd_ledger::{encode_round, Basis, Boundary, Round, CUSTOM_TYPE};
use pcd_model::{DecisionProvider, Mode, Settings};
use serde_json::json;
use std::time::{Duration, Instant};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn branch() -> Vec<serde_json::Value> {
    let mut entries = Vec::with_capacity(100_000);
    let mut parent = serde_json::Value::Null;
    let mut push = |mut e: serde_json::Value, entries: &mut Vec<serde_json::Value>| {
        let id = format!("{:08x}", entries.len() + 1);
        e["id"] = json!(id);
        e["parentId"] = parent.clone();
        parent = json!(id);
        entries.push(e);
    };
    let mut round_no = 0;
    while entries.len() < 100_000 {
        if entries.len() % 100 == 0 {
            round_no += 1;
            let mut round = Round::new(
                format!("r{round_no}"),
                Mode::Tools,
                Boundary::Prompt,
                Basis::Scored,
            );
            // About a tenth of the tools become available over the session; the first round
            // considered them all, so the rest are blocked without a lazy score.
            round.tools = vec![format!("tool_{:05}", (round_no * 7) % 10_000)];
            if round_no == 1 {
                round.considered = (0..10_000).map(|k| format!("tool_{k:05}")).collect();
            }
            for data in encode_round(&round).unwrap() {
                push(
                    json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data}),
                    &mut entries,
                );
            }
        } else {
            let role = if entries.len() % 2 == 0 {
                "user"
            } else {
                "assistant"
            };
            push(
                json!({"type": "message", "message": {"role": role, "content": "text"}}),
                &mut entries,
            );
        }
    }
    entries
}

fn main() {
    let seconds: u64 = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    if std::env::args().any(|a| a == "--list") {
        println!("soak: benchmark");
        return;
    }
    let mut settings = Settings::default();
    settings.tools.enabled = true;
    settings.decision.provider = DecisionProvider::Embedded;
    let entries = branch();
    let (mut session, _) = Session::start(StartEvent {
        reason: StartReason::Startup,
        nonce: "soak".into(),
        settings: SettingsRead::Read(settings),
        project: ProjectRead::Absent,
        mcp_origins: vec![],
        branch: BranchRead::Entries(entries),
    });
    session.refresh_inventory(InventoryRead::Tools(pcd_gate::fixture::tools()));
    let calls: Vec<ToolCallEvent> = (0..10_000)
        .map(|i| ToolCallEvent {
            tool: format!("tool_{:05}", (i * 7919) % 10_000),
            server: None,
        })
        .chain([ToolCallEvent {
            tool: "tool_00001".into(),
            server: Some(Ok("server-1".into())),
        }])
        .collect();
    let rate = 100_000u64;
    // Latencies in 10 ns buckets up to 1 ms, and the slower ones kept exactly: a fixed-size
    // record, so the process's memory is the Session's.
    let mut buckets = vec![0u64; 100_000];
    let mut slow: Vec<u32> = Vec::new();
    let mut samples: u64 = 0;
    let start = Instant::now();
    let mut warm_rss = 0;
    let mut issued: u64 = 0;
    let (mut allowed, mut blocked) = (0u64, 0u64);
    let mut slowest = (Duration::ZERO, String::new());
    while start.elapsed() < Duration::from_secs(seconds) {
        // Pace to the target rate: never ahead of `rate` calls per second.
        let due = (start.elapsed().as_secs_f64() * rate as f64) as u64;
        if issued >= due {
            std::thread::yield_now();
            continue;
        }
        for _ in 0..(due - issued).min(1000) {
            let call = &calls[(issued as usize) % calls.len()];
            let t = Instant::now();
            let outcome = session.tool_call(call);
            let took = t.elapsed();
            if outcome.block.is_some() {
                blocked += 1
            } else {
                allowed += 1
            }
            if took > slowest.0 {
                slowest = (took, call.tool.clone());
            }
            let ns = took.as_nanos().min(u128::from(u32::MAX)) as u32;
            match buckets.get_mut((ns / 10) as usize) {
                Some(count) => *count += 1,
                None => slow.push(ns),
            }
            samples += 1;
            issued += 1;
        }
        if warm_rss == 0 && start.elapsed() >= Duration::from_secs(5.min(seconds / 2)) {
            warm_rss = rss_kib();
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let end_rss = rss_kib();
    slow.sort_unstable();
    let pct = |p: f64| {
        let rank = ((samples as f64 - 1.0) * p) as u64;
        let mut seen = 0u64;
        for (i, count) in buckets.iter().enumerate() {
            seen += count;
            if seen > rank {
                return (i as u32) * 10;
            }
        }
        slow[(rank - seen) as usize]
    };
    let max = slow.last().copied().unwrap_or_else(|| {
        buckets
            .iter()
            .rposition(|c| *c > 0)
            .map_or(0, |i| i as u32 * 10)
    });
    println!(
        "soak: {issued} calls in {elapsed:.1} s ({:.0}/s; {allowed} allowed, {blocked} blocked) over 10,000 tools and a 100,000-entry branch",
        issued as f64 / elapsed
    );
    println!(
        "latency: p50 {} ns, p99 {} ns, p99.9 {} ns, max {} ns (slowest call: {})",
        pct(0.5),
        pct(0.99),
        pct(0.999),
        max,
        slowest.1
    );
    println!("memory: {warm_rss} KiB resident after warm-up, {end_rss} KiB at the end");
}
