# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The options of a Slurm batch job (the slurm_job module's argument spec) and their checks.

Every problem is found before anything is written or submitted, all at once, each worded as the input check words
a role variable: the option, the value it got, and what was expected.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import Problem

LAUNCHES = ("srun", "mpirun")
MPI_TYPES = ("pmix", "pmi2")
STATES = ("present", "rendered")

# sbatch's --time forms: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes and
# days-hours:minutes:seconds (0 for none). roles/slurm_launcher/meta/input_rules.yml checks the same pattern.
TIME_LIMIT_PATTERN = r"^([0-9]+(:[0-9]+){0,2}|[0-9]+-[0-9]+(:[0-9]+){0,2})$"
TIME_LIMIT_FORMS = ("minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes or "
                    "days-hours:minutes:seconds")
# The job name also names the script file (<name>.sbatch) and is matched by squeue --name.
JOB_NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9._-]*$"
SHELL_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
GPU_TYPE_PATTERN = r"^[A-Za-z0-9_.-]+$"
# The output's filename patterns that name one file for the whole job, which the module can read back; %N, %n and
# %t make a file per node or task, and %A, %a and %s belong to arrays and steps.
OUTPUT_PATTERNS = ("%j", "%x", "%u", "%%")
# Pending reasons Slurm will not get past without someone changing the job or the cluster's configuration
# (squeue(1), JOB REASON CODES): the wait fails at once instead of at its timeout. Shell-style patterns.
HOPELESS_PENDING_REASONS = ["BadConstraints", "DependencyNeverSatisfied", "InvalidAccount", "InvalidQOS",
                            "PartitionConfig", "PartitionTimeLimit", "AssocMax*PerJob*", "QOSMax*PerJob*", "QOSMin*"]

ARGUMENT_SPEC = dict(
    name=dict(type="str", required=True),
    state=dict(type="str", choices=list(STATES), default="present"),
    script_dir=dict(type="path", required=True),
    nodes=dict(type="int", default=1),
    tasks_per_node=dict(type="int", default=1),
    gpus_per_node=dict(type="int", default=0),
    gpu_type=dict(type="str"),
    cpus_per_task=dict(type="int"),
    partition=dict(type="str"),
    account=dict(type="str"),
    time_limit=dict(type="str"),
    constraint=dict(type="str"),
    output=dict(type="path"),
    sbatch_options=dict(type="list", elements="str", default=[]),
    modules=dict(type="list", elements="str", default=[]),
    env=dict(type="dict", default={}),
    launch=dict(type="str", choices=list(LAUNCHES), default="srun"),
    mpi=dict(type="str", choices=list(MPI_TYPES), default="pmix"),
    launch_args=dict(type="list", elements="str", default=[]),
    python=dict(type="str", required=True),
    program=dict(type="path", required=True),
    program_args=dict(type="list", elements="str", default=[]),
    wait=dict(type="bool", default=True),
    wait_timeout=dict(type="int", default=3600),
    poll_interval=dict(type="float", default=10.0),
    wait_on_existing=dict(type="bool", default=True),
    fail_on_pending_reasons=dict(type="list", elements="str", default=list(HOPELESS_PENDING_REASONS)),
    cancel_on_failure=dict(type="bool", default=True),
    output_lines=dict(type="int", default=100),
)

# The sbatch options the module writes itself from its own options: given again in sbatch_options they would
# contradict them (sbatch takes the last one).
_OWN_SBATCH_OPTIONS = {
    "-J": "name", "--job-name": "name", "-N": "nodes", "--nodes": "nodes", "--ntasks-per-node": "tasks_per_node",
    "-n": "nodes and tasks_per_node", "--ntasks": "nodes and tasks_per_node", "--gpus-per-node": "gpus_per_node",
    "-c": "cpus_per_task", "--cpus-per-task": "cpus_per_task", "--gres": "gpus_per_node", "-p": "partition",
    "--partition": "partition", "-A": "account", "--account": "account", "-t": "time_limit", "--time": "time_limit",
    "-C": "constraint", "--constraint": "constraint", "-o": "output", "--output": "output", "-e": "output",
    "--error": "output", "-D": "script_dir", "--chdir": "script_dir", "--parsable": "the module's own sbatch call",
}


def argument_spec():
    """A fresh copy of the module's argument spec."""
    return copy.deepcopy(ARGUMENT_SPEC)


def with_defaults(given):
    """The options as the module sees them: the argument spec's defaults under what is given."""
    options = dict((name, copy.deepcopy(spec.get("default"))) for name, spec in ARGUMENT_SPEC.items())
    options.update(given)
    return options


def given(value):
    """An optional text option counts as given unless it is None or empty."""
    return value is not None and value != ""


def _has_control(text):
    return any(ord(character) < 32 or ord(character) == 127 for character in text)


def _matches(pattern, value):
    """A text that matches `pattern` whole: the patterns end with $, which a trailing newline would pass."""
    return isinstance(value, str) and not _has_control(value) and bool(re.match(pattern, value))


def _word(value):
    """A value written bare into a #SBATCH line and matched by Slurm: no blanks, no control characters."""
    return isinstance(value, str) and bool(value) and not _has_control(value) and not re.search(r"\s", value)


def _count(problems, options, name, minimum, expected):
    value = options.get(name)
    if value is None or isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        problems.append(Problem([(name, value)], expected))


def _output_problem(output):
    if not output.startswith("/") or _has_control(output):
        return True
    without = output
    for pattern in OUTPUT_PATTERNS:
        without = without.replace(pattern, "")
    return "%" in without or "\\" in output


def _sbatch_option_problems(sbatch_options):
    wrong, taken = [], []
    for option in sbatch_options or []:
        if not isinstance(option, str) or not option.startswith("-") or _has_control(option):
            wrong.append(option)
            continue
        flag = option.split("=", 1)[0]
        # Short options may carry their value attached (-p gpu, -pgpu): their first two characters name them.
        short = flag[:2] if not flag.startswith("--") else flag
        owner = _OWN_SBATCH_OPTIONS.get(flag) or _OWN_SBATCH_OPTIONS.get(short)
        if owner:
            taken.append((option, owner))
    return wrong, taken


def option_problems(options):
    """Every reason the options cannot make a job, one line each; [] when they can.

    `options` holds every option of ARGUMENT_SPEC (with_defaults gives the defaults).
    """
    problems = []
    name = options.get("name")
    if not _matches(JOB_NAME_PATTERN, name):
        problems.append(Problem([("name", name)], "a job name of letters, digits, '.', '_' and '-', not starting with "
                                "'.' or '-' (it names the script file <name>.sbatch too)"))
    if options.get("state") not in STATES:
        problems.append(Problem([("state", options.get("state"))], "one of " + ", ".join(STATES)))
    script_dir = options.get("script_dir")
    if not isinstance(script_dir, str) or not script_dir.startswith("/") or _has_control(script_dir):
        problems.append(Problem([("script_dir", script_dir)], "the absolute path of a folder on the login host for "
                                "the batch script, shared with the compute nodes"))
    _count(problems, options, "nodes", 1, "a number of nodes, 1 or more")
    _count(problems, options, "tasks_per_node", 1, "a number of tasks (ranks) per node, 1 or more")
    _count(problems, options, "gpus_per_node", 0, "a number of GPUs per node, 0 (no --gres) or more")
    if options.get("cpus_per_task") is not None:
        _count(problems, options, "cpus_per_task", 1, "a number of CPUs per task, 1 or more, or null for Slurm's default")
    for option, what in (("partition", "a partition name (or several, comma-separated)"), ("account", "an account name"),
                         ("constraint", "a node feature expression such as a100 or a100&ib")):
        value = options.get(option)
        if given(value) and not _word(value):
            problems.append(Problem([(option, value)], what + " without blanks or control characters, or null"))
    gpu_type = options.get("gpu_type")
    if given(gpu_type) and not _matches(GPU_TYPE_PATTERN, gpu_type):
        problems.append(Problem([("gpu_type", gpu_type)], "a GPU type of the cluster's gres.conf, such as a100, or null "
                                "for any GPU"))
    elif given(gpu_type) and options.get("gpus_per_node") == 0:
        problems.append(Problem([("gpu_type", gpu_type), ("gpus_per_node", 0)], "null while the job asks for no GPU "
                                "(gpus_per_node 0)"))
    time_limit = options.get("time_limit")
    if given(time_limit) and not _matches(TIME_LIMIT_PATTERN, time_limit):
        problems.append(Problem([("time_limit", time_limit)], "a time limit in one of sbatch's forms, {0} (such as "
                                "30, 01:30:00 or 1-12), or null for the partition's default".format(TIME_LIMIT_FORMS)))
    output = options.get("output")
    if given(output) and (not isinstance(output, str) or _output_problem(output)):
        problems.append(Problem([("output", output)], "an absolute path, with no pattern but %j (job id), %x (job "
                                "name), %u (user) and %% (one file for the whole job), or null for <script_dir>/<name>-%j.out"))
    wrong, taken = _sbatch_option_problems(options.get("sbatch_options"))
    if wrong:
        problems.append(Problem([("sbatch_options", wrong)], "sbatch options, each starting with '-', such as "
                                "--exclusive or --mem=0"))
    if taken:
        problems.append(Problem([("sbatch_options", [option for option, _owner in taken])], "options other than those "
                                "the module writes from its own: " + "; ".join(
                                    "{0} is {1}".format(option, owner) for option, owner in taken)))
    modules = options.get("modules") or []
    bad_modules = [module for module in modules if not _word(module)]
    if bad_modules:
        problems.append(Problem([("modules", bad_modules)], "module names such as cuda/12.2 or openmpi, one per item"))
    env = options.get("env")
    if not isinstance(env, dict):
        problems.append(Problem([("env", env)], "a mapping of environment variable names to values"))
    else:
        bad_names = sorted(str(key) for key in env if not _matches(SHELL_NAME_PATTERN, key))
        if bad_names:
            problems.append(Problem([("env", env)], "a mapping of environment variable names (letters, digits and _, "
                                    "not starting with a digit) to values; not names: " + ", ".join(bad_names)))
        nested = sorted(key for key, value in env.items() if isinstance(value, (dict, list)))
        if nested:
            problems.append(Problem([("env", env)], "single values (text, numbers or booleans); not single: "
                                    + ", ".join(str(key) for key in nested)))
    if options.get("launch") not in LAUNCHES:
        problems.append(Problem([("launch", options.get("launch"))], "one of " + ", ".join(LAUNCHES)))
    if options.get("launch") == "srun" and options.get("mpi") not in MPI_TYPES:
        problems.append(Problem([("mpi", options.get("mpi"))], "one of {0}, srun's --mpi".format(", ".join(MPI_TYPES))))
    python = options.get("python")
    if not isinstance(python, str) or not python or _has_control(python) or (
            "/" in python and not python.startswith("/")):
        problems.append(Problem([("python", python)], "the absolute path of the job's Python, or a command on the "
                                "job's PATH once the modules are loaded, such as python3"))
    program = options.get("program")
    if not isinstance(program, str) or not program.startswith("/") or _has_control(program):
        problems.append(Problem([("program", program)], "the absolute path of the program every rank runs, "
                                "as the compute nodes see it"))
    _count(problems, options, "wait_timeout", 1, "a number of seconds to wait for the job, 1 or more")
    interval = options.get("poll_interval")
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval <= 0:
        problems.append(Problem([("poll_interval", interval)], "a number of seconds between two looks at the job, "
                                "above 0"))
    _count(problems, options, "output_lines", 0, "a number of output lines to return, 0 (the whole output) or more")
    return [problem.line() for problem in problems]
