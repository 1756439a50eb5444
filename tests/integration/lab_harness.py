# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the lab's processes and listening ports through /proc, to prove that nothing is left behind."""

from __future__ import annotations

import os
import signal


def _read(path, mode="r"):
    try:
        with open(path, mode) as handle:  # pylint: disable=unspecified-encoding
            return handle.read()
    except OSError:
        return None


def _pids():
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def processes_using(bin_dir, run_dir, only_run_dir=False):
    """Processes running a binary from bin_dir or naming run_dir on their command line: {pid: description}.

    With only_run_dir, just those naming run_dir: the processes of one lab.
    """
    bin_dir = os.path.realpath(bin_dir)
    found = {}
    for pid in _pids():
        if pid == os.getpid():
            continue
        raw = _read("/proc/%d/cmdline" % pid, "rb")
        if not raw:
            continue
        argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
        try:
            exe = os.path.realpath("/proc/%d/exe" % pid)
        except OSError:
            exe = ""
        in_bin = exe.startswith(bin_dir + os.sep)
        names_run_dir = any(run_dir in arg for arg in argv)
        if names_run_dir or (in_bin and not only_run_dir):
            found[pid] = {"exe": os.path.basename(exe) or argv[0], "names_run_dir": names_run_dir}
    return found


def _listening_inodes():
    """{socket inode: port} for every TCP socket in LISTEN state (IPv4 and IPv6)."""
    inodes = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        text = _read(table) or ""
        for line in text.splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[3] == "0A":
                inodes[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
    return inodes


def listening_ports(pids):
    """TCP ports the given processes listen on."""
    inodes = _listening_inodes()
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
            if target.startswith("socket:["):
                port = inodes.get(target[8:-1])
                if port is not None:
                    ports.add(port)
    return ports


class Leftovers:
    """What a lab left after it went down: processes naming its run directory, and ports still open."""

    def __init__(self, bin_dir, run_dir, ports):
        self.bin_dir = bin_dir
        self.run_dir = run_dir
        self.watched_ports = set(ports)

    def processes(self):
        """Processes of this lab still running: {pid: binary name}."""
        return {pid: info["exe"] for pid, info in processes_using(self.bin_dir, self.run_dir, only_run_dir=True).items()}

    def ports(self):
        """Ports that processes of this run listened on and that something still listens on."""
        return self.watched_ports & set(_listening_inodes().values())

    def kill(self):
        """SIGKILL the processes of this run's directory (never anything else)."""
        for pid in processes_using(self.bin_dir, self.run_dir, only_run_dir=True):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
