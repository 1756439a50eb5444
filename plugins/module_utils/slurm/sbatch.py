# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""sbatch's answer: the job id `sbatch --parsable` prints, or its error worded with the option at fault.

sbatch prints a refusal as ``sbatch: error: Batch job submission failed: <Slurm's error text>``, sometimes after
lines of its own (``sbatch: error: invalid partition specified: gpu``). The texts matched below are Slurm 22.05's
(slurm_strerror), case aside.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.errors import CommandError, SubmissionError
from ansible_collections.gpuops.cluster.plugins.module_utils.slurm.options import given

_ERROR_LINE = re.compile(r"^\s*sbatch:\s*error:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
_SUBMISSION_FAILED = re.compile(r"Batch job submission failed:\s*(.*)$", re.IGNORECASE)
_NODE_OPTIONS = ("nodes", "tasks_per_node", "gpus_per_node", "cpus_per_task", "constraint")
# A refusal over these is worth what sinfo says of the partition.
PARTITION_OPTIONS = frozenset(_NODE_OPTIONS + ("partition", "gpu_type"))

# (Slurm's words, the options at fault, what they mean for them). The explanation is formatted with the options
# as shown by _shown, so that it names the values sbatch was given.
CAUSES = (
    ("Invalid partition name specified", ("partition",),
     "the cluster has no partition {partition} (sinfo --summarize lists them)"),
    ("No partition specified or system default partition", ("partition",),
     "the cluster has no default partition: name one"),
    ("User's group not permitted to use this partition", ("partition",),
     "partition {partition} does not admit this user's group (its AllowGroups)"),
    ("Required partition not available", ("partition",), "partition {partition} is inactive or drained"),
    ("Partition in DOWN state", ("partition",), "partition {partition} is down"),
    ("Requested partition configuration not available now", ("partition",) + _NODE_OPTIONS,
     "partition {partition} cannot take the job now: {request}"),
    ("Requested node configuration is not available", _NODE_OPTIONS + ("partition",),
     "no {nodes} node(s) of partition {partition} have what the job asks of each: {request}"),
    ("Node count specification invalid", ("nodes", "partition"),
     "partition {partition} cannot give {nodes} node(s) (its size, or its MinNodes and MaxNodes)"),
    ("Invalid node count", ("nodes",), "{nodes} is not a node count sbatch accepts"),
    ("More processors requested than permitted", ("tasks_per_node", "cpus_per_task", "partition"),
     "the job asks for more CPUs than partition {partition} allows: {request}"),
    ("Requested time limit is invalid", ("time_limit", "partition"),
     "{time_limit} exceeds the MaxTime of partition {partition} or of the job's QOS, or the cluster requires a limit"),
    ("Invalid --time specification", ("time_limit",), "{time_limit} is not a time sbatch reads"),
    ("Invalid account or account/partition combination specified", ("account", "partition"),
     "account {account} is not this user's in Slurm's accounting (sacctmgr show associations user=$USER), or it "
     "may not use partition {partition}"),
    ("Job violates accounting/QOS policy", ("account", "nodes", "tasks_per_node", "gpus_per_node", "time_limit"),
     "the job is over a limit of account {account} or of its QOS (its size, time or job count; sacctmgr show qos)"),
    ("Invalid generic resource (gres) specification", ("gpus_per_node", "gpu_type", "partition"),
     "the cluster defines no gres {gres} on the nodes of partition {partition} (GresTypes in slurm.conf, gres.conf)"),
    ("Invalid feature specification", ("constraint", "partition"),
     "no node of partition {partition} has the features {constraint} (sinfo --format='%P %f' lists them)"),
    ("Invalid qos specification", ("sbatch_options",), "the QOS given is not one this user may use"),
    ("Memory required by task is not available", ("sbatch_options",),
     "no node has the memory the job asks for (--mem, --mem-per-cpu or --mem-per-gpu)"),
    ("Unable to contact slurm controller", (),
     "the Slurm controller did not answer from this host: is slurmctld running, and does SlurmctldHost in this "
     "host's slurm.conf name it?"),
    ("Invalid authentication credential", (),
     "munge refused this host's credential: are munged running and the munge key the controller's here?"),
    ("munge", (), "munge failed on this host: are munged running and the munge key the controller's here?"),
    ("Invalid user id", (), "the controller does not know this host's user (the same users on every host?)"),
    ("Access/permission denied", (), "the controller refused this user"),
    ("Unable to open file", ("script_dir",), "sbatch cannot read the batch script"),
)


def job_id_of(stdout):
    """The job id of `sbatch --parsable`'s output: '<id>' or '<id>;<cluster>'."""
    first = (stdout or "").strip().splitlines()[-1:] or [""]
    job_id = first[0].split(";", 1)[0].strip()
    if not job_id.isdigit():
        raise CommandError("sbatch --parsable printed no job id: {0!r}".format((stdout or "").strip()[-500:]))
    return job_id


def _shown(options):
    """The options as the explanations name them: given values quoted, missing ones said so."""
    def text(name, missing):
        value = options.get(name)
        return "'{0}'".format(value) if given(value) else missing

    gres = "gpu:{0}".format(options.get("gpu_type")) if given(options.get("gpu_type")) else "gpu"
    request = ["{0} task(s)".format(options.get("tasks_per_node"))]
    if options.get("cpus_per_task") is not None:
        request.append("{0} CPU(s) per task".format(options["cpus_per_task"]))
    if options.get("gpus_per_node"):
        request.append("{0} GPU(s) (--gres={1}:{2})".format(options["gpus_per_node"], gres, options["gpus_per_node"]))
    if given(options.get("constraint")):
        request.append("the features {0}".format(options["constraint"]))
    return {"partition": text("partition", "(the default one)"), "account": text("account", "(the user's default)"),
            "time_limit": text("time_limit", "(the partition's default)"), "constraint": text("constraint", "(none)"),
            "nodes": options.get("nodes"), "gres": gres, "request": ", ".join(request)}


def error_lines(stderr):
    """sbatch's error lines, without their 'sbatch: error:' prefix; every non-empty line when none has one."""
    lines = [line for line in _ERROR_LINE.findall(stderr or "") if line]
    return lines or [line.strip() for line in (stderr or "").splitlines() if line.strip()]


def submission_error(rc, stdout, stderr, options, hint=None):
    """The SubmissionError for sbatch's refusal: Slurm's own words first, then the options at fault and what they
    mean for them, then `hint` (what sinfo says of the partition) when given."""
    lines = error_lines(stderr) or error_lines(stdout) or ["sbatch exited with {0} and said nothing".format(rc)]
    failed = [match.group(1) for match in (_SUBMISSION_FAILED.search(line) for line in lines) if match]
    cause_text = failed[0] if failed else lines[-1]
    whole = " ".join(lines).lower()
    fault, meaning = (), None
    for words, options_at_fault, explanation in CAUSES:
        if words.lower() in whole:
            fault, meaning = options_at_fault, explanation.format(**_shown(options))
            break
    message = "sbatch refused job {0}: {1}".format(options.get("name"), cause_text)
    others = [line for line in lines if cause_text not in line]
    if others:
        message += " ({0})".format("; ".join(others))
    if meaning:
        message += ". " + ("{0}: {1}".format(", ".join(fault), meaning) if fault else meaning)
    if hint:
        message += ". " + hint
    return SubmissionError(message, options_at_fault=list(fault), sbatch_rc=rc, sbatch_stderr=(stderr or "").strip())
