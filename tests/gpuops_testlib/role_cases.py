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
run_task_cases does the same for cases that are task lists rather than a role (the GPU stack checks);
role_vars_case makes such a case that renders what a role passes on from its defaults and vars, and shown reads
what it rendered.
The hosts' Python is module_server's client: their module runs fork from one Python that has already
imported ansible.module_utils.basic, instead of each starting its own.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import pytest
import yaml

from gpuops_testlib import module_server
from gpuops_testlib.ansible_run import CACHE_ROOT, REPO_ROOT, ansible_env, run_playbook, write_play

CASE_ROOT = "{{ case_root }}"
ROLES = Path(REPO_ROOT) / "roles"
MODULE_CODE_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_code_cache")


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
    "rhel7": _host_facts("RedHat", "7.9", "RedHat", "3.10.0-1160.el7.x86_64", 515000),
    "centos7": _host_facts("CentOS", "7.9", "RedHat", "3.10.0-1160.el7.x86_64", 515000),
    "rhel8": _host_facts("RedHat", "8.10", "RedHat", "4.18.0-553.el8_10.x86_64", 1031680),
    "ubuntu2004": _host_facts("Ubuntu", "20.04", "Debian", "5.4.0-182-generic", 2063731),
    "ubuntu2404": _host_facts("Ubuntu", "24.04", "Debian", "6.8.0-31-generic", 2063731),
}


def case_play(fact_names):
    """The play of every case host: the host's facts stood in for, then its role.

    One set_fact names every fact of any case (fact_names) and leaves out those the host lacks: a loop over
    the host's facts would cost a templated set_fact for each.
    """
    facts = dict((name, "{{ case_facts[%r] | default(omit) }}" % name) for name in sorted(fact_names))
    return {
        "name": "Each case's role, rendered with the case's platform facts",
        "hosts": "all",
        "gather_facts": False,
        "environment": "{{ case_environment }}",
        "tasks": [
            {"name": "Stand in for the target's facts", "ansible.builtin.set_fact": dict(facts, cacheable=True)},
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
    commands see (a value may use {root}); the root's bin/ comes first on PATH, then tool_dirs (shared
    stand-ins or validators).
    """

    name: str
    role: str
    platform: str
    role_vars: dict = field(default_factory=dict)
    prepare: Optional[Callable] = None
    environment: dict = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    tool_dirs: tuple = ()

    def target_facts(self):
        """The facts the role sees: the platform's, with the case's own on top."""
        return dict(NODE_FACTS[self.platform], **self.facts)

    def host_vars(self, root, python=sys.executable):
        environment = dict((key, str(value).format(root=root)) for key, value in self.environment.items())
        environment["PATH"] = os.pathsep.join([str(root / "bin")] + [str(path) for path in self.tool_dirs]
                                              + [os.environ["PATH"]])
        return dict(self.role_vars, ansible_connection="local", ansible_python_interpreter=python,
                    case_role=self.role, case_root=str(root), case_environment=environment,
                    case_facts=self.target_facts())


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

    def failure_messages(self):
        """The message of every failed task or loop item."""
        messages = [str(item.get("msg")) for _name, result in self.failed()
                    for item in result.get("results", [result]) if item.get("failed")]
        return messages or [self.run.stderr[-3000:]]

    def validators(self, name_part):
        """The validate commands of the tasks whose name contains name_part (a template's validate)."""
        return set(item["invocation"]["module_args"]["validate"] for result in self.results(name_part)
                   for item in result.get("results", [result])
                   if item.get("invocation", {}).get("module_args", {}).get("validate"))

    def written(self):
        """Every file under the case's root, relative to it, sorted."""
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob("*") if path.is_file())

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
    for case in cases:
        root = work_dir / case.name
        if not root.exists():
            root.mkdir(parents=True)
            if case.prepare:
                case.prepare(root)
    run_number = len(list(work_dir.glob("inventory-*.yml"))) + 1
    inventory = work_dir / ("inventory-%d.yml" % run_number)
    extra = work_dir / "private_vars.json"
    extra.write_text(json.dumps(private_vars or {}))
    playbook = write_play(work_dir / "play.yml", case_play(set().union(*(case.target_facts() for case in cases))))
    options = ["--check", "--diff"] if check else []
    env = local_env(work_dir, len(cases))
    with module_server.serving(env) as python:
        hosts = dict((case.name, case.host_vars(work_dir / case.name, python)) for case in cases)
        inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}, sort_keys=False))
        run = run_playbook(playbook, inventory, ["@" + str(extra)], options, env=env, timeout=900)
    return dict((case.name, CaseResult(run, case.name, work_dir / case.name)) for case in cases)


TASKS_PLAY = {
    "name": "Each case's own tasks",
    "hosts": "cases",
    "gather_facts": False,
    "tasks": [{"name": "Run the case's tasks", "ansible.builtin.include_tasks": "{{ case_tasks }}"}],
}


def run_task_cases(work_dir, cases, other_hosts=()):
    """Run each case's own task list as a host of one ansible-playbook run: {case name: CaseResult}.

    cases: {name: (tasks, host variables)}. other_hosts: inventory hosts the play does not target, for the
    cases that set and read facts of other hosts (delegate_facts).
    """
    work_dir = Path(work_dir)
    tasks_files = {}
    for name, (tasks, _host_vars) in cases.items():
        tasks_files[name] = write_play(work_dir / ("tasks-%s.yml" % name), tasks)
        (work_dir / name).mkdir(exist_ok=True)
    inventory = work_dir / "inventory.yml"
    playbook = write_play(work_dir / "play.yml", TASKS_PLAY)
    env = local_env(work_dir, len(cases))
    with module_server.serving(env) as python:
        hosts = dict((name, dict(host_vars, ansible_connection="local", ansible_python_interpreter=python,
                                 case_tasks=tasks_files[name]))
                     for name, (_tasks, host_vars) in cases.items())
        inventory.write_text(yaml.safe_dump({"all": {"hosts": dict((name, {}) for name in other_hosts),
                                                     "children": {"cases": {"hosts": hosts}}}}, sort_keys=False))
        run = run_playbook(playbook, inventory, env=env, timeout=900)
    return dict((name, CaseResult(run, name, work_dir / name)) for name in cases)


def _dependencies(role):
    """The roles of this collection that role depends on, by their short names."""
    with open(str(ROLES / role / "meta" / "main.yml"), encoding="utf-8") as handle:
        meta = yaml.safe_load(handle) or {}
    names = [entry["role"] if isinstance(entry, dict) else entry for entry in meta.get("dependencies") or []]
    return [name.rsplit(".", 1)[-1] for name in names]


def role_vars_case(role, msg, case_vars=None, host_vars=None, more_shown=()):
    """A run_task_cases case that renders what a role passes on, without running it: the role's defaults and vars
    loaded, the case's variables set above them as facts (case_vars), then msg shown by the task "Render" and each
    (task name, msg) of more_shown after it. host_vars are the case host's own variables, which the role's vars
    files override. The defaults and vars of the roles it depends on (meta/main.yml) are loaded first, as Ansible
    does."""
    tasks = []
    for loaded in _dependencies(role) + [role]:
        tasks += [{"name": "Defaults", "ansible.builtin.include_vars": str(ROLES / loaded / "defaults" / "main.yml")},
                  {"name": "Vars", "ansible.builtin.include_vars": str(ROLES / loaded / "vars" / "main.yml")}]
    if case_vars:
        tasks.append({"name": "The case's variables", "ansible.builtin.set_fact": case_vars})
    tasks += [{"name": name, "ansible.builtin.debug": {"msg": shown_msg}}
              for name, shown_msg in [("Render", msg)] + list(more_shown)]
    return tasks, dict(host_vars or {})


def template_msg(role, template):
    """The msg of role_vars_case that renders one of the role's templates and reads it as YAML."""
    return "{{ lookup('ansible.builtin.template', '%s') | from_yaml }}" % (ROLES / role / "templates" / template)


def shown(ran, name, task="Render", key="msg"):
    """What the case's debug task showed (its msg, or the variable it shows), once the case ran without a failure."""
    result = ran[name]
    assert result.rc == 0, result.failures()
    return result.results(task)[0][key]


def local_env(work_dir, host_count):
    """The environment of a run whose hosts are all this machine (connection local).

    Every host gets its own fork, so the cases of one task run side by side rather than in batches of
    ansible.cfg's forks; a coarser poll keeps the controller from spinning on a 2-core machine while its
    workers run; module_code_cache/sitecustomize.py keeps the modules' compiled module_utils between runs,
    under the project cache. Pipelining (as the lab's SSH runs do) spares each module run the shells that
    make, open up and remove its temporary folder; it pays once the modules run on the module server
    (with a Python started for each run, it cost more CPU than it saved).
    """
    work_dir = Path(work_dir)
    python_path = os.pathsep.join(filter(None, [MODULE_CODE_CACHE, os.environ.get("PYTHONPATH")]))
    return ansible_env(ANSIBLE_LOCAL_TEMP=work_dir / ".ansible-local", ANSIBLE_REMOTE_TEMP=work_dir / ".ansible-remote",
                       ANSIBLE_FORKS=max(host_count, 1), ANSIBLE_INTERNAL_POLL_INTERVAL="0.01", ANSIBLE_PIPELINING="1",
                       PYTHONPATH=python_path, GPUOPS_MODULE_CODE_CACHE=os.path.join(CACHE_ROOT, "module-code"))


def case_fixtures(work_name, cases, private_vars=None, run_twice=()):
    """A test module's two module-scoped fixtures: `rendered` (every case, one run) and `rendered_again`
    (the cases named in run_twice, run once more on the roots the first run left, for idempotence).

    Use as: rendered, rendered_again = case_fixtures("hugepages", CASES, PRIVATE, RUN_TWICE)
    """
    @pytest.fixture(scope="module")
    def rendered(tmp_path_factory):
        return render(tmp_path_factory.mktemp(work_name), cases, private_vars)

    @pytest.fixture(scope="module")
    def rendered_again(rendered):
        work_dir = next(iter(rendered.values())).root.parent
        return render(work_dir, [case for case in cases if case.name in run_twice], private_vars)

    return rendered, rendered_again


# How a role that runs as a job user decides to become it (slurm_launcher, user_python_env): (case, become, user).
BECOME_EXPECTED = [("connects_as_the_job_user", False, "alice"), ("job_user_unset", False, "alice"),
                   ("connects_as_root", True, "alice")]


def become_cases(vars_files, job_user_variable, become_variable, user_variable):
    """run_task_cases' cases that render a role's become decision from its vars files, for BECOME_EXPECTED."""
    def case(**given):
        tasks = [{"name": "Vars %d" % number, "ansible.builtin.include_vars": str(path)}
                 for number, path in enumerate(vars_files)]
        tasks += [{"name": "The case's variables", "ansible.builtin.set_fact": dict({job_user_variable: None}, **given)},
                  {"name": "Render", "ansible.builtin.debug": {"msg": {
                      "become": "{{ %s }}" % become_variable, "user": "{{ %s }}" % user_variable}}}]
        return tasks, {}
    return {
        "connects_as_the_job_user": case(ansible_user="alice", **{job_user_variable: "alice"}),
        "job_user_unset": case(ansible_user="alice"),
        "connects_as_root": case(ansible_user="root", **{job_user_variable: "alice"}),
    }


def typed_as_given(arguments):
    """Arguments as -e takes them, as the values a user gives: name=value a string; a JSON mapping as typed."""
    values = {}
    for argument in arguments:
        if argument.startswith("{"):
            values.update(json.loads(argument))
        else:
            name, value = argument.split("=", 1)
            values[name] = value
    return values


def check_inputs_cases(work_dir, cases, task_name):
    """gpuops.cluster.check_inputs on each case's role, every case a host of one ansible-playbook run (connection
    local) whose variables are the case's arguments, typed as given (typed_as_given).

    cases: {case id: (role, arguments)}. Returns {case id: (the run, the check's result, the case's host)}; a
    host whose check fails stops only itself.
    """
    work_dir = Path(work_dir)
    play = {"name": "Check one role's variables", "hosts": "all", "connection": "local", "gather_facts": False,
            "tasks": [{"name": task_name, "gpuops.cluster.check_inputs": {"roles": ["{{ checked_role }}"]}}]}
    playbook = write_play(work_dir / "check.yml", play)
    hosts = dict(("case%02d" % number, dict(typed_as_given(arguments), checked_role=role,
                                            ansible_python_interpreter=sys.executable))
                 for number, (role, arguments) in enumerate(cases.values()))
    inventory = work_dir / "cases.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    run = run_playbook(playbook, inventory, env=local_env(work_dir, len(hosts)), timeout=300)
    return dict((case, (run, run.result(task_name, host), host)) for case, host in zip(cases, hosts))
