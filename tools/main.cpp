// SPDX-License-Identifier: MIT
// main.cpp - the hipacm executable: the tool without MPI (warmup --mpi runs through hipacm-mpi).
#include "tools/common/commands.h"

int main(int argc, char** argv) { return hipacm::cli::run_tool(argc, argv, nullptr); }
