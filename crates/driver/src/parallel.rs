//! How a compilation uses threads.
//!
//! Modules are processed `jobs` at a time on a pool of the compilation's
//! own; results are always collected in module order, so the output does
//! not depend on the number of threads.
//!
//! `jobs` is an upper bound, not an order: a pool has at most as many
//! threads as there are items to process, and at most
//! [`THREADS_PER_CORE`] per core the machine gives this process
//! ([`std::thread::available_parallelism`]). Compiling is CPU-bound, so
//! more threads would only wait for a core, and each costs a stack: `-j
//! 100000` used to try to start 100,000 threads and never finish. Any `-j`
//! is accepted (like `make -j`); the bound makes large values harmless.
//!
//! With one thread no pool is made and the work runs on the calling thread.
//! Besides saving the threads, this matters when the caller is itself a
//! worker of another rayon pool (the differential tester checks many
//! programs at once): a worker that waits for a job on a second pool keeps
//! stealing jobs of its own pool meanwhile, on the same stack, and with
//! every stolen job waiting in turn the stack overflows.

use anyhow::{anyhow, Result};
use rayon::prelude::*;

/// Threads per available core a pool may have: two, so that a core whose
/// thread waits (page faults, the allocator) still has work.
pub const THREADS_PER_CORE: usize = 2;

/// The number of threads that process `items` items with `jobs` requested:
/// `min(jobs, items, THREADS_PER_CORE × cores)`, and at least 1.
pub fn thread_count(jobs: usize, items: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    jobs.min(items)
        .min(cores.saturating_mul(THREADS_PER_CORE))
        .max(1)
}

/// Applies `f` to every item, `jobs` at a time; the results are in item
/// order.
pub fn map<T: Sync, R: Send>(
    jobs: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    let threads = thread_count(jobs, items.len());
    if threads == 1 {
        return Ok(items.iter().map(f).collect());
    }
    Ok(thread_pool(threads)?.install(|| items.par_iter().map(f).collect()))
}

/// Applies `f` to every item in place, `jobs` at a time; the results are in
/// item order.
pub fn map_mut<T: Send, R: Send>(
    jobs: usize,
    items: &mut [T],
    f: impl Fn(&mut T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    let threads = thread_count(jobs, items.len());
    if threads == 1 {
        return Ok(items.iter_mut().map(f).collect());
    }
    Ok(thread_pool(threads)?.install(|| items.par_iter_mut().map(f).collect()))
}

/// A pool of `threads` threads for one compilation.
fn thread_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| anyhow!("cannot start {threads} compile threads: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_bounded_by_the_work_and_the_machine() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(thread_count(100_000, 2), 2);
        assert_eq!(thread_count(100_000, 1), 1);
        assert_eq!(thread_count(3, 0), 1);
        assert_eq!(
            thread_count(usize::MAX, usize::MAX),
            cores * THREADS_PER_CORE
        );
        assert_eq!(thread_count(1, 50), 1);
    }
}
