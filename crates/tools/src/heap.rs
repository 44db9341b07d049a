//! Heap accounting for the benchmarks: a global allocator that counts the
//! bytes live on the heap and their high-water mark, so that `parec bench
//! --scaling` can report each stage's peak memory.
//!
//! The `parec-tools` binary installs [`CountingAlloc`] as its global
//! allocator; a stage calls [`reset_peak`] when it starts (the high-water
//! mark drops to what is live then) and reads [`peak`] when it ends: the
//! most heap bytes live at once during the stage, what the process needed
//! then, including what earlier stages left live. (A difference from the
//! bytes live at the start would not be the stage's own need: a stage may
//! free what an earlier one left — lowering drops the syntax tree — and
//! reuse it.) Counting costs two relaxed atomic operations per allocation.
//!
//! Where the allocator is not installed (the library's tests), everything
//! reads zero and [`installed`] says so.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting (see the module doc).
pub struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters are
// only arithmetic on the sizes the caller passes.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        p
    }
}

/// Whether the running binary counts (it allocated through
/// [`CountingAlloc`] before this call).
pub fn installed() -> bool {
    PEAK.load(Ordering::Relaxed) > 0
}

/// Bytes live on the heap now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Starts a stage: the high-water mark drops to what is live, which is
/// returned.
pub fn reset_peak() -> usize {
    let live = live();
    PEAK.store(live, Ordering::Relaxed);
    live
}

/// The most bytes live since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// A stage's peak memory: the most heap bytes live at once between
/// [`StagePeak::start`] and [`StagePeak::bytes`].
pub struct StagePeak(());

impl StagePeak {
    pub fn start() -> StagePeak {
        reset_peak();
        StagePeak(())
    }

    /// Bytes, or `None` where the allocator does not count.
    pub fn bytes(&self) -> Option<usize> {
        installed().then(peak)
    }
}
