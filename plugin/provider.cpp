// provider.cpp - hipacm_get_provider: the one symbol a host needs to dlsym.
#include <hipacm/hipacm.h>

namespace {

// Constant-initialised (function addresses and literals only): no global
// constructor runs when the plugin is loaded.
constexpr hipacm_provider kProviderV1 = {
    sizeof(hipacm_provider),
    HIPACM_ABI_VERSION,
    "hipacm",
    HIPACM_VERSION_STRING,
    &(hipacm_mode_config_init),
    &hipacm_mode_enter,
    &hipacm_mode_exit,
    &hipacm_active_mode,
    &hipacm_submit,
    &hipacm_compile,
    &hipacm_future_wait,
    &hipacm_future_status,
    &hipacm_future_result,
    &hipacm_future_key,
    &hipacm_future_log,
    &hipacm_future_error_message,
    &hipacm_future_retain,
    &hipacm_future_release,
    &hipacm_status_string,
    &hipacm_last_error_message,
    &hipacm_get_backend_info,
    &hipacm_mode_config_init_sized,
};

}  // namespace

extern "C" HIPACM_API const hipacm_provider* hipacm_get_provider(uint32_t abi_version) {
  return abi_version == HIPACM_ABI_VERSION_MAJOR ? &kProviderV1 : nullptr;
}
