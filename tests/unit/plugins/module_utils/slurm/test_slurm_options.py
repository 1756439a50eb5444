# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each problem slurm.options finds, word for word: the option, the value it got and what was expected; every
problem at once; and the time limit forms sbatch accepts, the same pattern as the slurm_launcher role's input rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest
import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import (
    TIME_LIMIT_PATTERN, option_problems, with_defaults)

ROLE_RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "..", "roles", "slurm_launcher",
                          "meta", "input_rules.yml")
GOOD = dict(name="gpuops-benchmark", script_dir="/home/alice/gpuops", python="/home/alice/venv/bin/python",
            program="/home/alice/gpuops/gpuops_benchmark.py")
TIME_FORMS = ("minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes or "
              "days-hours:minutes:seconds")


def problems(**given):
    return option_problems(with_defaults(dict(GOOD, **given)))


def test_good_options_have_no_problem():
    assert problems() == []
    assert problems(nodes=4, tasks_per_node=8, gpus_per_node=8, gpu_type="h100", cpus_per_task=12, partition="gpu,debug",
                    account="ml", time_limit="2-00:00:00", constraint="a100&ib", output="/scratch/%u/%x-%j.out",
                    sbatch_options=["--exclusive", "--mem=0", "--qos=high"], modules=["cuda/12.2"],
                    env={"NCCL_DEBUG": "INFO", "_X1": 1}, launch="mpirun", python="python3", poll_interval=0.5,
                    output_lines=0) == []


CASES = {
    "a name with a blank": (dict(name="my job"), "name: got 'my job'; expected a job name of letters, digits, '.', '_' "
                            "and '-', not starting with '.' or '-' (it names the script file <name>.sbatch too)"),
    "a name that is a path": (dict(name="../x"), "name: got '../x'; expected a job name of letters, digits, '.', '_' "
                              "and '-', not starting with '.' or '-' (it names the script file <name>.sbatch too)"),
    "a name ending in a newline": (dict(name="bench\n"), "name: got 'bench\n'; expected a job name of letters, digits, "
                                   "'.', '_' and '-', not starting with '.' or '-' (it names the script file <name>.sbatch "
                                   "too)"),
    "an unknown state": (dict(state="absent"), "state: got 'absent'; expected one of present, rendered"),
    "a relative script folder": (dict(script_dir="gpuops"), "script_dir: got 'gpuops'; expected the absolute path of "
                                 "a folder on the login host for the batch script, shared with the compute nodes"),
    "no node": (dict(nodes=0), "nodes: got 0; expected a number of nodes, 1 or more"),
    "fewer than no node": (dict(nodes=-2), "nodes: got -2; expected a number of nodes, 1 or more"),
    "no task per node": (dict(tasks_per_node=0),
                         "tasks_per_node: got 0; expected a number of tasks (ranks) per node, 1 or more"),
    "a boolean for a count": (dict(tasks_per_node=True),
                              "tasks_per_node: got true; expected a number of tasks (ranks) per node, 1 or more"),
    "fewer than no GPU": (dict(gpus_per_node=-1),
                          "gpus_per_node: got -1; expected a number of GPUs per node, 0 (no --gres) or more"),
    "no CPU per task": (dict(cpus_per_task=0), "cpus_per_task: got 0; expected a number of CPUs per task, 1 or more, "
                        "or null for Slurm's default"),
    "a GPU type with a colon": (dict(gpus_per_node=4, gpu_type="nvidia:a100"), "gpu_type: got 'nvidia:a100'; expected "
                                "a GPU type of the cluster's gres.conf, such as a100, or null for any GPU"),
    "a GPU type without GPUs": (dict(gpu_type="a100"), "gpu_type: got 'a100' (with gpus_per_node=0); expected null "
                                "while the job asks for no GPU (gpus_per_node 0)"),
    "a partition with a blank": (dict(partition="gpu debug"), "partition: got 'gpu debug'; expected a partition name (or "
                                 "several, comma-separated) without blanks or control characters, or null"),
    "an account with a newline": (dict(account="ml\n#SBATCH --qos=high"), "account: got 'ml\n#SBATCH --qos=high'; "
                                  "expected an account name without blanks or control characters, or null"),
    "a constraint with a blank": (dict(constraint="a100 & ib"), "constraint: got 'a100 & ib'; expected a node feature "
                                  "expression such as a100 or a100&ib without blanks or control characters, or null"),
    "hours and minutes with a unit": (dict(time_limit="30m"), "time_limit: got '30m'; expected a time limit in one of "
                                      "sbatch's forms, {0} (such as 30, 01:30:00 or 1-12), or null for the partition's "
                                      "default".format(TIME_FORMS)),
    "four fields": (dict(time_limit="1:00:00:00"), "time_limit: got '1:00:00:00'; expected a time limit in one of "
                    "sbatch's forms, {0} (such as 30, 01:30:00 or 1-12), or null for the partition's default".format(TIME_FORMS)),
    "a relative output": (dict(output="out/%j.log"), "output: got 'out/%j.log'; expected an absolute path, with no "
                          "pattern but %j (job id), %x (job name), %u (user) and %% (one file for the whole job), or null "
                          "for <script_dir>/<name>-%j.out"),
    "an output per node": (dict(output="/scratch/%N.log"), "output: got '/scratch/%N.log'; expected an absolute path, "
                           "with no pattern but %j (job id), %x (job name), %u (user) and %% (one file for the whole "
                           "job), or null for <script_dir>/<name>-%j.out"),
    "a padded job id": (dict(output="/scratch/%4j.log"), "output: got '/scratch/%4j.log'; expected an absolute path, "
                        "with no pattern but %j (job id), %x (job name), %u (user) and %% (one file for the whole "
                        "job), or null for <script_dir>/<name>-%j.out"),
    "an sbatch option without a dash": (dict(sbatch_options=["exclusive"]), "sbatch_options: got [\"exclusive\"]; "
                                        "expected sbatch options, each starting with '-', such as --exclusive or --mem=0"),
    "sbatch options the module writes": (dict(sbatch_options=["--nodes=4", "-pgpu", "--error=/tmp/e", "--exclusive"]),
                                         "sbatch_options: got [\"--nodes=4\", \"-pgpu\", \"--error=/tmp/e\"]; expected "
                                         "options other than those the module writes from its own: --nodes=4 is nodes; "
                                         "-pgpu is partition; --error=/tmp/e is output"),
    "two modules in one item": (dict(modules=["cuda/12.2 openmpi"]), "modules: got [\"cuda/12.2 openmpi\"]; expected "
                                "module names such as cuda/12.2 or openmpi, one per item"),
    "env names that are not the shell's": (dict(env={"NCCL-ALGO": "Ring", "2X": 1, "OK": 1}),
                                           "env: got {\"2X\": 1, \"NCCL-ALGO\": \"Ring\", \"OK\": 1}; expected a mapping "
                                           "of environment variable names (letters, digits and _, not starting with a "
                                           "digit) to values; not names: 2X, NCCL-ALGO"),
    "an env value that is a list": (dict(env={"NCCL_ALGO": ["Ring"]}), "env: got {\"NCCL_ALGO\": [\"Ring\"]}; expected "
                                    "single values (text, numbers or booleans); not single: NCCL_ALGO"),
    "an env that is a list": (dict(env=["NCCL_DEBUG=INFO"]), "env: got [\"NCCL_DEBUG=INFO\"]; expected a mapping of "
                              "environment variable names to values"),
    "a launch method not among the choices": (
        dict(launch="horovodrun"), "launch: got 'horovodrun'; expected one of srun, mpirun"),
    "an MPI srun does not give": (dict(mpi="openmpi"), "mpi: got 'openmpi'; expected one of pmix, pmi2, srun's --mpi"),
    "a relative python": (dict(python="venv/bin/python"), "python: got 'venv/bin/python'; expected the absolute path of "
                          "the job's Python, or a command on the job's PATH once the modules are loaded, such as python3"),
    "a relative program": (dict(program="gpuops_benchmark.py"), "program: got 'gpuops_benchmark.py'; expected the "
                           "absolute path of the program every rank runs, as the compute nodes see it"),
    "no wait": (dict(wait_timeout=0), "wait_timeout: got 0; expected a number of seconds to wait for the job, 1 or more"),
    "no interval": (dict(poll_interval=0), "poll_interval: got 0; expected a number of seconds between two looks at "
                    "the job, above 0"),
    "fewer than no line": (dict(output_lines=-1), "output_lines: got -1; expected a number of output lines to return, "
                           "0 (the whole output) or more"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_problem_names_its_option_and_what_was_expected(case):
    given, line = CASES[case]
    assert problems(**given) == [line]


def test_every_problem_at_once_in_the_options_order():
    found = problems(nodes=0, tasks_per_node=0, gpus_per_node=-1, time_limit="soon", launch="ssh", env={"A-B": 1})
    assert [line.split(":")[0] for line in found] == [
        "nodes", "tasks_per_node", "gpus_per_node", "time_limit", "env", "launch"]


def test_an_mpi_type_is_not_asked_of_mpirun():
    assert problems(launch="mpirun", mpi="openmpi") == []


@pytest.mark.parametrize("limit", ["0", "30", "30:00", "01:30:00", "2-0", "2-12", "2-12:30", "2-12:30:00", "100000"])
def test_sbatchs_time_forms_are_accepted(limit):
    assert problems(time_limit=limit) == []


@pytest.mark.parametrize("limit", ["", None])
def test_no_time_limit_is_the_partitions_default(limit):
    assert problems(time_limit=limit) == []


@pytest.mark.parametrize("limit", ["1h", "-30", "1:", ":30", "1-", "1-2-3", "1:2:3:4", "UNLIMITED", " 30", "1.5", "30\n"])
def test_other_time_forms_are_refused(limit):
    assert [line.split(":")[0] for line in problems(time_limit=limit)] == ["time_limit"]


def test_the_role_checks_the_time_limit_with_the_same_pattern():
    with open(ROLE_RULES) as rules:
        rule = [rule for rule in yaml.safe_load(rules) if rule["variable"] == "slurm_launcher_time_limit"][0]
    assert re.search(r"match\('(.*)'\)", rule["that"]).group(1) == TIME_LIMIT_PATTERN
