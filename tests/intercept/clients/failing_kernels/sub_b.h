// SPDX-License-Identifier: MIT
#pragma once
__device__ int b_fn() { return undeclared_b; }
