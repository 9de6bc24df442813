/* SPDX-License-Identifier: MIT */
/* leaky_fixture.c - a deliberately wrong library that exported_symbols_test.sh must reject. */

/* Exports hipacm_get_provider but none of the other header functions, plus a function and a
 * variable the header does not declare, and it has no libhipacm SONAME. */
#define FIXTURE_EXPORT __attribute__((visibility("default")))

FIXTURE_EXPORT int hipacm_abi_fixture_data = 1;

FIXTURE_EXPORT int hipacm_abi_fixture_extra(void) { return hipacm_abi_fixture_data; }

FIXTURE_EXPORT const void* hipacm_get_provider(unsigned abi_version) {
  (void)abi_version;
  return 0;
}
