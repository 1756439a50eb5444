# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The options that the modules of a Kubeflow operator's job kind (gpuops.cluster.mpijob, gpuops.cluster.tfjob,
    # gpuops.cluster.pytorchjob)
    # document alike: the job's state and namespace, its workers' spread and the operator's run policy
    # (plugins/module_utils/jobs/options.py kubeflow_job_argument_spec and jobs/kubeflow.py), and the GPU
    # resource name, image pull policy and force of every job module.
    DOCUMENTATION = r"""
options:
  state:
    description:
      - V(present) creates the job when it does not exist (replaces it under O(force)).
      - V(absent) deletes it with foreground propagation, so that its pods go first, and with O(wait=true) waits
        until it is gone.
    type: str
    choices: [present, absent]
    default: present
  namespace:
    description:
      - The namespace of the job. Defaults to V(default) when neither this nor O(definition) names one.
    type: str
  gpu_resource_name:
    description:
      - The extended resource that counts GPUs.
    type: str
    default: nvidia.com/gpu
  spread_workers:
    description:
      - Spread the workers over the nodes (a topology spread constraint on C(kubernetes.io/hostname), maximum
        skew 1, not scheduled against it). With as many workers as nodes that is one worker on each node, so that
        every allreduce crosses the network, whatever the workers request.
    type: bool
    default: false
  clean_pod_policy:
    description:
      - Which pods the operator deletes when the job finishes.
    type: str
    choices: [None, Running, All]
  ttl_seconds_after_finished:
    description:
      - Seconds after which a finished job is deleted.
    type: int
  active_deadline_seconds:
    description:
      - Seconds the job may run before it is failed with reason C(DeadlineExceeded).
    type: int
  image_pull_policy:
    description:
      - The containers' image pull policy.
    type: str
    choices: [Always, IfNotPresent, Never]
  force:
    description:
      - When the job exists with a different spec, delete it (foreground, waiting until it is gone) and create
        it again. Without it such a job fails the task and is left alone.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads the live job, reports whether it would be created, replaced or deleted and returns the
      spec it would create; writes nothing and does not wait.
  diff_mode:
    support: full
    description: The job's spec before and after.
notes:
  - Only the spec is compared; changed O(labels) or O(annotations) alone leave an existing job as it is.
"""
