# SPDX-License-Identifier: MIT
"""The ``hipacm`` console command of a platform wheel: runs the bundled CLI binary."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    """Replaces this process with the ``hipacm`` binary beside the package's modules.

    The binary finds the bundled ``libhipacm.so.1``, its libraries and
    ``hipacm-worker`` through its own ``$ORIGIN`` RUNPATH; nothing is set in
    the environment.
    """
    binary = Path(__file__).resolve().parent / "hipacm"
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        sys.stderr.write(f"hipacm: this installation has no CLI binary at {binary}; "
                         "it comes with the platform wheel (scripts/build-wheel.sh)\n")
        sys.exit(127)
    os.execv(str(binary), ["hipacm", *sys.argv[1:]])
