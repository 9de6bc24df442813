// SPDX-License-Identifier: MIT
// environment.h - the one way hipacm reads environment variables: secure_getenv, empty as unset.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hipacm::backend {

/// The value of environment variable `name`, read with secure_getenv: in a
/// setuid, setgid or file-capability process (AT_SECURE) every variable reads
/// as unset, so the person who started a privileged host cannot choose its
/// worker binary, compiler libraries, cache or log. An empty value counts as
/// unset, as it does for every variable hipacm reads.
std::optional<std::string> environment_value(const char* name);

/// The value of `name` exactly as a compiler running in this process reads it (unset is nullopt,
/// an empty value is kept). Only for recording what the compiler will see, such as keying its
/// include search list; never to choose what hipacm itself does (environment_value() is for
/// that, and honours nothing in a privileged process).
std::optional<std::string> compiler_visible_value(std::string_view name);

/// True in a setuid, setgid or file-capability process (the kernel's
/// AT_SECURE), where environment_value() honours nothing.
bool privileged_process();

/// The environment for a hipacm-worker: the host's, with TMPDIR set to
/// `temp_dir`. In a privileged host every HIPACM_* variable is dropped as
/// well, because the worker may not run in secure mode itself and would
/// otherwise honour what the host ignores.
std::vector<std::string> worker_environment(const std::string& temp_dir);

}  // namespace hipacm::backend
