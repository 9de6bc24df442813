// SPDX-License-Identifier: MIT
// mode_registry.h - the process-wide mode slot and the table of live mode handles.
#pragma once

#include <hipacm/hipacm.h>

#include <memory>

#include "plugin/mode/mode.h"

namespace hipacm {

/// Registers `mode` and claims the slot with one compare-and-swap. Throws
/// MODE_ALREADY_ACTIVE (the mode is not registered and nothing else changes).
hipacm_mode* claim_slot(std::shared_ptr<Mode> mode);

/// The mode in the slot, or NULL: an acquire load.
hipacm_mode* active_mode() noexcept;

/// Looks a handle up for submit. Throws INVALID_ARGUMENT for NULL or garbage,
/// MODE_CLOSED for a mode that has exited or belongs to a parent process.
std::shared_ptr<Mode> find_mode_for_submit(hipacm_mode* handle);

/// Starts an exit: validates the handle, lets only one caller win, and resets
/// the slot to NULL (if it still holds this mode) before anything else.
/// Throws INVALID_ARGUMENT for NULL, unknown or already-exiting modes.
std::shared_ptr<Mode> begin_exit(hipacm_mode* handle);

/// Forgets an exited mode. Its handle is never reused: a late submit through
/// it gets MODE_CLOSED, and every other call INVALID_ARGUMENT.
void finish_exit(hipacm_mode* handle) noexcept;

}  // namespace hipacm
