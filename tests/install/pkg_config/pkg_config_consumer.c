/* SPDX-License-Identifier: MIT */
/* pkg_config_consumer.c - built with pkg-config's flags alone; checks the installed library. */
#include <hipacm/hipacm.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  const hipacm_provider* hp = hipacm_get_provider(HIPACM_ABI_VERSION);
  const char* success;
  if (hp == NULL) {
    fprintf(stderr, "pkg_config_consumer: no provider table for ABI %d.%d\n",
            HIPACM_ABI_VERSION_MAJOR, HIPACM_ABI_VERSION_MINOR);
    return 1;
  }
  if (hp->abi_version != HIPACM_ABI_VERSION || strcmp(hp->name, "hipacm") != 0) {
    fprintf(stderr, "pkg_config_consumer: table for ABI %#x named '%s', wanted %#x 'hipacm'\n",
            (unsigned)hp->abi_version, hp->name, (unsigned)HIPACM_ABI_VERSION);
    return 1;
  }
  success = hipacm_status_string(HIPACM_SUCCESS);
  if (success == NULL || strcmp(success, hp->status_string(HIPACM_SUCCESS)) != 0) {
    fprintf(stderr, "pkg_config_consumer: status strings disagree\n");
    return 1;
  }
  printf("pkg_config_consumer: ok, hipacm %s (ABI table %#x)\n", hp->version,
         (unsigned)hp->abi_version);
  return 0;
}
