// SPDX-License-Identifier: MIT
/* status_probe.h - declares the C helpers of status_probe.c for the C++ ABI tests. */
#ifndef HIPACM_TESTS_ABI_STATUS_PROBE_H
#define HIPACM_TESTS_ABI_STATUS_PROBE_H

#include <hipacm/hipacm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* hipacm_status_string((hipacm_status)value), called from C. */
const char* hipacm_abi_probe_status_string(int value);

#ifdef __cplusplus
}
#endif

#endif /* HIPACM_TESTS_ABI_STATUS_PROBE_H */
