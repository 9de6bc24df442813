// SPDX-License-Identifier: MIT
#warning d+x@1.h:3 in a header
