# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a gpuops.cluster role for many cases in one ansible-playbook run, each case an inventory host.

The RHEL, Ubuntu and DGX OS paths of the node roles cannot converge on the Debian lab nodes, so the unit
tests render them on this machine instead. Starting ansible-playbook costs seconds, so a test file renders
all its cases at once: each case is a host (connection local) with its own platform facts, its own scratch
root, its own environment (fake grubby / update-grub / nvidia-smi first on PATH, their state files) and its
own role variables. The roles' private path variables are extra vars templated with the host's root
("{{ case_root }}/etc/fstab"), so they keep the precedence of extra vars while each host writes under its
own root. A host that fails stops only itself; each test then reads its own host's share of the document.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import yaml

from gpuops_testlib.ansible_run import ansible_env, run_playbook, write_play

CASE_ROOT = "{{ case_root }}"


def platform_facts(distribution, version, os_family, **more):
    """The facts a role branches on, for one platform (major version from the version)."""
    return dict({"distribution": distribution, "distribution_version": version,
                 "distribution_major_version": version.split(".")[0], "os_family": os_family}, **more)


def _host_facts(distribution, version, os_family, kernel, memtotal_mb, service_mgr="openrc"):
    return platform_facts(distribution, version, os_family, kernel=kernel, architecture="x86_64",
                          memtotal_mb=memtotal_mb, service_mgr=service_mgr,
                          virtualization_role="host", virtualization_type="kvm")


# The node roles' platforms: the facts they read, as gather_facts reports them on such a host.
NODE_FACTS = {
    "ubuntu2204": _host_facts("Ubuntu", "22.04", "Debian", "5.15.0-105-generic", 2063731),
    "rhel9": _host_facts("RedHat", "9.4", "RedHat", "5.14.0-427.13.1.el9_4.x86_64", 1031680),
    "debian12": _host_facts("Debian", "12.15", "Debian", "6.1.0-31-amd64", 24105),
    "sles15": _host_facts("SLES", "15.5", "Suse", "5.14.21-150500.55.39-default", 515000, service_mgr="systemd"),
}

PLAY = {
    "name": "Each case's role, rendered with the case's platform facts",
    "hosts": "all",
    "gather_facts": False,
    "environment": "{{ case_environment }}",
    "tasks": [
        {"name": "Stand in for the target's facts",
         "ansible.builtin.set_fact": {"{{ item.key }}": "{{ item.value }}", "cacheable": True},
         "loop": "{{ case_facts | dict2items }}", "loop_control": {"label": "{{ item.key }}"}},
        {"name": "Run the role", "ansible.builtin.include_role": {"name": "gpuops.cluster.{{ case_role }}"}},
    ],
}


def write_fake_tool(bin_dir, name, script):
    """A stand-in for a node tool: a Python script on PATH."""
    bin_dir = Path(bin_dir)
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!" + sys.executable + "\n" + textwrap.dedent(script))
    path.chmod(0o755)
    return path


@dataclass
class RoleCase:
    """One rendering: the inventory host `name` runs `role` with `platform`'s facts under work_dir/name.

    prepare(root) fills the scratch root before the first run; environment holds the variables the role's
    commands see (a value may use {root}); the root's bin/ comes first on PATH.
    """

    name: str
    role: str
    platform: str
    role_vars: dict = field(default_factory=dict)
    prepare: Optional[Callable] = None
    environment: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)

    def host_vars(self, root):
        environment = dict((key, str(value).format(root=root)) for key, value in self.environment.items())
        environment["PATH"] = str(root / "bin") + os.pathsep + os.environ["PATH"]
        return dict(self.role_vars, ansible_connection="local", ansible_python_interpreter=sys.executable,
                    case_role=self.role, case_root=str(root), case_environment=environment,
                    case_facts=dict(NODE_FACTS[self.platform], **self.facts))


class CaseResult:
    """One case's share of a run: its host's task results, and the files under its root."""

    def __init__(self, run, host, root):
        self.run = run
        self.host = host
        self.root = root

    @property
    def stats(self):
        return self.run.host_stats(self.host)

    @property
    def rc(self):
        """What ansible-playbook would have returned had this host run alone: 2 when it failed."""
        return 2 if self.stats.get("failures") or self.stats.get("unreachable") else 0

    def results(self, name_part):
        return self.run.results(name_part, self.host)

    def failed(self):
        return self.run.failed(self.host)

    def failures(self):
        """Name and message of each failed task, for assertion messages."""
        return [(name, result.get("msg")) for name, result in self.failed()] or self.run.stderr[-2000:]

    def changed(self):
        return self.run.changed_tasks(self.host)

    def messages(self):
        return self.run.messages(self.host)


def render(work_dir, cases, private_vars=None, check=False):
    """Run every case once, in one ansible-playbook run: {case name: CaseResult}.

    private_vars: the roles' private variables as extra vars, their paths written under CASE_ROOT. A second
    call with the same work_dir runs on the roots the first one left (idempotence).
    """
    work_dir = Path(work_dir)
    hosts = {}
    for case in cases:
        root = work_dir / case.name
        if not root.exists():
            root.mkdir(parents=True)
            if case.prepare:
                case.prepare(root)
        hosts[case.name] = case.host_vars(root)
    run_number = len(list(work_dir.glob("inventory-*.yml"))) + 1
    inventory = work_dir / ("inventory-%d.yml" % run_number)
    inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}, sort_keys=False))
    extra = work_dir / "private_vars.json"
    extra.write_text(json.dumps(private_vars or {}))
    playbook = write_play(work_dir / "play.yml", PLAY)
    env = ansible_env(ANSIBLE_LOCAL_TEMP=work_dir / ".ansible-local", ANSIBLE_REMOTE_TEMP=work_dir / ".ansible-remote")
    run = run_playbook(playbook, inventory, ["@" + str(extra)], ["--check"] if check else [], env=env, timeout=900)
    return dict((case.name, CaseResult(run, case.name, work_dir / case.name)) for case in cases)
