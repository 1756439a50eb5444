# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The processes and listening ports of one lab run, read from /proc, and what a run left behind.

Every process of a lab control plane names its run directory on its command line (data dir, kubeconfig,
pki), while other labs on the machine (a developer's, another test run) use the same binaries with other
run directories: so a run's processes are those naming its directory, and nothing else is ever touched.
"""

from __future__ import annotations

import os
import re
import signal


def _read(path, mode="r"):
    try:
        with open(path, mode) as handle:  # pylint: disable=unspecified-encoding
            return handle.read()
    except OSError:
        return None


def processes_of_run(run_dir):
    """{pid: program name} of every process naming run_dir (or a path below it) on its command line."""
    naming = re.compile(re.escape(run_dir.rstrip("/")) + r"(?![\w.-])")
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        raw = _read("/proc/%s/cmdline" % entry, "rb")
        if not raw:
            continue
        argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
        if any(naming.search(arg) for arg in argv):
            try:
                program = os.path.basename(os.path.realpath("/proc/%s/exe" % entry))
            except OSError:
                program = ""
            found[int(entry)] = program or os.path.basename(argv[0])
    return found


def _listening_inodes():
    """{socket inode: port} of every TCP socket in LISTEN state (IPv4 and IPv6)."""
    inodes = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in (_read(table) or "").splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A":
                inodes[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    return inodes


def listening_ports(pids=None):
    """TCP ports in LISTEN state: all of them, or those of the given processes."""
    inodes = _listening_inodes()
    if pids is None:
        return set(inodes.values())
    ports = set()
    for pid in pids:
        fd_dir = "/proc/%d/fd" % pid
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                ports.add(inodes[target[8:-1]])
    return ports


class Leftovers:
    """What a lab run left after it went down: its processes, the watched ports still open, its directory."""

    def __init__(self, run_dir, watched_ports):
        self.run_dir = run_dir
        self.processes = processes_of_run(run_dir)
        self.ports = set(watched_ports) & listening_ports()
        self.run_dir_exists = os.path.exists(run_dir)

    def __bool__(self):
        return bool(self.processes or self.ports or self.run_dir_exists)

    def problems(self):
        """One line per thing left, for a failure message."""
        lines = []
        if self.processes:
            lines.append("processes of %s left after the lab went down: %s" % (self.run_dir, self.processes))
        if self.ports:
            lines.append("ports still listening after the lab went down: %s" % sorted(self.ports))
        if self.run_dir_exists:
            lines.append("run directory left behind: %s" % self.run_dir)
        return lines

    def kill(self):
        """SIGKILL the processes naming this run's directory (never anything else)."""
        for pid in self.processes:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def what_is_left(run_dir, watched_ports=()):
    """The "nothing of the lab is left" check: falsy when nothing of the run is left."""
    return Leftovers(run_dir, watched_ports)
