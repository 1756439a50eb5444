# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The batch scripts slurm.script builds, compared whole: the directives, modules, environment and launch line for
srun (PMIx, PMI-2) and mpirun, quoting, and the output path Slurm writes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import option_problems, with_defaults
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.script import (
    batch_script, expand_output, launch_command, output_pattern, script_path)

HEADER = "# Written by gpuops.cluster.slurm_job: a change here is overwritten by its next run."


def options(**given):
    built = with_defaults(dict(dict(name="gpuops-benchmark", script_dir="/home/alice/gpuops",
                                    python="/home/alice/venvs/horovod/bin/python",
                                    program="/home/alice/gpuops/gpuops_benchmark.py"), **given))
    assert option_problems(built) == []
    return built


def test_the_smallest_job_asks_for_one_task_and_no_gpu():
    assert batch_script(options()) == "\n".join([
        "#!/bin/bash",
        "#SBATCH --job-name=gpuops-benchmark",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --output=/home/alice/gpuops/gpuops-benchmark-%j.out",
        "#SBATCH --chdir=/home/alice/gpuops",
        HEADER,
        "set -e",
        "srun --mpi=pmix --kill-on-bad-exit=1 /home/alice/venvs/horovod/bin/python /home/alice/gpuops/gpuops_benchmark.py",
        ""])


def test_a_gpu_job_with_every_option_srun_pmix():
    script = batch_script(options(
        nodes=2, tasks_per_node=4, gpus_per_node=4, gpu_type="a100", cpus_per_task=8, partition="gpu",
        account="ml-platform", time_limit="1-00:30:00", constraint="a100&ib", output="/scratch/alice/%x-%j.log",
        sbatch_options=["--exclusive", "--mem=0"], modules=["cuda/12.2", "openmpi/4.1.5"],
        env={"NCCL_DEBUG": "INFO", "HOROVOD_FUSION_THRESHOLD": 67108864, "NCCL_IB_DISABLE": False},
        launch_args=["--cpu-bind=none"], program_args=["--model", "resnet50", "--batch-size", 64]))
    assert script == "\n".join([
        "#!/bin/bash -l",
        "#SBATCH --job-name=gpuops-benchmark",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=4",
        "#SBATCH --cpus-per-task=8",
        "#SBATCH --gres=gpu:a100:4",
        "#SBATCH --partition=gpu",
        "#SBATCH --account=ml-platform",
        "#SBATCH --time=1-00:30:00",
        "#SBATCH --constraint='a100&ib'",
        "#SBATCH --output=/scratch/alice/%x-%j.log",
        "#SBATCH --chdir=/home/alice/gpuops",
        "#SBATCH --exclusive",
        "#SBATCH --mem=0",
        HEADER,
        "set -e",
        "module load cuda/12.2 openmpi/4.1.5",
        "export HOROVOD_FUSION_THRESHOLD=67108864",
        "export NCCL_DEBUG=INFO",
        "export NCCL_IB_DISABLE=false",
        "srun --mpi=pmix --kill-on-bad-exit=1 --cpu-bind=none /home/alice/venvs/horovod/bin/python "
        "/home/alice/gpuops/gpuops_benchmark.py --model resnet50 --batch-size 64",
        ""])


def test_mpirun_starts_every_task_and_passes_each_variable_on():
    script = batch_script(options(nodes=2, tasks_per_node=2, launch="mpirun", launch_args=["--bind-to", "none"],
                                  env={"NCCL_SOCKET_IFNAME": "eth0", "HOROVOD_CYCLE_TIME": 1}, python="python3",
                                  modules=["python/3.11"]))
    assert script.splitlines()[0] == "#!/bin/bash -l"
    assert script.splitlines()[-4:] == [
        "module load python/3.11",
        "export HOROVOD_CYCLE_TIME=1",
        "export NCCL_SOCKET_IFNAME=eth0",
        "mpirun -np 4 -x HOROVOD_CYCLE_TIME -x NCCL_SOCKET_IFNAME --bind-to none python3 "
        "/home/alice/gpuops/gpuops_benchmark.py"]


def test_srun_with_pmi2():
    assert launch_command(options(mpi="pmi2"))[:3] == ["srun", "--mpi=pmi2", "--kill-on-bad-exit=1"]


def test_everything_a_shell_would_read_is_quoted():
    script = batch_script(options(
        script_dir="/home/alice/my runs", env={"WANDB_NOTES": "it's $HOME; `id`", "EMPTY": None},
        program="/home/alice/gpuops/gpuops benchmark.py", program_args=["--tag", "a b", "$(reboot)"]))
    lines = script.splitlines()
    assert "#SBATCH --output='/home/alice/my runs/gpuops-benchmark-%j.out'" in lines
    assert "#SBATCH --chdir='/home/alice/my runs'" in lines
    assert "export EMPTY=''" in lines
    assert "export WANDB_NOTES='it'\"'\"'s $HOME; `id`'" in lines
    assert lines[-1] == ("srun --mpi=pmix --kill-on-bad-exit=1 /home/alice/venvs/horovod/bin/python "
                         "'/home/alice/gpuops/gpuops benchmark.py' --tag 'a b' '$(reboot)'")


def test_a_job_without_gpus_asks_for_no_gres():
    assert "--gres" not in batch_script(options(gpus_per_node=0))
    assert "#SBATCH --gres=gpu:8" in batch_script(options(gpus_per_node=8)).splitlines()


def test_the_script_and_the_output_are_named_after_the_job():
    built = options(name="resnet50-16gpu")
    assert script_path(built) == "/home/alice/gpuops/resnet50-16gpu.sbatch"
    assert output_pattern(built) == "/home/alice/gpuops/resnet50-16gpu-%j.out"
    assert output_pattern(options(output="/scratch/out.log")) == "/scratch/out.log"


@pytest.mark.parametrize("pattern, expected", [
    ("/home/alice/gpuops/bench-%j.out", "/home/alice/gpuops/bench-4242.out"),
    ("/scratch/%u/%x/%j.log", "/scratch/alice/gpuops-benchmark/4242.log"),
    ("/scratch/100%%-%j.out", "/scratch/100%-4242.out"),
    ("/scratch/plain.out", "/scratch/plain.out"),
    ("/scratch/trailing%", "/scratch/trailing%"),
])
def test_the_output_path_as_slurm_expands_it(pattern, expected):
    assert expand_output(pattern, "4242", "gpuops-benchmark", "alice") == expected
