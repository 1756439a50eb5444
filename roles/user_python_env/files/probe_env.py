"""What user_python_env needs to know of the host, read as the job user with the interpreter the environment is
made from, printed as JSON. Reads only: the environment's folder and its stamp, conda, the wheelhouse, and what a
compile of Horovod needs.

    probe_env.py '{"dir": ..., "stamp": ..., "conda": ..., "wheelhouse": ..., "horovod": ..., "kind": ...}'
"""

import glob
import json
import os
import re
import shutil
import sys
import sysconfig


def read_stamp(path):
    try:
        with open(path, encoding="utf-8") as stamp:
            return json.load(stamp)
    except (OSError, ValueError):
        return {}


def find_conda(named, kind):
    """The conda to use: the one named, else (kind auto or conda) the first on PATH or $CONDA_EXE."""
    if named:
        return os.path.expanduser(named)
    if kind == "venv":
        return None
    return shutil.which("conda") or (os.environ.get("CONDA_EXE") if os.access(os.environ.get("CONDA_EXE", ""), os.X_OK) else None)


def horovod_wheel(wheelhouse, version, python_tag):
    """A Horovod wheel of this version the environment's Python can install, by its file name."""
    pattern = re.compile(r"horovod-%s-(%s|py3)[^-]*-[^-]+-[^-]+\.whl$" % (re.escape(version), python_tag))
    names = sorted(os.path.basename(path) for path in glob.glob(os.path.join(wheelhouse, "horovod-*.whl")))
    return next((name for name in names if pattern.match(name)), None)


def main(args):
    env = os.path.abspath(os.path.expanduser(args["dir"]))
    python_tag = "cp%d%d" % sys.version_info[:2]
    wheelhouse = args.get("wheelhouse")
    conda = find_conda(args.get("conda"), args["kind"])
    kind = args["kind"] if args["kind"] != "auto" else ("conda" if conda else "venv")
    compile_tools = {
        "a C++ compiler (c++, g++)": bool(shutil.which("c++") or shutil.which("g++")),
        "OpenMPI's mpicxx (libopenmpi-dev, or a module)": bool(shutil.which("mpicxx")),
    }
    if kind == "venv":
        # A conda environment brings its own.
        compile_tools["Python's headers (python3-dev)"] = os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
    result = {
        "kind": kind,
        "home": os.path.expanduser("~"),
        "env": env,
        "env_entries": sorted(os.listdir(env))[:5] if os.path.isdir(env) else None,
        "stamp": read_stamp(os.path.join(env, args["stamp"])),
        "python_version": "%d.%d" % sys.version_info[:2],
        "conda": conda,
        "conda_executable": bool(conda) and os.path.isfile(conda) and os.access(conda, os.X_OK),
        "wheelhouse_found": bool(wheelhouse) and os.path.isdir(wheelhouse),
        "horovod_wheel": horovod_wheel(wheelhouse, args["horovod"], python_tag) if wheelhouse else None,
        # What compiling Horovod needs; a non-root user cannot install it, so it is named before anything changes.
        "compile_tools_missing": sorted(name for name, found in compile_tools.items() if not found),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
