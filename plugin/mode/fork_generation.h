// fork_generation.h - counts fork()s so that objects made in a parent are recognised in a child.
#pragma once

#include <cstdint>

namespace hipacm {

/// Incremented in the child after every fork(). A mode or future stamped with
/// an older generation belongs to the parent: its threads do not exist here.
std::uint64_t fork_generation() noexcept;

/// Installs the pthread_atfork handlers once (idempotent, thread-safe).
void install_fork_handlers() noexcept;

}  // namespace hipacm
