# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The name a Kubernetes launcher gives its objects, checked by the rules of the kind it creates: the input check
names the launcher's variable before any change, with the words the job modules use after it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs import batch_job, kubeflow, mpijob, pytorchjob, tfjob

# Each Kubernetes launcher: how its objects are named from its name and its number of worker pods (at least 1).
#   mpijob      the MPIJob's workers <name>-worker-<i>
#   tfjob       the TFJob's workers <name>-worker-<i> (its chief and servers are checked by the module)
#   pytorchjob  the master <name>-master-0 and the workers <name>-worker-<i>
#   pod         one Job <name>
#   job         the workers' indexed Job and Service <name>-workers, pods <name>-workers-<i>, and the Job <name>
_CHECKS = {
    "mpijob": mpijob.name_problems,
    "tfjob": lambda name, workers: tfjob.name_problems(name, {"worker": workers}),
    "pytorchjob": lambda name, workers: pytorchjob.name_problems(name, {"master": 1, "worker": workers - 1}),
    "pod": lambda name, workers: batch_job.name_problems(name),
    "job": lambda name, workers: kubeflow.name_problems("Job", name, "-workers-{0}".format(workers - 1),
                                                        "the last worker's hostname"),
}


def launcher_name_problems(name, launcher, workers=1):
    """Why `name` cannot name the objects of `launcher` with `workers` worker pods; [] when it can."""
    try:
        workers = max(int(workers), 1)
    except (TypeError, ValueError):
        workers = 1
    return _CHECKS[launcher](name, workers)
