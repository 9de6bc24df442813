// SPDX-License-Identifier: MIT
// setting_list.cpp - the list of every HIPACM_* environment variable: name, values, default, the
// config field it stands in for, who may set it, and what it means. The only place in the
// library, the worker and the tool that names them (docs/SETTINGS.md is checked against it).
#include <array>

#include "support/settings.h"

namespace hipacm::settings {
namespace {

constexpr Audience kUsers = Audience::kUsers;
constexpr Audience kTools = Audience::kTools;
constexpr Audience kTests = Audience::kTests;

constexpr std::array<Info, static_cast<std::size_t>(Id::kCount)> kList = {{
    {Id::kArch, "HIPACM_ARCH", "an arch (`gfx90a`, `gfx90a:xnack-`, `sm_90`)", "the GPU's", "arch",
     kUsers,
     "the arch a mode compiles for when its config names none, and the tool's default arch; "
     "`sm_` and `compute_` archs select NVRTC",
     ""},
    {Id::kIsolation, "HIPACM_ISOLATION",
     "`auto`, `in-process` or `process`; `service=auto`, `on` or `off`; or both, comma-separated "
     "(`process,service=off`)",
     "`auto` (and `service=auto`)", "isolation", kUsers,
     "where compiles run: for a mode whose config says AUTO, in worker processes, in the host, or "
     "(`auto`) in workers when `hipacm-worker` is found; and, for every host, where workers come "
     "from: this user's compile service, which keeps warm workers between processes (`auto`: "
     "except "
     "in a host that is PID 1 or a child subreaper; `on`: in every host), or each process's own "
     "(`off`)",
     ""},
    {Id::kWorker, "HIPACM_WORKER", "a path", "beside `libhipacm.so`, or `<prefix>/libexec/hipacm/`",
     "", kUsers, "the `hipacm-worker` binary to run", ""},
    {Id::kIdleMs, "HIPACM_IDLE_MS", "milliseconds, or two: `WORKER,SERVICE`", "60000,300000", "",
     kUsers,
     "how long an idle warm worker waits before it retires, and how long a compile service with no "
     "worker in use waits before it exits; one number sets both, and an empty part keeps its "
     "default",
     ""},
    {Id::kServiceFork, "HIPACM_SERVICE_FORK", "`on` or `off`", "`on`", "", kUsers,
     "`off`: the compile service spawns its workers instead of forking them from its warm state "
     "(it spawns anyway once a compiler has started threads in it)",
     ""},
    {Id::kPrestartWorkers, "HIPACM_PRESTART_WORKERS", "`off`, `on` or a number of workers", "`off`",
     "", kUsers,
     "workers a mode starts and warms when it is entered, before its first submit (`on`: "
     "`max_workers`)",
     ""},
    {Id::kMachineJobs, "HIPACM_MACHINE_JOBS", "a count, or `off`", "the online CPUs", "", kUsers,
     "compiles of this user (in workers or in a host) that may run at once on this machine, "
     "across all hipacm processes",
     ""},
    {Id::kRuntimeDir, "HIPACM_RUNTIME_DIR", "a path",
     "`$XDG_RUNTIME_DIR/hipacm`, else `/tmp/hipacm-<uid>`", "", kUsers,
     "the private directory of the machine budget's slots, the compile service's socket, the "
     "runtime-header PCHs and, with the cache off, the remembered library facts",
     ""},
    {Id::kHiprtcPch, "HIPACM_HIPRTC_PCH", "`on`, `off` or `check`", "`on`", "", kUsers,
     "whether workers use a PCH of hipRTC's runtime header that hipRTC emitted and a plain compile "
     "confirmed; `check` uses it but compiles every kernel plainly too and returns the plain "
     "result",
     ""},
    {Id::kHiprtcLibrary, "HIPACM_HIPRTC_LIBRARY", "a path or soname",
     "`libhiprtc.so.7`, `.6`, `.5`, `libhiprtc.so`, then `libamdhip64.so.5`, in the ROCm trees", "",
     kUsers, "the hipRTC library to load (the only one tried)", ""},
    {Id::kComgrLibrary, "HIPACM_COMGR_LIBRARY", "a path or soname", "the comgr that hipRTC loads",
     "", kUsers,
     "the comgr that lists the supported archs; one that is not hipRTC's own is refused as a mixed "
     "ROCm pair",
     ""},
    {Id::kHipRuntimeLibrary, "HIPACM_HIP_RUNTIME_LIBRARY", "a path or soname",
     "the one beside hipRTC, then `libamdhip64.so.7`, `.6`, `.5`", "", kUsers,
     "the HIP runtime that loads code objects onto a device", ""},
    {Id::kNvrtcLibrary, "HIPACM_NVRTC_LIBRARY", "a path or soname",
     "`libnvrtc.so.13`, `.12`, `.11`, then `$CUDA_HOME/lib64`, `/usr/local/cuda/lib64`", "", kUsers,
     "the NVRTC library for `sm_` and `compute_` archs (the only one tried)", ""},
    {Id::kCudaDriverLibrary, "HIPACM_CUDA_DRIVER_LIBRARY", "a path or soname", "`libcuda.so.1`", "",
     kUsers, "the CUDA driver library that loads code objects onto an NVIDIA device", ""},
    {Id::kCache, "HIPACM_CACHE", "`off`, `read` or `readwrite`", "`readwrite`", "cache_policy",
     kUsers, "the cache policy of a mode whose config says DEFAULT", ""},
    {Id::kCacheDir, "HIPACM_CACHE_DIR", "a path",
     "`$XDG_CACHE_HOME/hipacm`, else `~/.cache/hipacm`", "cache_dir", kUsers,
     "the read-write cache directory of a mode whose config names none; `%r` becomes the rank "
     "under `warmup --mpi`",
     ""},
    {Id::kSystemCache, "HIPACM_SYSTEM_CACHE", "a path", "none", "", kUsers,
     "a read-only cache database (or a directory holding `kernels.sqlite3`) consulted beneath the "
     "user cache",
     ""},
    {Id::kCacheMaxBytes, "HIPACM_CACHE_MAX_BYTES", "bytes, or a number with K, M, G or T", "2 GiB",
     "", kUsers, "the user cache's size bound, kept by evicting the least recently used entries",
     ""},
    {Id::kRemoteCache, "HIPACM_REMOTE_CACHE", "`redis://[user[:password]@]host[:port][/db]`",
     "none", "remote_cache", kUsers,
     "a Redis server shared by many machines, read on a local miss and (with "
     "`HIPACM_REMOTE_CACHE_MODE=read-write`) written after a compile; entries are served only when "
     "they verify against `HIPACM_REMOTE_CACHE_KEY_FILE`",
     ""},
    {Id::kRemoteCacheMode, "HIPACM_REMOTE_CACHE_MODE", "`read` or `read-write`", "`read`", "",
     kUsers, "whether this process may write the remote cache (only a holder of the key can)", ""},
    {Id::kRemoteCacheKeyFile, "HIPACM_REMOTE_CACHE_KEY_FILE", "a path (a file of mode 0600)",
     "none: nothing from the remote cache is served", "", kUsers,
     "the HMAC-SHA256 key that signs the entries a writer puts and that every entry read must "
     "verify against",
     ""},
    {Id::kRemoteCachePasswordFile, "HIPACM_REMOTE_CACHE_PASSWORD_FILE",
     "a path (a file of mode 0600)", "none", "", kUsers,
     "the Redis password, for a URL that names none: it then never appears in a command line", ""},
    {Id::kRemoteCacheTimeoutMs, "HIPACM_REMOTE_CACHE_TIMEOUT_MS", "milliseconds, 1 to 60000", "250",
     "", kUsers,
     "the limit on connecting to the remote cache and on each command; after repeated failures "
     "the remote cache is not asked again for a while",
     ""},
    {Id::kLog, "HIPACM_LOG", "`off`, `error`, `warning`, `info` or `debug`", "`warning`", "",
     kUsers, "what hipacm writes to stderr (a host may take the lines instead)", ""},
    {Id::kRecord, "HIPACM_RECORD", "a path", "none", "", kUsers,
     "a file that every request the host compiles (cache hits included) is appended to, one JSON "
     "line each, for `hipacm warmup FILE` to replay",
     ""},
    {Id::kMpiRoundBytes, "HIPACM_MPI_ROUND_BYTES", "bytes, from 4 KiB to 1 GiB", "256 MiB", "",
     kUsers, "`warmup --mpi`: what a rank sends in one round of the exchange of code objects", ""},
    {Id::kCompileService, "HIPACM_COMPILE_SERVICE", "`auto`, `on` or `off`", "`auto`", "", kUsers,
     "deprecated: where workers come from, now `HIPACM_ISOLATION`'s `service=`; where set, it "
     "still "
     "applies, over `HIPACM_ISOLATION`",
     "HIPACM_ISOLATION"},
    {Id::kWorkerIdleMs, "HIPACM_WORKER_IDLE_MS", "milliseconds", "60000", "", kUsers,
     "deprecated: the idle time of workers, now the first number of `HIPACM_IDLE_MS`; where set, "
     "it "
     "still applies, over `HIPACM_IDLE_MS`",
     "HIPACM_IDLE_MS"},
    {Id::kServiceIdleMs, "HIPACM_SERVICE_IDLE_MS", "milliseconds", "300000", "", kUsers,
     "deprecated: the idle time of the compile service, now the second number of "
     "`HIPACM_IDLE_MS`; where set, it still applies, over `HIPACM_IDLE_MS`",
     "HIPACM_IDLE_MS"},
    {Id::kRunStats, "HIPACM_RUN_STATS", "a path", "none", "", kTools,
     "set by `hipacm run --stats` for the programs it runs: the private file that the intercept "
     "library appends one line per compile to (RUN.md)",
     ""},
    {Id::kTestHooks, "HIPACM_TEST_HOOKS", "`1`", "unset", "", kTests,
     "the one switch of the test hooks below: without it, `hipacm-worker` and `warmup --mpi` "
     "ignore them, so a stray setting never breaks a real run",
     ""},
    {Id::kWorkerFault, "HIPACM_WORKER_FAULT", "a fault list (`crash-segv:when=MARK`, ...)", "none",
     "", kTests, "faults a worker injects into its compiles (WORKERS.md)", ""},
    {Id::kMpiTestDieRank, "HIPACM_MPI_TEST_DIE_RANK", "a rank", "none", "", kTests,
     "the rank of `warmup --mpi` that exits after its first compile", ""},
}};

// The list is indexed by Id: each entry must sit at its own position.
constexpr bool in_id_order() {
  for (std::size_t i = 0; i < kList.size(); ++i)
    if (static_cast<std::size_t>(kList[i].id) != i) return false;
  return true;
}
static_assert(in_id_order(), "kList must hold one entry per Id, in Id order");

}  // namespace

std::span<const Info> list() { return kList; }

const Info& info(Id id) { return kList[static_cast<std::size_t>(id)]; }

const char* audience_word(Audience audience) {
  switch (audience) {
    case Audience::kUsers:
      return "users";
    case Audience::kTools:
      return "tools";
    case Audience::kTests:
      return "tests";
  }
  return "tests";
}

}  // namespace hipacm::settings
