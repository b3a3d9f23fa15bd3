//! The allow path makes no heap allocation, counted with a counting global allocator.

// A global allocator is the one place this workspace needs `unsafe`: it only forwards to the
// system allocator and counts.
#![allow(unsafe_code)]

use pcd_gate::{decide, fixture::fixture, Call, GateContext, LazyScores, ServerArg, Verdict};
use pcd_model::Mode;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce() -> Verdict) -> (Verdict, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    let v = f();
    (v, ALLOCATIONS.with(Cell::get) - before)
}

#[test]
fn allow_verdicts_allocate_nothing() {
    let f = fixture();
    let lazy = LazyScores::default();
    let mut allowed = 0;
    for mode in [Mode::Tools, Mode::Mcp] {
        let mut ctx = GateContext::enabled(mode, &f.registry, &f.grants, &lazy);
        ctx.branch = Some(&f.index);
        for name in &f.names {
            let call = Call::tool(name);
            let (v, n) = allocations_during(|| decide(&ctx, &call));
            if v == Verdict::Allow {
                allowed += 1;
                assert_eq!(n, 0, "{name} allowed with {n} allocations in {mode:?}");
            }
        }
        let mut off = ctx;
        off.enabled = false;
        let (v, n) = allocations_during(|| decide(&off, &Call::tool("anything")));
        assert_eq!((v, n), (Verdict::Allow, 0));
    }
    assert!(
        allowed > 3000,
        "the fixture exercises the allow path ({allowed})"
    );
    // The counter does count: a block allocates its code.
    let mut ctx = GateContext::enabled(Mode::Tools, &f.registry, &f.grants, &lazy);
    ctx.branch = Some(&f.index);
    let (v, n) =
        allocations_during(|| decide(&ctx, &Call::resource("tool_00016", ServerArg::Absent)));
    assert!(matches!(v, Verdict::Block(_)));
    assert!(n > 0);
}
