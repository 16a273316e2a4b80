//! Giving memory back after a flood: every few seconds the engine drops
//! the spare capacity of tables that have drained, and glibc's
//! `malloc_trim` returns the freed pages to the kernel (glibc keeps freed
//! heap memory otherwise, so RSS stayed at its flood peak).

use super::Shell;

/// How often spare table capacity is released and the heap trimmed.
pub(super) const TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

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

/// Returns free heap pages to the kernel (glibc only; a no-op elsewhere).
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}
