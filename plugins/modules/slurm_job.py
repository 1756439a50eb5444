#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: slurm_job
short_description: Write a Slurm batch script for the training benchmark, submit it and wait for it, failing fast
version_added: 0.2.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Runs on a Slurm login host, as the user the job belongs to; it needs no root. It runs C(sbatch), C(squeue),
    C(sacct), C(scontrol), C(scancel) and C(sinfo) as that user.
  - Builds a batch script from its options - C(#SBATCH) lines for the job's name, nodes, tasks per node, GPUs
    (C(--gres=gpu:N), only when GPUs are asked for), partition, account, time limit, constraint and output file,
    then C(module load) lines, the exported environment and the line that starts the ranks inside the allocation,
    C(srun --mpi=pmix) (or C(pmi2)) or C(mpirun) - every value quoted for the shell. It writes it to
    O(script_dir)/O(name)C(.sbatch).
  - Every option is checked before anything is written or submitted, and every problem is reported at once, each
    naming its option and what was expected.
  - With O(state=present), looks for a job of the same name of the same user still pending or running
    (C(squeue --user --name)); when there is one, it is reported (RV(existing)) and waited on
    (O(wait_on_existing)) instead of a duplicate being submitted. Otherwise it submits the script with
    C(sbatch --parsable). A refusal names the option at fault where Slurm's message allows, with what C(sinfo)
    says of the partition when the nodes or the partition are at fault.
  - With O(wait=true), looks at the job every O(poll_interval) seconds - C(sacct) with its steps where accounting
    is on, else the controller's record (C(scontrol show job)) - and returns when it has C(COMPLETED), with its
    exit code and the end of its output file. It fails as soon as the job cannot succeed, not at the timeout - a
    failed state (C(FAILED), C(NODE_FAIL), C(TIMEOUT), C(CANCELLED) including C(CANCELLED by <uid>),
    C(OUT_OF_MEMORY), C(BOOT_FAIL), C(DEADLINE), C(PREEMPTED)), a step that failed while the job still runs (a
    rank killed; seen through C(sacct)), or a pending reason of O(fail_on_pending_reasons) - with the state, the
    reason, the nodes and the end of the output; a job still queued or running is then cancelled
    (O(cancel_on_failure)).
  - With O(state=rendered), writes the script and submits nothing.
  - Check mode writes and submits nothing; it returns the script, and with C(--diff) its difference from the one on
    disk, and says whether a job would be submitted or one of the same name is already queued.
options:
  name:
    description:
      - The job's name (C(--job-name)), also the script's file name (O(name)C(.sbatch)) and the name a queued job
        of the same user is found by. Letters, digits, C(.), C(_) and C(-).
    type: str
    required: true
  state:
    description:
      - V(present) writes the script and submits it (unless a job of the same name is queued); V(rendered) only
        writes it.
    type: str
    choices: [present, rendered]
    default: present
  script_dir:
    description:
      - Absolute path of the folder on the login host for the script (made when missing), which is also the
        job's working folder (C(--chdir)) and by default holds its output. The compute nodes must see it at the
        same path (a shared filesystem), since Slurm writes the output on the job's first node.
    type: path
    required: true
  nodes:
    description:
      - Nodes of the job (C(--nodes)), 1 or more.
    type: int
    default: 1
  tasks_per_node:
    description:
      - Tasks, that is ranks, on each node (C(--ntasks-per-node)), 1 or more.
    type: int
    default: 1
  gpus_per_node:
    description:
      - GPUs of each node the job asks for, as C(--gres=gpu:N); V(0) asks for no gres at all.
    type: int
    default: 0
  gpu_type:
    description:
      - The GPU type of the cluster's C(gres.conf) the GPUs must be, as C(--gres=gpu:<type>:N), such as V(a100);
        needs O(gpus_per_node) above 0.
    type: str
  cpus_per_task:
    description:
      - CPUs of each task (C(--cpus-per-task)); when not given, Slurm's default (1).
    type: int
  partition:
    description:
      - The partition (C(--partition)); when not given, the cluster's default partition.
    type: str
  account:
    description:
      - The account the job is charged to (C(--account)); when not given, the user's default account.
    type: str
  time_limit:
    description:
      - The job's time limit (C(--time)) in one of sbatch's forms - V(minutes), V(minutes:seconds),
        V(hours:minutes:seconds), V(days-hours), V(days-hours:minutes) or V(days-hours:minutes:seconds).
      - When not given, the partition's default time limit.
    type: str
  constraint:
    description:
      - Node features the nodes must have (C(--constraint)), such as V(a100) or V(a100&ib).
    type: str
  output:
    description:
      - The file both the job's standard output and its standard error go to (C(--output)), an absolute path.
        Only C(%j) (job id), C(%x) (job name), C(%u) (user) and C(%%) may stand in it, so that the module can name
        the one file to read back.
      - When not given, O(script_dir)C(/)O(name)C(-%j.out).
    type: path
  sbatch_options:
    description:
      - More sbatch options, written as C(#SBATCH) lines after the others, such as V(--exclusive), V(--mem=0) or
        V(--qos=debug). The options the module writes itself from its own options are refused here.
    type: list
    elements: str
    default: []
  modules:
    description:
      - Environment modules loaded before the launch, one per item (V(cuda/12.2), V(openmpi/4.1)); the script then
        runs as a login shell (C(bash -l)), which defines the C(module) command.
    type: list
    elements: str
    default: []
  env:
    description:
      - Environment variables exported in the script before the launch (C(NCCL_*), C(HOROVOD_*)); every rank
        inherits them (C(mpirun) is also given C(-x) for each). Numbers and booleans are written as text.
    type: dict
    default: {}
  launch:
    description:
      - How the ranks start inside the allocation. V(srun) starts one per task, wired up through O(mpi), and ends
        the step as soon as one fails (C(--kill-on-bad-exit=1)); V(mpirun) runs Open MPI's mpirun, which reads the
        allocation from Slurm, with C(-np) the job's tasks.
    type: str
    choices: [srun, mpirun]
    default: srun
  mpi:
    description:
      - The PMI srun gives the ranks (C(srun --mpi)); V(pmix) for Open MPI 4 and later, V(pmi2) for MPICH or an
        Open MPI built without PMIx.
    type: str
    choices: [pmix, pmi2]
    default: pmix
  launch_args:
    description:
      - More arguments of srun or mpirun, placed before the program, such as V([--bind-to, none]) for mpirun.
    type: list
    elements: str
    default: []
  python:
    description:
      - The Python that runs the program on the compute nodes, typically the user's own environment, such as
        V(/home/alice/venvs/horovod/bin/python), or a command such as V(python3) found once O(modules) are loaded.
    type: str
    required: true
  program:
    description:
      - Absolute path of the program every rank runs, as the compute nodes see it.
    type: path
    required: true
  program_args:
    description:
      - Arguments of the program.
    type: list
    elements: str
    default: []
  wait:
    description:
      - With O(state=present), wait for the job to end (see O(wait_timeout)); without, return once it is submitted.
    type: bool
    default: true
  wait_timeout:
    description:
      - Seconds to wait for the job, its time in the queue included. A job still running then is left in the queue,
        and the next run with the same O(name) finds it.
    type: int
    default: 3600
  poll_interval:
    description:
      - Seconds between two looks at the job (one C(sacct) or C(scontrol) call each). The time it takes to see a
        failure is at most about this.
    type: float
    default: 10.0
  wait_on_existing:
    description:
      - When a job of the same name of the same user is still pending or running, wait on it (with O(wait)) as on
        one just submitted; V(false) returns at once, reporting it.
    type: bool
    default: true
  fail_on_pending_reasons:
    description:
      - Pending reasons that fail the wait at once, shell-style patterns of the reason codes in C(squeue(1)). The
        default holds those Slurm does not get past without a change to the job or to the cluster's configuration.
      - V([]) waits out any pending reason until O(wait_timeout).
    type: list
    elements: str
    default: [BadConstraints, DependencyNeverSatisfied, InvalidAccount, InvalidQOS, PartitionConfig, PartitionTimeLimit,
              AssocMax*PerJob*, QOSMax*PerJob*, QOSMin*]
  cancel_on_failure:
    description:
      - When the wait fails while the job is still queued or running (a failed step, a hopeless pending reason),
        cancel it (C(scancel)), so that it holds no nodes and the next run submits afresh.
    type: bool
    default: true
  output_lines:
    description:
      - How many of the output file's last lines to return; V(0) returns the whole file.
    type: int
    default: 100
notes:
  - The login host must see the job's output file at its path (a filesystem shared with the compute nodes), and the
    compute nodes O(python), O(program) and O(script_dir) at theirs.
  - sbatch passes the submitting environment on to the job (its C(--export) default).
  - Without accounting storage (C(sacct) says it is disabled) the job's state comes from the controller alone; a
    failed step is then seen when the job ends, which C(srun --kill-on-bad-exit) makes at once, and a job that
    ended more than C(MinJobAge) seconds (300 by default) before a look is no longer known, so keep
    O(poll_interval) below it.
  - The script is written with mode 0600.
seealso:
  - module: gpuops.cluster.training_report
  - name: sbatch
    description: Slurm's batch submission command, its options and filename patterns.
    link: https://slurm.schedmd.com/archive/slurm-22.05.8/sbatch.html
  - name: sacct
    description: Slurm's accounting command, its fields and job state codes.
    link: https://slurm.schedmd.com/archive/slurm-22.05.8/sacct.html
"""

EXAMPLES = r"""
- name: Run the Horovod benchmark on 2 nodes of 4 GPUs each and wait for it
  gpuops.cluster.slurm_job:
    name: gpuops-benchmark
    script_dir: /home/alice/gpuops
    nodes: 2
    tasks_per_node: 4
    gpus_per_node: 4
    partition: gpu
    account: ml-platform
    time_limit: "00:30:00"
    constraint: a100
    modules: [cuda/12.2, openmpi/4.1.5]
    env:
      NCCL_DEBUG: INFO
      NCCL_IB_HCA: mlx5
      HOROVOD_FUSION_THRESHOLD: 67108864
    launch: srun
    mpi: pmix
    python: /home/alice/venvs/horovod/bin/python
    program: /home/alice/gpuops/gpuops_benchmark.py
    program_args: [--model, resnet50]
    wait_timeout: 3600
    poll_interval: 15
  register: benchmark

- name: Show where its output is
  ansible.builtin.debug:
    msg: "job {{ benchmark.job_id }} {{ benchmark.state }}: {{ benchmark.output_path }}"

- name: Write the script only, to submit by hand
  gpuops.cluster.slurm_job:
    name: gpuops-benchmark
    state: rendered
    script_dir: /home/alice/gpuops
    launch: mpirun
    launch_args: [--bind-to, none, --map-by, slot]
    python: python3
    modules: [python/3.11]
    program: /home/alice/gpuops/gpuops_benchmark.py
"""

RETURN = r"""
script_path:
  description: Where the batch script is (in check mode, would be) written.
  returned: always
  type: str
  sample: /home/alice/gpuops/gpuops-benchmark.sbatch
script:
  description: The batch script.
  returned: always
  type: str
launch_command:
  description: The line that starts the ranks, as it stands in the script.
  returned: always
  type: str
  sample: srun --mpi=pmix --kill-on-bad-exit=1 /home/alice/venvs/horovod/bin/python /home/alice/gpuops/gpuops_benchmark.py
ranks:
  description: The ranks the job starts, O(nodes) times O(tasks_per_node).
  returned: always
  type: int
  sample: 8
submitted:
  description: Whether this run submitted the job.
  returned: always
  type: bool
existing:
  description: Whether a job of the same name was found pending or running, and reported instead of a new one.
  returned: always
  type: bool
existing_jobs:
  description: The jobs of the same name of the same user found pending or running, oldest first (the last is the one reported).
  returned: when RV(existing)
  type: list
  elements: dict
job_id:
  description: The job's id.
  returned: when a job was submitted or found
  type: str
  sample: "4242"
state:
  description: The job's state as last seen, such as C(COMPLETED), C(RUNNING), C(FAILED) or C(CANCELLED).
  returned: when a job was waited on or found
  type: str
  sample: COMPLETED
state_text:
  description: Slurm's whole state text, such as C(CANCELLED by 1000).
  returned: when a job was waited on or found
  type: str
exit_code:
  description: The job's exit code as Slurm prints it, C(<exit status>:<signal>).
  returned: when a job was waited on
  type: str
  sample: "0:0"
reason:
  description: The reason Slurm gives for the job's state, or null when it gives none.
  returned: when a job was waited on or found
  type: str
  sample: NonZeroExitCode
nodes:
  description: The job's nodes, in Slurm's host list form.
  returned: when a job was waited on or found
  type: str
  sample: gpu[01-02]
steps:
  description:
    - The job's steps as C(sacct) lists them (C(<id>.batch), C(<id>.0)...), each with C(step_id), C(state), C(exit_code)
      and C(nodes); empty without accounting.
  returned: when a job was waited on
  type: list
  elements: dict
output_path:
  description: The job's output file, with Slurm's patterns expanded.
  returned: when a job was submitted or found
  type: str
  sample: /home/alice/gpuops/gpuops-benchmark-4242.out
output_tail:
  description: The last O(output_lines) lines of the output file; null when it cannot be read (see RV(output_error)).
  returned: when a job was waited on
  type: str
output_found:
  description: Whether the output file could be read.
  returned: when a job was waited on
  type: bool
output_error:
  description: Why the output file could not be read (the job never started, or the file is not shared), or null.
  returned: when a job was waited on
  type: str
elapsed:
  description: Seconds spent waiting.
  returned: when a job was waited on
  type: float
cancelled:
  description: Whether the module cancelled the job after its failure (O(cancel_on_failure)).
  returned: failure
  type: bool
problems:
  description: Every problem with the options, one line each.
  returned: failure
  type: list
  elements: str
  sample: ["nodes: got 0; expected a number of nodes, 1 or more"]
options_at_fault:
  description: The options sbatch's refusal points at.
  returned: failure
  type: list
  elements: str
  sample: [partition]
"""

import os
import pwd

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.commands import SlurmCommands
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.errors import SlurmError
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.flow import run
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import argument_spec


def current_user():
    """The user the module runs as: its queue is the one searched for a job of the same name."""
    return pwd.getpwuid(os.geteuid()).pw_name


def run_module(module):
    def run_command(argv, cwd):
        # A login host without the Slurm client fails naming the command and the PATH searched.
        return module.run_command([module.get_bin_path(argv[0], required=True)] + argv[1:], cwd=cwd)

    try:
        result = run(module.params, SlurmCommands(run_command), module.check_mode, current_user())
    except SlurmError as error:
        details = dict(error.details)
        if not module._diff:
            details.pop("diff", None)
        module.fail_json(msg=str(error), **details)
    except (IOError, OSError) as error:
        module.fail_json(msg="writing the batch script failed: {0}".format(error))
    if not module._diff:
        result.pop("diff", None)
    module.exit_json(**result)


def main():
    run_module(AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True))


if __name__ == "__main__":
    main()
