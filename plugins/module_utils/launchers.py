# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The launchers that gpuops_launcher may name, one row each: the roles a verify run includes, where they run,
where the launcher's log goes and how a scaling sweep places its ranks.

Read by the input check (which roles a verify run takes, on which hosts), the scaling sweep's plan, and
playbooks/verify_training.yml through the gpuops.cluster.launcher lookup. The unit tier checks the playbooks, the
training_sweep role and the user guide's launcher table against it. A new launcher is its role and one row here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import OrderedDict

DEFAULT_LAUNCHER = "mpijob"
# Where a launcher's roles run: on the hosts of gpuops_training_hosts, or on the controller against the API.
ON_HOSTS, THROUGH_API = "hosts", "api"
# What every launcher through the API shares (its namespace, its pods' settings, where its log goes) is the options of
# one role, which each of their roles depends on.
KUBE_BODY = "kube_job"
KUBE_BODY_OPTIONS = ("log_path", "report_path")


class Shape:
    """How a launcher places ranks: up to `groups` groups (nodes, workers, hosts, one pod) of up to `per_group`
    ranks each, and the GPUs each group asks for; the variables that say so, and the words for them. names: the
    variables that name the run. command: the variable of a command of the user's own, which replaces the launcher's
    and whose ranks the launcher cannot count."""

    def __init__(self, groups, per_group, gpus=None, words=("node", "rank"), names=(), command=None):
        self.groups, self.per_group, self.gpus = groups, per_group, gpus
        self.words, self.names, self.command = words, names, command

    def inputs(self):
        """The variables whose values a sweep's plan needs."""
        return [name for name in (self.groups, self.per_group, self.gpus) if name]


class DdpProgram:
    """How a launcher runs the benchmark with PyTorch's DistributedDataParallel: the variables of the program's
    arguments and environment, and the option that chooses DDP over Horovod (None where DDP is the only one). The
    launcher gives the program --framework pytorch --distribution ddp itself."""

    def __init__(self, args, env, distribution=None):
        self.args, self.env, self.distribution = args, env, distribution


class Launcher:
    """One launcher. roles: what verify_training.yml includes, in order (the launcher's own role last).
    runs_on: ON_HOSTS or THROUGH_API. Every launcher's log goes to its log_path option, the JSON report beside it
    (or at report_path, for the launchers through the API). shape: how a sweep places its ranks. ddp: a DdpProgram
    where the launcher can train with DistributedDataParallel."""

    def __init__(self, name, runs_on, shape, roles=(), ddp=None):
        self.name = name
        self.role = name + "_launcher"
        self.roles = tuple(roles) + (self.role,)
        self.runs_on = runs_on
        self.shape = shape
        self.ddp = ddp

    def variable(self, option):
        """The variable of one of the launcher's options: variable('workers') is mpijob_launcher_workers. Where the
        log goes is an option every Kubernetes launcher shares: variable('log_path') of one is kube_job_log_path."""
        owner = KUBE_BODY if self.runs_on == THROUGH_API and option in KUBE_BODY_OPTIONS else self.role
        return "%s_%s" % (owner, option)

    def path_variables(self):
        """The variables that say where the log, and the report where it has its own, go."""
        options = ["log_path", "report_path"] if self.runs_on == THROUGH_API else ["log_path"]
        return [self.variable(option) for option in options]

    def as_dict(self):
        """The row as the gpuops.cluster.launcher lookup gives it to a playbook."""
        return {"name": self.name, "role": self.role, "roles": list(self.roles), "runs_on": self.runs_on,
                "log": self.variable("log_path")}


# The benchmark's arguments and environment, which every Kubernetes launcher takes from its shared body.
_KUBE_ARGS, _KUBE_ENV = KUBE_BODY + "_benchmark_args", KUBE_BODY + "_env"
LAUNCHERS = OrderedDict((launcher.name, launcher) for launcher in (
    Launcher("mpijob", THROUGH_API, Shape("mpijob_launcher_workers", "mpijob_launcher_slots_per_worker",
                                          "mpijob_launcher_gpus_per_worker", ("worker", "slot"),
                                          ("mpijob_launcher_name",), "mpijob_launcher_command"),
             ddp=DdpProgram(_KUBE_ARGS, _KUBE_ENV, "mpijob_launcher_distribution")),
    # One rank per TFJob worker, whatever its GPUs.
    Launcher("tfjob", THROUGH_API, Shape("tfjob_launcher_workers", None, None, ("worker", "rank"),
                                         ("tfjob_launcher_name",), "tfjob_launcher_command")),
    # Pods of torchrun ranks each (one per GPU unless given).
    Launcher("pytorchjob", THROUGH_API, Shape("pytorchjob_launcher_workers", "pytorchjob_launcher_procs_per_worker",
                                              "pytorchjob_launcher_gpus_per_worker", ("pod", "rank"),
                                              ("pytorchjob_launcher_name",), "pytorchjob_launcher_command"),
             ddp=DdpProgram(_KUBE_ARGS, _KUBE_ENV)),
    Launcher("pod", THROUGH_API, Shape(None, "pod_launcher_ranks", "pod_launcher_gpus", ("pod", "rank"),
                                       ("pod_launcher_name",), "pod_launcher_command"),
             ddp=DdpProgram(_KUBE_ARGS, _KUBE_ENV, "pod_launcher_distribution")),
    Launcher("job", THROUGH_API, Shape("job_launcher_workers", "job_launcher_slots_per_worker",
                                       "job_launcher_gpus_per_worker", ("worker", "slot"), ("job_launcher_name",))),
    # The benchmark and Horovod are installed on the hosts first (training_benchmark).
    Launcher("ssh", ON_HOSTS, Shape("ssh_launcher_hosts", "ssh_launcher_slots_per_host", None, ("host", "slot"),
                                    ("ssh_launcher_run_name",)), roles=("training_benchmark",),
             ddp=DdpProgram("ssh_launcher_program_args", "ssh_launcher_env", "ssh_launcher_distribution")),
    # Submitted from the first of the hosts, a Slurm login host; the user brings the Python environment.
    Launcher("slurm", ON_HOSTS, Shape("slurm_launcher_nodes", "slurm_launcher_tasks_per_node",
                                      "slurm_launcher_gpus_per_node", ("node", "task"),
                                      ("slurm_launcher_run_name", "slurm_launcher_job_name"))),
))
NAMES = tuple(LAUNCHERS)
HOST_LAUNCHERS = tuple(name for name, launcher in LAUNCHERS.items() if launcher.runs_on == ON_HOSTS)
EXPECTED = "one of %s" % ", ".join(NAMES)


def chosen(site):
    """The launcher a run takes: gpuops_launcher of the converted site variables, else the default."""
    return site.get("gpuops_launcher") or DEFAULT_LAUNCHER
