// SPDX-License-Identifier: MIT
// compiler_factory.cpp - picks the compile step (in-process or worker processes) for a mode.
#include "plugin/mode/compiler_factory.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_locator.h"
#include "plugin/cache/caching_compiler.h"
#include "support/log.h"
#include "support/no_destructor.h"
#include "support/status_error.h"

namespace hipacm {
namespace {

struct Override {
  boost::mutex mutex;
  CompilerFactory factory;
};

Override& override_slot() {
  static backend::NoDestructor<Override> instance;
  return *instance;
}

// The compile step itself, without the cache.
std::shared_ptr<backend::Compiler> make_uncached(const ModeSettings& settings) {
  {
    Override& o = override_slot();
    boost::lock_guard<boost::mutex> lock(o.mutex);
    if (o.factory) return o.factory(settings);
  }
  if (settings.isolation == HIPACM_ISOLATION_IN_PROCESS)
    return std::make_shared<backend::InProcessCompiler>(settings.compile_timeout_ms);

  Expected<std::string> worker = backend::find_worker_binary();
  if (worker)
    return std::make_shared<backend::WorkerCompiler>(
        std::move(worker).value(), settings.max_workers, settings.compile_timeout_ms);
  const std::string why = std::move(worker).failure().message;
  if (settings.isolation == HIPACM_ISOLATION_PROCESS)
    throw StatusError(HIPACM_ERROR_BACKEND_UNAVAILABLE,
                      "isolation is PROCESS but no hipacm-worker was found: " + why);
  // AUTO degrades to correct-but-serial rather than failing the host.
  backend::log_once(backend::LogLevel::kWarning, "no-worker",
                    "hipacm-worker not found, compiling in-process and serially: " + why);
  return std::make_shared<backend::InProcessCompiler>(settings.compile_timeout_ms);
}

}  // namespace

std::shared_ptr<backend::Compiler> make_compiler(const ModeSettings& settings) {
  return cache::with_persistent_cache(settings.cache, settings.remote_cache,
                                      make_uncached(settings));
}

void set_compiler_factory_for_testing(CompilerFactory factory) {
  Override& o = override_slot();
  boost::lock_guard<boost::mutex> lock(o.mutex);
  o.factory = std::move(factory);
}

}  // namespace hipacm
