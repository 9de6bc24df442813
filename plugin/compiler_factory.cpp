// compiler_factory.cpp - picks the compile step (in-process or worker processes) for a mode.
#include "plugin/compiler_factory.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include "hip_backend/inprocess_compiler.h"

namespace hipacm {
namespace {

struct Override {
  boost::mutex mutex;
  CompilerFactory factory;
};

Override& override_slot() {
  static Override instance;
  return instance;
}

}  // namespace

std::shared_ptr<backend::Compiler> make_compiler(const ModeSettings& settings) {
  {
    Override& o = override_slot();
    boost::lock_guard<boost::mutex> lock(o.mutex);
    if (o.factory) return o.factory(settings);
  }
  return std::make_shared<backend::InProcessCompiler>();
}

void set_compiler_factory_for_testing(CompilerFactory factory) {
  Override& o = override_slot();
  boost::lock_guard<boost::mutex> lock(o.mutex);
  o.factory = std::move(factory);
}

}  // namespace hipacm
