// SPDX-License-Identifier: MIT
// hipacm.hpp - a header-only C++17 RAII layer over the hipacm C ABI (hipacm.h).
#ifndef HIPACM_HIPACM_HPP
#define HIPACM_HIPACM_HPP

/*
 * Thin, exception-based C++ wrappers:
 *
 *   hipacm::Mode mode(hipacm::Config().arch("gfx90a"));     // claims the slot
 *   hipacm::Future f = mode.submit(hipacm::Request(src).key("vadd"));
 *   mode.exit();                        // throws hipacm::CompileError on a failed compile
 *   const hipacm_kernel& k = f.result(); // throws hipacm::Error
 *   bool hit = hipacm::from_cache(k);    // fields newer than the plugin read as absent
 *
 * - Mode is a guard: its destructor exits the mode (collecting every compile)
 *   and never throws; a failure is logged to stderr. So the slot is freed also
 *   while an exception unwinds.
 * - Future is a counted reference: copying retains, destruction releases. It
 *   stays valid after its mode has exited.
 * - Exceptions are thrown only on the C++ side, never through the C
 *   callbacks: a finalize callable that throws marks the future
 *   HIPACM_ERROR_FINALIZE_FAILED (the exception's what() becomes the
 *   message), and an exception from a cleanup callable is logged and dropped.
 * - Each submit hands the plugin its own copy of the request's finalize and
 *   cleanup callables. That copy is destroyed exactly once: right after it
 *   has run; or, when the plugin never attached it (the submit was a dedup
 *   hit) or never ran it, when the mode exits (for hipacm::compile, when the
 *   last Future copy is destroyed).
 */

// The layer is split by concept; this umbrella is the one header to include.
#include <hipacm/hipacm.h>

#include <hipacm/cpp/callbacks.hpp>  // detail: finalize/cleanup callables behind the C callbacks
#include <hipacm/cpp/compile.hpp>    // compile, BackendInfo, backend_info
#include <hipacm/cpp/config.hpp>     // Isolation, CachePolicy, Config
#include <hipacm/cpp/error.hpp>      // Status, Error
#include <hipacm/cpp/future.hpp>     // Future, CompileError
#include <hipacm/cpp/kernel.hpp>     // lowered_names, from_cache, loaded_module, function_names
#include <hipacm/cpp/mode.hpp>       // Mode, active_mode_is_set
#include <hipacm/cpp/request.hpp>    // Request

#endif  // HIPACM_HIPACM_HPP
