//! Giving memory back after a flood: every few seconds the engine drops
//! the spare capacity of tables that have drained, and glibc's
//! `malloc_trim` returns the freed pages to the kernel (glibc keeps freed
//! heap memory otherwise, so RSS stayed at its flood peak).
//!
//! That alone left about 7-9 MB resident after a 200 000-Interest PIT
//! flood (`tests/daemon_memory.rs`, release build: 6.9 MB before, 15.8 MB
//! 60 s after; trimming every 5 s unconditionally made no difference).
//! `malloc_stats` at that point: the engine thread's arena had 120 MB of
//! system memory and 256 KB in use, yet `malloc_trim(0)` freed nothing
//! more. The cause is glibc's dynamic mmap threshold: freeing a large
//! `mmap`ed block (the flood's grown PIT slab and index, up to 52 MB)
//! raises `M_MMAP_THRESHOLD` to that block's size (capped at 32 MB) and
//! `M_TRIM_THRESHOLD` to twice it, so from then on the arena's free top
//! is kept unless it exceeds ~64 MB, and `malloc_trim` releases only free
//! chunks inside a thread arena, never its top. Pinning both thresholds
//! at glibc's defaults ([`fix_malloc_thresholds`]) turns the adjustment
//! off. Measured with the same flood (release, `malloc_stats` and
//! `/proc/<pid>/smaps` from a script): 6.5 MB before, 152 MB at the peak,
//! 7.0 MB 15 s after, the arena's top released (13.1 MB without the fix,
//! 6.4 MB of it resident in that arena's heap). The test, then bounded at
//! twice the idle RSS and stopping at the first sample under it: release 6.9 MB before, 11.7 MB after within
//! 5 s (was 15.8 MB after 60 s, a failure); debug 15.0 MB before, 19.6 MB
//! after (was 25.1 MB: it passed only because debug's baseline is larger).
//!
//! The `icnfwd` binary allocates with mimalloc, not glibc: glibc's bin
//! searches and consolidation were 15 % of its CPU under loadgen while the
//! Content Store evicted. Both allocators are asked to give memory back,
//! since whichever program runs the shell picks the global allocator:
//! `mi_collect(true)` purges mimalloc's free pages at once (it would
//! otherwise after its purge delay), and the glibc steps above still serve
//! a program linked without mimalloc and the C libraries' own blocks.
//! mimalloc returns memory per page, so a page that still holds one live
//! block stays: after the same flood about 9 MB more than idle stay
//! resident (7.7 -> 196 -> 16.9 MB; glibc 7.0 -> 185 -> 12.5 MB).

use super::Shell;

/// How often spare table capacity is released and the heap trimmed.
pub(super) const TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// glibc's default mmap and trim thresholds, kept fixed (see the module
/// comment): blocks this large or larger are `mmap`ed and unmapped on
/// free, and a free heap top larger than this is returned at once.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_THRESHOLD: i32 = 128 * 1024;

impl Shell {
    /// Releases what the tables no longer need, then trims the heap when
    /// they gave something back.
    pub(super) fn return_memory(&mut self) {
        let freed = self.node.forwarder_mut().shrink_tables();
        if freed {
            trim_heap();
        }
    }
}

/// Stops glibc from raising its mmap and trim thresholds after a large
/// block is freed, which would keep a flood's freed heap resident (glibc
/// only; a no-op elsewhere). Called once at start.
pub(super) fn fix_malloc_thresholds() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's tuning parameters.
    unsafe {
        // Setting either disables the dynamic adjustment; both are set so
        // that neither depends on the other's default.
        libc::mallopt(libc::M_MMAP_THRESHOLD, MALLOC_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, MALLOC_THRESHOLD);
    }
}

/// Returns free heap pages to the kernel: mimalloc's always, glibc's where
/// the C library is glibc.
fn trim_heap() {
    // SAFETY: mi_collect only walks mimalloc's own heaps, from the thread
    // that owns them (the engine's) and the abandoned ones.
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
