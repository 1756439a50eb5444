# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real network validators for the gpu_network tests, and readers of what they and the role write.

netplan's generator (the program behind "netplan generate") and nmcli from NetworkManager are unpacked
from Debian's packages into the project cache, keyed by the packages' versions (never installed, so this
machine's network is untouched), behind "netplan" and "nmcli" wrappers that the cases put on PATH.
"""

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from gpuops_testlib.ansible_run import CACHE_ROOT
from gpuops_testlib.cache_lock import held

VALIDATOR_PACKAGES = ["netplan.io", "libnetplan0", "network-manager", "libnm0"]


def candidate_versions():
    """{package: the version apt-get download would fetch}, from the local package lists."""
    show = subprocess.run(["apt-cache", "show", "--no-all-versions", *VALIDATOR_PACKAGES],
                          capture_output=True, text=True, check=False)
    versions = {}
    package = None
    for line in show.stdout.splitlines():
        if line.startswith("Package: "):
            package = line.split(": ", 1)[1]
        elif line.startswith("Version: ") and package:
            versions[package] = line.split(": ", 1)[1]
    missing = [name for name in VALIDATOR_PACKAGES if name not in versions]
    if missing:
        pytest.fail("apt-cache knows no version of %s (run apt-get update): %s" % (", ".join(missing), show.stderr))
    return versions


def validators_dir():
    """The cache folder of this set of package versions."""
    key = "_".join("%s-%s" % (name, version) for name, version in sorted(candidate_versions().items()))
    return Path(CACHE_ROOT) / "gpu-network-validators" / key.replace("+", "-").replace(":", "-")


def unpack_validators(final_dir):
    """Download and unpack the packages, write the wrappers, and move the result to final_dir at once."""
    partial = final_dir.with_name(final_dir.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "debs").mkdir(parents=True)
    download = subprocess.run(["apt-get", "download", *VALIDATOR_PACKAGES], cwd=partial / "debs",
                              capture_output=True, text=True, check=False)
    if download.returncode != 0:
        pytest.fail("cannot fetch the validators' Debian packages " + " ".join(VALIDATOR_PACKAGES)
                    + " with apt-get download (run apt-get update?):\n" + download.stderr)
    for deb in sorted((partial / "debs").glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(partial / "root")], check=True)
    libs = partial / "root" / "usr" / "lib" / "x86_64-linux-gnu"
    assert libs.is_dir(), f"no {libs} in the unpacked packages"
    final_root = final_dir / "root"
    final_libs = final_root / "usr" / "lib" / "x86_64-linux-gnu"
    wrappers = {
        # "netplan generate [--root-dir DIR]" is the CLI's front for this program.
        "netplan": (
            '#!/bin/sh\n'
            '[ "$1" = generate ] || { echo "this netplan runs only generate" >&2; exit 2; }\n'
            'shift\n'
            f'LD_LIBRARY_PATH="{final_libs}" exec "{final_root}/usr/libexec/netplan/generate" "$@"\n'
        ),
        "nmcli": f'#!/bin/sh\nLD_LIBRARY_PATH="{final_libs}" exec "{final_root}/usr/bin/nmcli" "$@"\n',
    }
    (partial / "bin").mkdir()
    for name, text in wrappers.items():
        (partial / "bin" / name).write_text(text)
        (partial / "bin" / name).chmod(0o755)
    shutil.rmtree(final_dir, ignore_errors=True)
    partial.rename(final_dir)


def unpacked_validators():
    """A directory with "netplan" (generate only) and "nmcli" wrappers around Debian's binaries. The integration tier's
    two workers may both ask for it from a cold cache: the first unpacks it under a lock, the second then finds it."""
    final_dir = validators_dir()
    bin_dir = final_dir / "bin"
    with held("gpu-network-validators"):
        if not (bin_dir / "nmcli").exists():
            unpack_validators(final_dir)
    probe = subprocess.run([str(bin_dir / "nmcli"), "--version"], capture_output=True, text=True, check=False)
    assert probe.returncode == 0, f"the unpacked nmcli does not run: {probe.stderr}"
    return bin_dir


def nmcli_reads(bin_dir, keyfile):
    """The keyfile as NetworkManager normalises it after reading and verifying it."""
    with open(keyfile, "rb") as stdin:
        proc = subprocess.run([str(bin_dir / "nmcli"), "--offline", "connection", "modify"],
                              stdin=stdin, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"nmcli --offline rejects {keyfile}: {proc.stderr}"
    return ini(proc.stdout)


def ini(text):
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return parser


def unit_sections(path):
    """A systemd .network/.netdev file as a list of (section, {key: [values]}); sections repeat."""
    sections = []
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            sections.append((line.strip("[]"), {}))
        else:
            key, value = line.split("=", 1)
            sections[-1][1].setdefault(key, []).append(value)
    return sections


def nccl_lines(root):
    return [line for line in (root / "etc/nccl.conf").read_text().splitlines() if line and not line.startswith("#")]


def mode(path):
    return oct(path.stat().st_mode & 0o777)


def netplan_generate(bin_dir, root):
    """Run netplan's generator over root and return the systemd-networkd files it produced."""
    proc = subprocess.run([str(bin_dir / "netplan"), "generate", "--root-dir", str(root)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"netplan generate rejects the configuration: {proc.stderr}"
    out = root / "run/systemd/network"
    return {path.name: unit_sections(path) for path in out.iterdir()}
