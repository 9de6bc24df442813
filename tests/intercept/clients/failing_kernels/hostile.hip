// SPDX-License-Identifier: MIT
#include "d+x@1.h"
#error hostile.hip:1 and d+x@1.h:2 in text
__global__ void k(int* p) { auto f = [](int x) { return x; }; struct { int a; } s; p[0] = f(s); }
