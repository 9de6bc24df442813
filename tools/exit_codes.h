// exit_codes.h - tools/common/exit_codes.h under its former path, for the manifest fuzz target.
#pragma once

#include "tools/common/exit_codes.h"
