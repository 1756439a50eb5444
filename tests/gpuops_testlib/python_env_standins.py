# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins of the wheels and the sdist the user_python_env role installs, made here without a network.

write_wheel() makes a pure-Python wheel pip installs like any other. The Horovod stand-ins carry a `horovodrun`
whose --check-build prints what the real one prints, for the frameworks, controllers and operations given; the
sdist stand-in builds such a wheel from the HOROVOD_* settings the collection's recipe (horovod_wheel.sh) compiles
with, through an in-tree build backend, so that the compile path runs for real. This file is that backend's helper.
"""

import io
import json
import os
import tarfile
import textwrap
import zipfile

CHECK_BUILD = """Horovod v{version}:

Available Frameworks:
{frameworks}

Available Controllers:
{controllers}

Available Tensor Operations:
{operations}
"""
FRAMEWORKS = ("TensorFlow", "PyTorch", "MXNet")
CONTROLLERS = ("MPI", "Gloo")
OPERATIONS = ("NCCL", "DDL", "CCL", "MPI", "Gloo")


def check_build_text(version, built):
    def ticks(names):
        return "\n".join("    [%s] %s" % ("X" if name in built else " ", name) for name in names)
    return CHECK_BUILD.format(version=version, frameworks=ticks(FRAMEWORKS), controllers=ticks(CONTROLLERS),
                              operations=ticks(OPERATIONS))


def write_wheel(folder, name, version, files, scripts=None):
    """A py3-none-any wheel of name==version holding files {path: text}; scripts {command: 'module:function'}."""
    dist_info = "%s-%s.dist-info" % (name.replace("-", "_"), version)
    files = dict(files)
    files[dist_info + "/METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
    files[dist_info + "/WHEEL"] = "Wheel-Version: 1.0\nGenerator: gpuops-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    if scripts:
        files[dist_info + "/entry_points.txt"] = "[console_scripts]\n" + "".join(
            "%s = %s\n" % item for item in sorted(scripts.items()))
    files[dist_info + "/RECORD"] = "".join("%s,,\n" % path for path in sorted(files)) + dist_info + "/RECORD,,\n"
    path = os.path.join(folder, "%s-%s-py3-none-any.whl" % (name.replace("-", "_"), version))
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in sorted(files.items()):
            wheel.writestr(member, text)
    return path


def horovod_files(version, built, build_env=None):
    """Horovod's package: its version, what it was built with, and a horovodrun that prints it."""
    return {
        "horovod/__init__.py": "__version__ = %r\n" % version,
        "horovod/build_env.json": json.dumps(build_env or {}),
        "horovod/check_build.py": "import sys\n\ndef main():\n    if sys.argv[1:] == ['--check-build']:\n"
                                  "        print(%r)\n" % check_build_text(version, built),
    }


def write_horovod_wheel(folder, version, built):
    return write_wheel(folder, "horovod", version, horovod_files(version, built),
                       scripts={"horovodrun": "horovod.check_build:main"})


BACKEND = r'''
import json, os
from python_env_standins import horovod_files, write_wheel

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = "horovod-%s.dist-info" % VERSION
    os.makedirs(os.path.join(metadata_directory, dist_info))
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w") as metadata:
        metadata.write("Metadata-Version: 2.1\nName: horovod\nVersion: %s\n" % VERSION)
    return dist_info

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    for cmake_lists in ("CMakeLists.txt", "horovod/torch/CMakeLists.txt"):
        assert "set(CMAKE_CXX_STANDARD 17)" in open(cmake_lists).read(), cmake_lists + " was not moved to C++17"
    flags = dict((name, value) for name, value in os.environ.items()
                 if name.startswith("HOROVOD_") or name in ("LDFLAGS", "MAKEFLAGS"))
    built = [name for name, flag in (("TensorFlow", "HOROVOD_WITH_TENSORFLOW"), ("PyTorch", "HOROVOD_WITH_PYTORCH"),
                                     ("MPI", "HOROVOD_WITH_MPI"), ("Gloo", "HOROVOD_WITH_GLOO")) if flags.get(flag) == "1"]
    if flags.get("HOROVOD_GPU_OPERATIONS") == "NCCL":
        built.append("NCCL")
    path = write_wheel(wheel_directory, "horovod", VERSION, horovod_files(VERSION, built, flags),
                       scripts={"horovodrun": "horovod.check_build:main"})
    return os.path.basename(path)
'''


def write_horovod_sdist(folder, version):
    """horovod-<version>.tar.gz: a stand-in source tree with the CMakeLists lines the recipe patches."""
    top = "horovod-%s/" % version
    members = {
        "CMakeLists.txt": "set(CMAKE_CXX_STANDARD 14)\n",
        "horovod/torch/CMakeLists.txt": "set(CMAKE_CXX_STANDARD 14)\n",
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "standin_backend"\nbackend-path = ["."]\n',
        "standin_backend.py": "VERSION = %r\n" % version + textwrap.dedent(BACKEND),
        "python_env_standins.py": open(__file__.replace(".pyc", ".py"), encoding="utf-8").read(),
    }
    path = os.path.join(folder, "horovod-%s.tar.gz" % version)
    with tarfile.open(path, "w:gz") as sdist:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(top + name)
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))
    return path


def write_package(folder, name, version, module=None):
    """A stand-in package that imports as module (the name by default) and knows its version."""
    module = module or name.replace("-", "_")
    return write_wheel(folder, name, version, {module + "/__init__.py": "__version__ = %r\n" % version})
