#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: batch_job
short_description: Run a benchmark launcher as a Kubernetes batch Job and wait for it, failing fast
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Manages one C(batch/v1) Job whose pod runs a launcher command, such as C(horovodrun -np 8) on one
    8-GPU server or C(mpirun) over worker pods, or whose parallel pods are those workers (O(parallelism)).
    No operator is needed.
  - The pod is never restarted in place and, unless O(backoff_limit) says otherwise, never replaced. A
    benchmark that failed once has failed, and its pod and log stay for the report.
  - Every option is checked before any API call, and every problem is reported at once.
  - Creation is idempotent, as with M(gpuops.cluster.mpijob). The job records the spec it was created
    with, a later run with the same spec changes nothing, and a different spec fails unless O(force=true).
  - With O(wait=true) it waits for the Job to complete and returns as soon as it cannot any more, when the Job
    has the condition C(Failed), the pod's container cannot start (an image that cannot be pulled, a
    container the runtime cannot create), or, unless O(fail_on_unschedulable=false), no node can take the
    pod. The failure carries the reason, the pod with its events, the Job's events and the pod's log.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
  - gpuops.cluster.job_wait
  - gpuops.cluster.job_pod
options:
  state:
    description:
      - V(present) creates the Job when it does not exist (replaces it under O(force)); V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
  name:
    description:
      - The Job's name, a DNS-1123 label of at most 63 characters. Required.
    type: str
    required: true
  namespace:
    description:
      - The namespace of the Job.
    type: str
    default: default
  parallelism:
    description:
      - How many pods run at once, each until the end. Above 1 the Job is Indexed, and pod C(<index>) is named
        C(<name>-<index>) (C(<name>-<index>.<subdomain>) in the cluster's DNS with O(subdomain)), as worker pods
        running sshd for an mpirun pod need. When not given, 1.
    type: int
  one_pod_per_node:
    description:
      - Never put two pods of this Job on one node (a required pod anti-affinity), as worker pods with host
        networking need, each with sshd on the same port of its node.
    type: bool
    default: false
  subdomain:
    description:
      - The headless Service (it must exist) whose DNS names the pods get.
    type: str
  readiness_port:
    description:
      - A TCP port the container must accept connections on to count as ready (sshd's, for worker pods).
        With O(wait_for=Running) the wait ends once every pod is ready. When not given, no probe.
    type: int
  image:
    description:
      - The container image. Required with O(state=present).
    type: str
  command:
    description:
      - The pod's command, as a list. When not given, the image's own entrypoint and command run (a CUDA
        sample image, say).
    type: list
    elements: str
  gpus:
    description:
      - GPUs the pod requests, as the limit of O(gpu_resource_name). 0 or more; when not given, 0.
    type: int
  gpu_resource_name:
    description:
      - The extended resource that counts GPUs.
    type: str
    default: nvidia.com/gpu
  env:
    description:
      - Environment variables of the pod (for example C(NCCL_DEBUG)). Numbers and booleans are written as text.
    type: dict
  resources:
    description:
      - Resources of the container, in the forms M(gpuops.cluster.mpijob) takes for its O(gpuops.cluster.mpijob#module:resources).
    type: dict
  host_network:
    description:
      - Run the pod in the host's network namespace. The pod still resolves the cluster's Service names.
    type: bool
  shm_size:
    description:
      - The size of a memory-backed C(emptyDir) at C(/dev/shm), a quantity such as V(8Gi), for NCCL's
        shared-memory transport between the ranks of the pod. When not given, none is added.
    type: str
  privileged:
    description:
      - Run the container privileged. Off by default; needed to drop the page cache or open RDMA devices
        that no device plugin hands to the pod.
    type: bool
    default: false
  capabilities:
    description:
      - Linux capabilities added to the container, without the C(CAP_) prefix, such as V(IPC_LOCK), which RDMA needs to
        pin the memory it registers (InfiniBand or RoCE through an RDMA device plugin's resource, given in
        O(resources)). A narrower grant than O(privileged). None by default.
    type: list
    elements: str
  host_paths:
    description:
      - Absolute host paths mounted at the same path in the pod. None by default.
    type: list
    elements: str
  volumes:
    description:
      - Other volumes, each a dict with C(name), an absolute C(mount_path), an optional C(read_only) and one
        volume source written as Kubernetes writes it, for example C(persistentVolumeClaim) with C(claimName).
    type: list
    elements: dict
  service_account:
    description:
      - The pod's service account (it must exist). When not given, the namespace's default account.
    type: str
  node_selector:
    description:
      - Node labels the pod's node must have.
    type: dict
  tolerations:
    description:
      - Tolerations of the pod, each a dict with C(key), C(operator), C(value), C(effect) and C(tolerationSeconds).
    type: list
    elements: dict
  image_pull_policy:
    description:
      - The container's image pull policy.
    type: str
    choices: [Always, IfNotPresent, Never]
  backoff_limit:
    description:
      - How many more pods the Job may start after one fails. When not given, V(0).
    type: int
  active_deadline_seconds:
    description:
      - Seconds the Job may run before it fails with reason C(DeadlineExceeded).
    type: int
  ttl_seconds_after_finished:
    description:
      - Seconds after which a finished Job is deleted.
    type: int
  labels:
    description:
      - Labels of the Job object.
    type: dict
  annotations:
    description:
      - Annotations of the Job object.
    type: dict
  force:
    description:
      - When the Job exists with a different spec, delete it and create it again. Without it such a Job fails
        the task and is left alone.
    type: bool
    default: false
  log_lines:
    description:
      - How many of the pod log's last lines to return; 0 returns the whole log.
    type: int
    default: 1000
attributes:
  check_mode:
    support: full
    description: Reports whether the Job would be created, replaced or deleted and returns its spec; writes nothing.
  diff_mode:
    support: full
    description: The Job's spec before and after.
requirements:
  - kubernetes >= 24.2.0
notes:
  - The credentials need C(get), C(create) and C(delete) on C(jobs.batch), C(list) on C(pods) and C(events),
    and C(get) on C(pods/log).
  - The pod carries the label C(gpuops.io/role=launcher); its log is RV(launcher_log).
seealso:
  - module: gpuops.cluster.mpijob
  - module: gpuops.cluster.training_report
"""

EXAMPLES = r"""
- name: Run horovodrun on one 8-GPU server and wait for it
  gpuops.cluster.batch_job:
    name: dgx-single-node
    namespace: training
    image: registry.example.com/horovod:0.28.1-pytorch
    command: [horovodrun, -np, "8", -H, "localhost:8", python3, /opt/gpuops/benchmark.py, --model, resnet50]
    gpus: 8
    shm_size: 8Gi
    env:
      NCCL_DEBUG: INFO
    node_selector:
      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    wait: true
    wait_timeout: 1800
  register: single_node

- name: Delete it
  gpuops.cluster.batch_job:
    name: dgx-single-node
    namespace: training
    state: absent
"""

RETURN = r"""
job:
  description: The Job as created or found (in check mode, as it would be created).
  returned: state=present
  type: dict
method:
  description: What was done, one of C(created), C(replaced), C(unchanged), C(deleted), C(absent).
  returned: always
  type: str
phase:
  description: C(Pending), C(Running), C(Succeeded) (the condition C(Complete)), C(Failed) or C(Suspended).
  returned: state=present
  type: str
conditions:
  description: The Job's status conditions.
  returned: state=present
  type: list
  elements: dict
pods:
  description: The Job's pods, as M(gpuops.cluster.mpijob) returns its RV(gpuops.cluster.mpijob#module:pods).
  returned: state=present
  type: list
  elements: dict
launcher_log:
  description: The last O(log_lines) lines of the pod's log; empty when there is none (see RV(launcher_log_error)).
  returned: wait=true
  type: str
launcher_log_error:
  description: Why the pod's log could not be read, or null.
  returned: wait=true
  type: str
elapsed:
  description: Seconds spent waiting.
  returned: wait=true
  type: float
reason:
  description: Why the Job cannot complete.
  returned: failure
  type: str
failed_pods:
  description: The pods concerned by the failure, each with its summary and its events.
  returned: failure
  type: list
  elements: dict
events:
  description: The Job's events.
  returned: failure
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.batch_job import BATCH_JOB, build_batch_job, job_to_delete
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.module_flow import run_job_module
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.options import job_argument_spec
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def argument_spec():
    return job_argument_spec(
        name=dict(type="str", required=True),
        namespace=dict(type="str", default="default"),
        parallelism=dict(type="int"),
        subdomain=dict(type="str"),
        one_pod_per_node=dict(type="bool", default=False),
        readiness_port=dict(type="int"),
        gpus=dict(type="int"),
        volumes=dict(type="list", elements="dict"),
    )


def run_module(module, make_api=None):
    run_job_module(module, BATCH_JOB, build_batch_job, job_to_delete, make_api)


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
