//! How a compilation uses threads.
//!
//! Modules are processed `jobs` at a time on a pool of the compilation's
//! own; results are always collected in module order, so the output does
//! not depend on the number of threads.
//!
//! With one job no pool is made and the work runs on the calling thread.
//! Besides saving the threads, this matters when the caller is itself a
//! worker of another rayon pool (the differential tester checks many
//! programs at once): a worker that waits for a job on a second pool keeps
//! stealing jobs of its own pool meanwhile, on the same stack, and with
//! every stolen job waiting in turn the stack overflows.

use anyhow::{anyhow, Result};
use rayon::prelude::*;

/// Applies `f` to every item, `jobs` at a time; the results are in item
/// order.
pub fn map<T: Sync, R: Send>(
    jobs: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    if jobs <= 1 {
        return Ok(items.iter().map(f).collect());
    }
    Ok(thread_pool(jobs)?.install(|| items.par_iter().map(f).collect()))
}

/// Applies `f` to every item in place, `jobs` at a time; the results are in
/// item order.
pub fn map_mut<T: Send, R: Send>(
    jobs: usize,
    items: &mut [T],
    f: impl Fn(&mut T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    if jobs <= 1 {
        return Ok(items.iter_mut().map(f).collect());
    }
    Ok(thread_pool(jobs)?.install(|| items.par_iter_mut().map(f).collect()))
}

/// A pool of `jobs` threads (at least one) for one compilation.
fn thread_pool(jobs: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| anyhow!("cannot start {jobs} compile threads: {e}"))
}
