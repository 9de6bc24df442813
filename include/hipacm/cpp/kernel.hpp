// SPDX-License-Identifier: MIT
// kernel.hpp - readers of a hipacm_kernel's lists and of the fields a newer plugin appends.
#ifndef HIPACM_CPP_KERNEL_HPP
#define HIPACM_CPP_KERNEL_HPP

#include <hipacm/hipacm.h>

#include <cstddef>
#include <string_view>
#include <vector>

namespace hipacm {

namespace detail {

/// The plugin writes a hipacm_kernel only up to its own struct_size: a field that ends past it
/// belongs to a newer ABI than the loaded plugin's and holds nothing to read.
inline bool kernel_has(const hipacm_kernel& k, size_t field_end) noexcept {
  return k.struct_size >= field_end;
}

/// Where the ABI 1.2 function list (function_names, functions, num_functions) ends.
inline constexpr size_t kKernelFunctionsEnd =
    offsetof(hipacm_kernel, num_functions) + sizeof(size_t);

}  // namespace detail

/// The lowered (mangled) names of a kernel, in name-expression order.
inline std::vector<std::string_view> lowered_names(const hipacm_kernel& k) {
  std::vector<std::string_view> names;
  for (size_t i = 0; i < k.num_lowered_names; ++i) names.emplace_back(k.lowered_names[i]);
  return names;
}

/// True when the code object came from the persistent cache (ABI 1.2; false from an older
/// plugin, which has no cache).
inline bool from_cache(const hipacm_kernel& k) noexcept {
  return detail::kernel_has(k, offsetof(hipacm_kernel, from_cache) + sizeof(int32_t)) &&
         k.from_cache != 0;
}

/// With Config::load_device, the loaded module (a hipModule_t on AMD targets, a CUmodule on
/// NVIDIA ones), owned by the future; otherwise, or from a plugin older than ABI 1.2, NULL.
inline void* loaded_module(const hipacm_kernel& k) noexcept {
  return detail::kernel_has(k, offsetof(hipacm_kernel, module) + sizeof(void*)) ? k.module
                                                                                : nullptr;
}

/// Every kernel in the code object, sorted by name (ABI 1.2; empty from an older plugin).
inline std::vector<std::string_view> function_names(const hipacm_kernel& k) {
  std::vector<std::string_view> names;
  if (!detail::kernel_has(k, detail::kKernelFunctionsEnd) || k.function_names == nullptr)
    return names;
  for (size_t i = 0; i < k.num_functions; ++i) names.emplace_back(k.function_names[i]);
  return names;
}

/// One entry per function_names entry, in that order: with Config::load_device the resolved
/// hipFunction_t / CUfunction, otherwise NULL (ABI 1.2; empty from an older plugin).
inline std::vector<void*> functions(const hipacm_kernel& k) {
  std::vector<void*> handles;
  if (!detail::kernel_has(k, detail::kKernelFunctionsEnd)) return handles;
  if (k.functions == nullptr) return std::vector<void*>(k.num_functions, nullptr);
  handles.assign(k.functions, k.functions + k.num_functions);
  return handles;
}

}  // namespace hipacm

#endif  // HIPACM_CPP_KERNEL_HPP
