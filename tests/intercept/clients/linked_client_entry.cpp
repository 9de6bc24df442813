// SPDX-License-Identifier: MIT
// linked_client_entry.cpp - nothing of its own: the linked client's main() is in
// hipacm_intercept_linked_client_main (linked_client.cpp), the library that the ROCm matrix also
// links against each root's hipRTC.
