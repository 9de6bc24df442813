# SPDX-License-Identifier: MIT
# HIPACM_SANITIZE=address turns on ASan+UBSan (no recovery); =thread turns on TSan.
if(HIPACM_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(HIPACM_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT HIPACM_SANITIZE STREQUAL "")
  message(FATAL_ERROR "HIPACM_SANITIZE must be '', 'address' or 'thread', not '${HIPACM_SANITIZE}'")
endif()
