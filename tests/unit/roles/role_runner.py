"""Run a gpuops.cluster role against localhost with another platform's facts.

The RHEL and Ubuntu paths of the node roles cannot converge on the Debian lab nodes, so the unit
tests render them here instead: a play on localhost (connection local) stands in for the target's
facts (set_fact with cacheable=true fills ansible_facts), points every path the role writes or reads
at a scratch directory through the role's private path variables (extra vars override them), and
puts fake grubby / update-grub / nvidia-smi first on PATH. The play's result comes back as the
ansible.posix.json callback's document.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]

FACTS = {
    "ubuntu2204": {
        "distribution": "Ubuntu", "distribution_version": "22.04", "distribution_major_version": "22",
        "os_family": "Debian", "kernel": "5.15.0-105-generic", "architecture": "x86_64",
        "memtotal_mb": 2063731, "service_mgr": "openrc",
        "virtualization_role": "host", "virtualization_type": "kvm",
    },
    "rhel9": {
        "distribution": "RedHat", "distribution_version": "9.4", "distribution_major_version": "9",
        "os_family": "RedHat", "kernel": "5.14.0-427.13.1.el9_4.x86_64", "architecture": "x86_64",
        "memtotal_mb": 1031680, "service_mgr": "openrc",
        "virtualization_role": "host", "virtualization_type": "kvm",
    },
    "debian12": {
        "distribution": "Debian", "distribution_version": "12.15", "distribution_major_version": "12",
        "os_family": "Debian", "kernel": "6.1.0-31-amd64", "architecture": "x86_64",
        "memtotal_mb": 24105, "service_mgr": "openrc",
        "virtualization_role": "host", "virtualization_type": "kvm",
    },
    "sles15": {
        "distribution": "SLES", "distribution_version": "15.5", "distribution_major_version": "15",
        "os_family": "Suse", "kernel": "5.14.21-150500.55.39-default", "architecture": "x86_64",
        "memtotal_mb": 515000, "service_mgr": "systemd",
        "virtualization_role": "host", "virtualization_type": "kvm",
    },
}


@dataclass
class PlayResult:
    rc: int
    document: dict
    stderr: str
    tasks: list = field(default_factory=list)

    @property
    def stats(self):
        return self.document.get("stats", {}).get("localhost", {})

    @staticmethod
    def _name(task):
        """The task's own name, without the "role : " prefix Ansible adds."""
        return task["task"]["name"].split(" : ", 1)[-1]

    def results(self, name_part):
        """Results of the tasks whose name contains name_part, in play order."""
        return [t["hosts"]["localhost"] for t in self.tasks
                if name_part in self._name(t) and "localhost" in t["hosts"]]

    def failed(self):
        return [(self._name(t), t["hosts"]["localhost"]) for t in self.tasks
                if t["hosts"].get("localhost", {}).get("failed")]

    def failures(self):
        """Name and message of each failed task, for assertion messages."""
        return [(name, result.get("msg")) for name, result in self.failed()] or self.stderr[-2000:]

    def changed(self):
        return [self._name(t) for t in self.tasks if t["hosts"].get("localhost", {}).get("changed")]

    def messages(self):
        return [r.get("msg", "") for t in self.tasks for r in t["hosts"].values() if isinstance(r.get("msg"), str)]


def write_fake_tool(bin_dir, name, script):
    """A stand-in for a node tool: a Python script on PATH."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!" + sys.executable + "\n" + textwrap.dedent(script))
    path.chmod(0o755)
    return path


def run_role(tmp_path, role, platform, role_vars=None, private_vars=None, check=False, fake_bin=None,
             extra_facts=None):
    facts = dict(FACTS[platform], **(extra_facts or {}))
    play = [{
        "name": "Run gpuops.cluster." + role + " with " + platform + " facts",
        "hosts": "localhost",
        "connection": "local",
        "gather_facts": False,
        "vars": {"ansible_python_interpreter": sys.executable},
        "tasks": [
            {"name": "Stand in for the target's facts",
             "ansible.builtin.set_fact": dict(facts, cacheable=True)},
            {"name": "Run the role",
             "ansible.builtin.include_role": {"name": "gpuops.cluster." + role},
             "vars": role_vars or {}},
        ],
    }]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    extra = tmp_path / "private_vars.json"
    extra.write_text(json.dumps(private_vars or {}))
    env = dict(os.environ)
    env.update({
        "ANSIBLE_CONFIG": str(REPO_ROOT / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-local"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ansible-remote"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
    })
    if fake_bin is not None:
        env["PATH"] = str(fake_bin) + os.pathsep + env["PATH"]
    command = [shutil.which("ansible-playbook", path=env["PATH"]) or "ansible-playbook",
               "-i", "localhost,", str(playbook), "-e", "@" + str(extra)]
    if check:
        command.append("--check")
    proc = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    start = proc.stdout.find("{")
    if start < 0:
        raise AssertionError("ansible-playbook printed no JSON:\n" + proc.stdout + proc.stderr)
    document = json.loads(proc.stdout[start:])
    tasks = [task for play_doc in document.get("plays", []) for task in play_doc.get("tasks", [])]
    return PlayResult(proc.returncode, document, proc.stderr, tasks)
