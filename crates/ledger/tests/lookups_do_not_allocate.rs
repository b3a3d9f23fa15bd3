//! The gate asks the branch state on every tool call: those lookups must not allocate. A counting
//! global allocator (this test binary only) checks it.
// A global allocator can only be written with `unsafe`; it forwards to `System` unchanged and
// exists in this test binary alone, never in the library.
#![allow(unsafe_code)]

use pcd_ledger::{encode_round, fold, Basis, Boundary, Round, CUSTOM_TYPE};
use pcd_model::{GroupKey, Mode};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn availability_lookups_do_not_allocate() {
    let mut round = Round::new("r1", Mode::Tools, Boundary::Prompt, Basis::Scored);
    round.tools = (0..2000).map(|i| format!("tool_{i}")).collect();
    round.groups = vec![GroupKey::for_mcp_server("kb")];
    round.considered = round.tools.clone();
    let branch: Vec<_> = encode_round(&round)
        .unwrap()
        .into_iter()
        .map(|data| json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data, "id": "e"}))
        .collect();
    let (state, findings) = fold(&branch);
    assert!(findings.is_empty());
    let kb = GroupKey::for_mcp_server("kb");
    let other = GroupKey::for_mcp_server("other");
    let names: Vec<String> = (0..4000).map(|i| format!("tool_{i}")).collect();

    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut hits = 0;
    for name in &names {
        hits += usize::from(state.is_tool_available(name));
        hits += usize::from(state.was_tool_considered(name));
        hits += usize::from(state.is_group_available(&kb));
        hits += usize::from(state.is_group_available(&other));
        hits += usize::from(state.cached_score(Mode::Tools, name).is_some());
    }
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(hits, 2000 + 2000 + 4000);
    assert_eq!(after - before, 0, "lookups allocated");
}
