# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sbatch's answers as slurm.sbatch reads them: the job id of --parsable, and each refusal (Slurm 22.05's own
words) worded with the options at fault and the values they were given."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.errors import CommandError
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import with_defaults
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.sbatch import job_id_of, submission_error

OPTIONS = with_defaults(dict(name="gpuops-benchmark", script_dir="/home/alice/gpuops", nodes=2, tasks_per_node=4,
                             gpus_per_node=4, partition="gpux", account="ml", time_limit="3-00:00:00",
                             constraint="a100", python="python3", program="/home/alice/gpuops/gpuops_benchmark.py"))
FAILED = "sbatch: error: Batch job submission failed: "


@pytest.mark.parametrize("stdout, job_id", [("4242\n", "4242"), ("4242;cluster-a\n", "4242"),
                                            ("sbatch: warning: x\n4243\n", "4243")])
def test_the_job_id_of_parsable(stdout, job_id):
    assert job_id_of(stdout) == job_id


def test_no_job_id_is_an_error():
    with pytest.raises(CommandError, match="printed no job id"):
        job_id_of("Submitted batch job 4242\n")


CASES = {
    "an unknown partition": (
        "sbatch: error: invalid partition specified: gpux\n" + FAILED + "Invalid partition name specified\n",
        ["partition"],
        "sbatch refused job gpuops-benchmark: Invalid partition name specified (invalid partition specified: gpux). "
        "partition: the cluster has no partition 'gpux' (sinfo --summarize lists them)"),
    "no default partition": (
        FAILED + "No partition specified or system default partition\n", ["partition"],
        "sbatch refused job gpuops-benchmark: No partition specified or system default partition. partition: the "
        "cluster has no default partition: name one"),
    "nodes no partition has": (
        FAILED + "Requested node configuration is not available\n",
        ["nodes", "tasks_per_node", "gpus_per_node", "cpus_per_task", "constraint", "partition"],
        "sbatch refused job gpuops-benchmark: Requested node configuration is not available. nodes, tasks_per_node, "
        "gpus_per_node, cpus_per_task, constraint, partition: no 2 node(s) of partition 'gpux' have what the job asks "
        "of each: 4 task(s), 4 GPU(s) (--gres=gpu:4), the features a100"),
    "more nodes than the partition": (
        FAILED + "Node count specification invalid\n", ["nodes", "partition"],
        "sbatch refused job gpuops-benchmark: Node count specification invalid. nodes, partition: partition 'gpux' "
        "cannot give 2 node(s) (its size, or its MinNodes and MaxNodes)"),
    "a time over the limit": (
        FAILED + "Requested time limit is invalid (missing or exceeds some limit)\n", ["time_limit", "partition"],
        "sbatch refused job gpuops-benchmark: Requested time limit is invalid (missing or exceeds some limit). "
        "time_limit, partition: '3-00:00:00' exceeds the MaxTime of partition 'gpux' or of the job's QOS, or the "
        "cluster requires a limit"),
    "an account not the user's": (
        FAILED + "Invalid account or account/partition combination specified\n", ["account", "partition"],
        "sbatch refused job gpuops-benchmark: Invalid account or account/partition combination specified. account, "
        "partition: account 'ml' is not this user's in Slurm's accounting (sacctmgr show associations user=$USER), or "
        "it may not use partition 'gpux'"),
    "no gpu gres": (
        FAILED + "Invalid generic resource (gres) specification\n", ["gpus_per_node", "gpu_type", "partition"],
        "sbatch refused job gpuops-benchmark: Invalid generic resource (gres) specification. gpus_per_node, gpu_type, "
        "partition: the cluster defines no gres gpu on the nodes of partition 'gpux' (GresTypes in slurm.conf, "
        "gres.conf)"),
    "an unknown feature": (
        FAILED + "Invalid feature specification\n", ["constraint", "partition"],
        "sbatch refused job gpuops-benchmark: Invalid feature specification. constraint, partition: no node of "
        "partition 'gpux' has the features 'a100' (sinfo --format='%P %f' lists them)"),
    "over a QOS limit": (
        FAILED + "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)\n",
        ["account", "nodes", "tasks_per_node", "gpus_per_node", "time_limit"],
        "sbatch refused job gpuops-benchmark: Job violates accounting/QOS policy (job submit limit, user's size and/or "
        "time limits). account, nodes, tasks_per_node, gpus_per_node, time_limit: the job is over a limit of account "
        "'ml' or of its QOS (its size, time or job count; sacctmgr show qos)"),
    "a bad time on the command line": (
        "sbatch: error: Invalid --time specification\n", ["time_limit"],
        "sbatch refused job gpuops-benchmark: Invalid --time specification. time_limit: '3-00:00:00' is not a time "
        "sbatch reads"),
    "no controller": (
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n", [],
        "sbatch refused job gpuops-benchmark: Unable to contact slurm controller (connect failure). the Slurm "
        "controller did not answer from this host: is slurmctld running, and does SlurmctldHost in this host's "
        "slurm.conf name it?"),
    "munge": (
        "sbatch: error: If munged is up, restart with --num-threads=10\n"
        "sbatch: error: Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file or directory\n"
        "sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error\n"
        + FAILED + "Protocol authentication error\n", [],
        "sbatch refused job gpuops-benchmark: Protocol authentication error (If munged is up, restart with "
        "--num-threads=10; Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file or "
        "directory; slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error). munge "
        "failed on this host: are munged running and the munge key the controller's here?"),
    "something else": (
        FAILED + "Something new\n", [], "sbatch refused job gpuops-benchmark: Something new"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_refusal_names_the_options_at_fault(case):
    stderr, at_fault, message = CASES[case]
    error = submission_error(1, "", stderr, OPTIONS)
    assert str(error) == message
    assert error.details["options_at_fault"] == at_fault
    assert error.details["sbatch_rc"] == 1


def test_defaults_are_named_as_such():
    options = with_defaults(dict(OPTIONS, partition=None, account=None, gpus_per_node=0, constraint=None))
    error = submission_error(1, "", FAILED + "Requested node configuration is not available\n", options)
    assert str(error).endswith("no 2 node(s) of partition (the default one) have what the job asks of each: 4 task(s)")
    error = submission_error(1, "", FAILED + "Invalid account or account/partition combination specified\n", options)
    assert "account (the user's default) is not this user's" in str(error)


def test_the_partitions_word_comes_last():
    error = submission_error(1, "", FAILED + "Requested node configuration is not available\n", OPTIONS,
                             hint="sinfo: gpux up: 4 node(s) of 64 CPU(s), gres gpu:2, features a100, time limit 2-00:00:00")
    assert str(error).endswith(". sinfo: gpux up: 4 node(s) of 64 CPU(s), gres gpu:2, features a100, time limit 2-00:00:00")


def test_silence_is_said():
    assert str(submission_error(255, "", "", OPTIONS)) == "sbatch refused job gpuops-benchmark: sbatch exited with 255 and said nothing"
