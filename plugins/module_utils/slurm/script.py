# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The batch script of a job, built from its checked options (options.option_problems).

Every value is quoted with shlex.quote: bash reads the script's body that way, and sbatch's own parser of the
#SBATCH lines groups quoted characters as the shell does. The output's path is the one the module reads back,
with %j, %x, %u and %% expanded as Slurm expands them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from shlex import quote

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import api_text
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import given

SCRIPT_SUFFIX = ".sbatch"
HEADER = "# Written by gpuops.cluster.slurm_job: a change here is overwritten by its next run."


def script_path(options):
    return os.path.join(options["script_dir"], options["name"] + SCRIPT_SUFFIX)


def output_pattern(options):
    """The --output path as sbatch gets it: the option, or <script_dir>/<name>-%j.out (one file per run)."""
    if given(options.get("output")):
        return options["output"]
    return os.path.join(options["script_dir"], options["name"] + "-%j.out")


def expand_output(pattern, job_id, job_name, user):
    """The path Slurm writes for `pattern` (only %j, %x, %u and %% are accepted: options.OUTPUT_PATTERNS)."""
    replacements = {"j": str(job_id), "x": job_name, "u": user, "%": "%"}
    expanded, index = [], 0
    while index < len(pattern):
        if pattern[index] == "%" and index + 1 < len(pattern) and pattern[index + 1] in replacements:
            expanded.append(replacements[pattern[index + 1]])
            index += 2
        else:
            expanded.append(pattern[index])
            index += 1
    return "".join(expanded)


def ranks(options):
    return options["nodes"] * options["tasks_per_node"]


def _gres(options):
    if given(options.get("gpu_type")):
        return "gpu:{0}:{1}".format(options["gpu_type"], options["gpus_per_node"])
    return "gpu:{0}".format(options["gpus_per_node"])


def directives(options):
    """The sbatch options the script carries, in the order written."""
    written = ["--job-name=" + quote(options["name"]),
               "--nodes={0}".format(options["nodes"]),
               "--ntasks-per-node={0}".format(options["tasks_per_node"])]
    if options.get("cpus_per_task") is not None:
        written.append("--cpus-per-task={0}".format(options["cpus_per_task"]))
    # A job that asks for no GPU asks for no gres at all: a cluster without GPUs may have no gpu gres defined.
    if options["gpus_per_node"] > 0:
        written.append("--gres=" + _gres(options))
    for option, flag in (("partition", "--partition"), ("account", "--account"), ("time_limit", "--time"),
                         ("constraint", "--constraint")):
        if given(options.get(option)):
            written.append("{0}={1}".format(flag, quote(str(options[option]))))
    # stdout and stderr together in one file, which the verdict reads; Slurm writes it on the job's first node.
    written.append("--output=" + quote(output_pattern(options)))
    written.append("--chdir=" + quote(options["script_dir"]))
    written.extend(quote(option) for option in options.get("sbatch_options") or [])
    return written


def program_command(options):
    return [options["python"], options["program"]] + [str(arg) for arg in options.get("program_args") or []]


def launch_command(options):
    """The line that starts the ranks inside the allocation, as a list of words.

    srun starts one rank per task and wires them up through PMIx or PMI-2; --kill-on-bad-exit ends the step (and
    the job) as soon as one rank fails, instead of leaving the others waiting in a collective until the time limit.
    mpirun (Open MPI) reads the allocation from Slurm; -x passes each variable of env to every rank.
    """
    extra = [str(arg) for arg in options.get("launch_args") or []]
    if options["launch"] == "srun":
        return ["srun", "--mpi=" + options["mpi"], "--kill-on-bad-exit=1"] + extra + program_command(options)
    exported = [word for name in sorted(options.get("env") or {}) for word in ("-x", name)]
    return ["mpirun", "-np", str(ranks(options))] + exported + extra + program_command(options)


def batch_script(options):
    """The whole script, ending with a newline."""
    modules = options.get("modules") or []
    # `module` is a shell function that login shells define (/etc/profile.d): bash -l makes it available.
    lines = ["#!/bin/bash -l" if modules else "#!/bin/bash"]
    lines.extend("#SBATCH " + directive for directive in directives(options))
    lines.extend([HEADER, "set -e"])
    if modules:
        lines.append("module load " + " ".join(quote(module) for module in modules))
    env = options.get("env") or {}
    for name in sorted(env):
        value = api_text(env[name])
        lines.append("export {0}={1}".format(name, quote("" if value is None else str(value))))
    lines.append(" ".join(quote(word) for word in launch_command(options)))
    return "\n".join(lines) + "\n"
