# SPDX-License-Identifier: MIT
"""setuptools hook: a platform wheel when the plugin's binaries were copied in.

The metadata lives in pyproject.toml. A plain source tree builds the pure
package (py3-none-any). scripts/build-wheel.sh copies libhipacm.so.1, its
worker, the ``hipacm`` CLI and their non-system libraries into ``hipacm/``
first; the wheel is then tagged for this platform and installs the ``hipacm``
command.
"""

import sysconfig
from pathlib import Path
from typing import Any, Dict

from setuptools import setup

PACKAGE = Path(__file__).resolve().parent / "hipacm"

# pyproject.toml lists the scripts as dynamic, so setuptools wants them set here.
options: Dict[str, Any] = {"entry_points": {}}
if (PACKAGE / "libhipacm.so.1").is_file():
    # ctypes only, so any Python 3 runs it; the binaries fix the platform.
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    options["options"] = {"bdist_wheel": {"plat_name": platform, "python_tag": "py3"}}
    if (PACKAGE / "hipacm").is_file():
        options["entry_points"] = {"console_scripts": ["hipacm = hipacm._cli:main"]}

setup(**options)
