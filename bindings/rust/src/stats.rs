// SPDX-License-Identifier: MIT
//! The plugin's process-wide counters (`hipacm_get_stats`, ABI 1.4; the remote cache's, ABI 1.5).

use std::mem::size_of;

use crate::error::Error;
use crate::ffi;

/// `counters! { /// doc  name, ... }`: [`Stats`] and its conversions, from one list.
macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident,)+) => {
        /// Process-wide counters since the plugin was loaded (`hipacm_stats`).
        ///
        /// Each counter only grows: take two snapshots and
        /// [`since`](Stats::since) gives what happened in between. Newer
        /// plugins may add counters, so the struct cannot be built outside
        /// this crate.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub struct Stats {
            $($(#[$doc])* pub $name: u64,)+
        }

        impl Stats {
            fn from_raw(raw: &ffi::hipacm_stats) -> Stats {
                Stats { $($name: raw.$name,)+ }
            }

            /// The counts from `earlier` to `self`, counter by counter.
            pub fn since(&self, earlier: &Stats) -> Stats {
                Stats { $($name: self.$name.wrapping_sub(earlier.$name),)+ }
            }
        }
    };
}

counters! {
    /// Compiler runs started (in-process or in a worker).
    compiles,
    /// Compiler runs that ended with [`Status::Compilation`](crate::Status::Compilation).
    compile_failures,
    /// Requests served from the persistent cache.
    cache_hits,
    /// Cache lookups that found nothing usable.
    cache_misses,
    /// Code objects written to the cache.
    cache_stores,
    /// Code object bytes written to the cache.
    bytes_stored,
    /// Entries removed to keep the cache in its bound.
    cache_evictions,
    /// Code object bytes those entries held.
    bytes_evicted,
    /// `hipacm-worker` processes started.
    worker_spawns,
    /// Workers that died during a compile.
    worker_crashes,
    /// Compiles killed at their compile timeout.
    timeouts,
    /// Requests failed at once from a stored failure ([`Config::cache_failures`](crate::Config::cache_failures)).
    cached_failures,
    /// Local cache misses served from the remote cache
    /// ([`Config::remote_cache`](crate::Config::remote_cache)). This and the
    /// other `remote_*` counters are ABI 1.5's: 0 with a 1.4 plugin.
    remote_hits,
    /// Remote lookups that found nothing.
    remote_misses,
    /// Remote values refused: a bad or missing signature, bounds, or an entry
    /// that does not match the request.
    remote_refused,
    /// Entries put to the remote cache.
    remote_stores,
    /// Puts that found the entry there already (another machine compiled it too).
    remote_duplicates,
    /// Puts that failed or were dropped (the server full or down, the queue full).
    remote_store_failures,
    /// Remote calls that failed or timed out.
    remote_errors,
    /// Compiles served after waiting for another machine's compile of the same kernel.
    remote_waits,
}

/// Where version 1 (ABI 1.4) of `hipacm_stats` ends: after `cached_failures`.
const STATS_V1_SIZE: usize = size_of::<usize>() + 12 * size_of::<u64>();

/// A snapshot of the plugin's counters (ABI 1.4; the `remote_*` ones 1.5).
///
/// Fails with `AbiMismatch` when the loaded plugin is older than ABI 1.4,
/// and with `BackendUnavailable` when libhipacm cannot be loaded.
///
/// ```
/// use hipacm::Request;
///
/// let before = hipacm::stats()?;
/// let src = r#"extern "C" __global__ void twice(int* p) { p[0] *= 2; }"#;
/// hipacm::compile(&Request::new(src), Some("gfx90a"))?.result()?;
/// let delta = hipacm::stats()?.since(&before);
/// println!("{} compiler runs, {} cache hits", delta.compiles, delta.cache_hits);
/// # Ok::<(), hipacm::Error>(())
/// ```
pub fn stats() -> Result<Stats, Error> {
    let plugin = crate::library::load()?;
    let get_stats = plugin.table.get_stats.ok_or_else(|| {
        Error::new(
            ffi::HIPACM_ERROR_ABI_MISMATCH,
            format!(
                "hipacm_get_stats needs a plugin of ABI 1.4; {} implements 1.{}",
                plugin.path.display(),
                plugin.abi_minor()
            ),
        )
    })?;
    // A plugin before ABI 1.5 knows version 1 only: ask for no more (the rest stays 0).
    let struct_size = if plugin.abi_minor() >= 5 {
        size_of::<ffi::hipacm_stats>()
    } else {
        STATS_V1_SIZE
    };
    let mut raw = ffi::hipacm_stats {
        struct_size,
        ..ffi::hipacm_stats::default()
    };
    // SAFETY: struct_size says how much the plugin may write.
    let status = unsafe { get_stats(&mut raw) };
    if status != ffi::HIPACM_SUCCESS {
        return Err(Error::last(status));
    }
    Ok(Stats::from_raw(&raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_every_counter() {
        let raw = ffi::hipacm_stats {
            compiles: 5,
            cached_failures: 3,
            ..ffi::hipacm_stats::default()
        };
        let later = Stats::from_raw(&raw);
        let earlier = Stats {
            compiles: 2,
            ..Stats::default()
        };
        let delta = later.since(&earlier);
        assert_eq!((delta.compiles, delta.cached_failures), (3, 3));
        assert_eq!(later.since(&later), Stats::default());
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn version_one_ends_where_the_remote_counters_begin() {
        assert_eq!(STATS_V1_SIZE, 104);
        let raw = ffi::hipacm_stats::default();
        let base = &raw as *const ffi::hipacm_stats as usize;
        assert_eq!(
            &raw.remote_hits as *const u64 as usize - base,
            STATS_V1_SIZE
        );
    }

    #[test]
    fn a_snapshot_is_monotonic() {
        let first = stats().expect("ABI 1.4 plugin");
        let second = stats().expect("ABI 1.4 plugin");
        assert!(second.compiles >= first.compiles);
        assert!(second.cache_hits >= first.cache_hits);
    }
}
