# Warning flags shared by every hipacm target: -Wall -Wextra -Werror with GCC and Clang.
function(hipacm_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wformat=2)
endfunction()
