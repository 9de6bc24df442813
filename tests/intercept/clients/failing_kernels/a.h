// SPDX-License-Identifier: MIT
#include "sub/b.h"
__device__ int a_fn() { return undeclared_a; }
#warning hello from a
