//! Running a recursive phase on a thread with a stack of its own.
//!
//! The parser, the checker and the lowering recurse over syntax and typed
//! trees: once per nesting level and once per operator of a chain
//! (`1 + 1 + ... + 1` is a tree as deep as it is long). Their stack needs are
//! bounded by the parser's limits ([`crate::parser::MAX_DEPTH`] and
//! [`crate::parser::MAX_EXPR_DEPTH`]) but exceed what the caller's thread may
//! have (test threads get 2 MiB). Such a phase runs on a scoped thread whose
//! stack is reserved up front and committed only as far as it is used.

/// Stack of a phase thread: enough for [`crate::parser::MAX_EXPR_DEPTH`]
/// levels of the checker, the interpreter or the lowering in unoptimized
/// builds (each uses up to about 16 KiB per level there).
pub const PHASE_STACK_SIZE: usize = 1 << 30;

/// Runs `f` on a new thread named `name` with a [`PHASE_STACK_SIZE`] stack;
/// `None` (and `f` dropped unrun) if no such thread can be started. A panic
/// in `f` is resumed on the calling thread.
pub fn on_phase_stack<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name(name.to_string())
            .stack_size(PHASE_STACK_SIZE)
            .spawn_scoped(scope, f)
            .ok()?;
        Some(
            handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        )
    })
}
