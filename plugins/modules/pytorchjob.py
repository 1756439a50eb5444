#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: pytorchjob
short_description: Create, replace or delete a Kubeflow PyTorchJob and wait for it, failing fast
version_added: 0.3.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Manages one PyTorchJob (C(kubeflow.org/v1), the Kubeflow Training Operator's API) built from high-level
    options (image, command, pods, processes and GPUs per pod, environment, resources, placement) or given as a
    raw O(definition).
  - O(workers) pods train alike. The first is the C(Master) replica, the others C(Worker) replicas. Every pod runs
    the same O(command) in a container named C(pytorch) (the Training Operator refuses a PyTorchJob without one)
    whose port C(pytorchjob-port) is O(port).
  - The operator gives each pod C(MASTER_ADDR) (the master's Service, C(<name>-master-0)), C(MASTER_PORT)
    (O(port)), C(WORLD_SIZE) (pods times O(procs_per_worker)) and C(RANK) (the pod's index, the master 0). It also
    gives C(PET_NNODES), C(PET_NODE_RANK) and C(PET_NPROC_PER_NODE), which C(torchrun) reads. Kubernetes expands
    C($(MASTER_ADDR)) and the like in O(command).
  - Every replica has C(restartPolicy=Never). A failed pod is never restarted, so its log stays, and the Training
    Operator fails the job.
  - Every option is checked before any API call, and every problem is reported at once. Creation is idempotent,
    as with M(gpuops.cluster.mpijob); a different spec fails unless O(force=true).
  - With O(wait=true) it waits for the job to succeed (or run, see O(wait_for)) and returns as soon as the job
    cannot succeed any more, not at the timeout. That is when the PyTorchJob has the condition C(Failed), when a
    pod has failed, when a container cannot start (the workers' init container included), when a pod cannot be
    scheduled (unless O(fail_on_unschedulable=false)), or when the Training Operator rejected the job.
  - The job succeeds when the master completes; its log is RV(master_log). Once the wait ends the log of every pod
    that started is returned as well, in RV(replica_logs).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
  - gpuops.cluster.job_wait
  - gpuops.cluster.job_pod
  - gpuops.cluster.kubeflow_job
options:
  name:
    description:
      - The PyTorchJob's name. Required unless O(definition) has C(metadata.name).
      - Each pod, and the Service in front of it, is named C(<name>-master-0) or C(<name>-worker-<index>), so the
        name must be a DNS-1035 label and the longest of those names at most 63 characters.
    type: str
  definition:
    description:
      - A whole PyTorchJob manifest (C(apiVersion=kubeflow.org/v1), C(kind=PyTorchJob)), used as given. Each replica
        spec under C(spec.pytorchReplicaSpecs) must have a container named C(pytorch).
      - Mutually exclusive with the high-level options (O(image), O(command), O(workers) and the others that
        describe the job, O(labels) and O(annotations) included).
    type: dict
  image:
    description:
      - The container image of every pod, with PyTorch. Required with O(state=present) unless O(definition) is given.
    type: str
  command:
    description:
      - The command every pod runs, as a list, for example C([torchrun, --nnodes, '2', --nproc-per-node, '4',
        --node-rank, $(RANK), --master-addr, $(MASTER_ADDR), --master-port, $(MASTER_PORT), /opt/train.py]).
      - Required with O(state=present) unless O(definition) is given.
    type: list
    elements: str
  workers:
    description:
      - How many pods train, the master included. At least 1; when not given, 1.
    type: int
  procs_per_worker:
    description:
      - Processes (ranks) each pod runs, the PyTorchJob's C(nprocPerNode), which the operator counts in
        C(WORLD_SIZE) and gives as C(PET_NPROC_PER_NODE). At least 1. When not given, the operator's default.
    type: int
  gpus_per_worker:
    description:
      - GPUs each pod requests, as the limit of O(gpu_resource_name). 0 or more; when not given, 0.
    type: int
  env:
    description:
      - Environment variables of every pod. Numbers and booleans are written as text.
    type: dict
  resources:
    description:
      - Resources of each pod's container, in the forms M(gpuops.cluster.mpijob) takes for its
        O(gpuops.cluster.mpijob#module:resources) (hugepages included).
    type: dict
  host_network:
    description:
      - Run every pod in the host's network namespace; each binds O(port) on its node, so no two pods may share
        a node (see O(spread_workers)).
    type: bool
  shm_size:
    description:
      - The size of a memory-backed C(emptyDir) mounted at C(/dev/shm) in every pod, such as V(1Gi), for NCCL
        between the processes of one pod and for PyTorch's shared tensors. When not given (or empty), none.
    type: str
  privileged:
    description:
      - Run the containers privileged, for RDMA devices or hugepages that no device plugin hands to the pod.
    type: bool
    default: false
  capabilities:
    description:
      - Linux capabilities added to the containers, without the C(CAP_) prefix, such as V(IPC_LOCK) for RDMA.
    type: list
    elements: str
  volumes:
    description:
      - Volumes of every pod, each a dict with C(name), an absolute C(mount_path), an optional C(read_only) and one
        volume source as Kubernetes writes it, such as C(configMap) (the benchmark program, for a stock PyTorch image).
    type: list
    elements: dict
  host_paths:
    description:
      - Absolute host paths mounted at the same path in every pod. None by default.
    type: list
    elements: str
  service_account:
    description:
      - The service account of every pod (it must exist). When not given, the namespace's C(default) one.
    type: str
  node_selector:
    description:
      - Node labels every pod must match.
    type: dict
  tolerations:
    description:
      - Tolerations of every pod, each a dict with C(key), C(operator), C(value), C(effect) and C(tolerationSeconds).
    type: list
    elements: dict
  port:
    description:
      - The master's rendezvous port, the container port C(pytorchjob-port) of every pod, given as
        C(MASTER_PORT). When not given, V(23456).
    type: int
  backoff_limit:
    description:
      - How many times the Training Operator may restart failed pods before the job fails. Pods built here are
        never restarted.
    type: int
  labels:
    description:
      - Labels of the PyTorchJob object.
    type: dict
  annotations:
    description:
      - Annotations of the PyTorchJob object.
    type: dict
  log_lines:
    description:
      - How many of each log's last lines to return (RV(master_log) and every entry of RV(replica_logs)); 0
        returns the whole logs.
    type: int
    default: 1000
requirements:
  - kubernetes >= 24.2.0
notes:
  - The credentials need C(get), C(create) and C(delete) on C(pytorchjobs.kubeflow.org), C(list) on C(pods) and
    C(events), and C(get) on C(pods/log).
  - The Training Operator gives the workers an init container (the image of its C(--pytorch-init-container-image)
    flag, C(alpine:3.10) by default) that waits until the master's name resolves. Where that image cannot be pulled,
    the workers cannot start, and the wait fails saying so.
  - A failed task returns RV(reason), the pods concerned with their events, RV(master_log) and RV(replica_logs) as well.
seealso:
  - module: gpuops.cluster.tfjob
  - module: gpuops.cluster.training_report
  - name: Kubeflow Training Operator
    description: The operator that runs PyTorchJobs.
    link: https://github.com/kubeflow/training-operator
"""

EXAMPLES = r"""
- name: Train with DistributedDataParallel on 2 pods of 4 GPUs each, torchrun in every pod
  gpuops.cluster.pytorchjob:
    name: resnet50-ddp
    namespace: training
    image: registry.example.com/pytorch:2.5.1-cuda12.4
    command: [torchrun, --nnodes, "2", --nproc-per-node, "4", --node-rank, $(RANK), --master-addr, $(MASTER_ADDR),
              --master-port, $(MASTER_PORT), /opt/gpuops/benchmark/gpuops_benchmark.py, --framework, pytorch,
              --distribution, ddp]
    workers: 2
    procs_per_worker: 4
    gpus_per_worker: 4
    shm_size: 8Gi
    spread_workers: true
    wait: true
    wait_timeout: 3600
  register: training

- name: Keep the master's log for the report
  ansible.builtin.copy:
    content: "{{ training.master_log }}"
    dest: /var/tmp/pytorchjob.log
    mode: "0644"

- name: Delete it; its pods go first
  gpuops.cluster.pytorchjob:
    state: absent
    name: resnet50-ddp
    namespace: training
    wait: true
"""

RETURN = r"""
method:
  description: What was done (in check mode, what would be done), as for M(gpuops.cluster.mpijob).
  returned: always
  type: str
  choices: [created, replaced, unchanged, deleted, absent]
spec:
  description: The PyTorchJob spec applied (in check mode, the spec it would create).
  returned: state=present
  type: dict
  sample: {pytorchReplicaSpecs: {Master: {replicas: 1, restartPolicy: Never}}, nprocPerNode: "4"}
differences:
  description: "The spec fields that differ from the live job's, as C(path: live -> desired)."
  returned: state=present
  type: list
  elements: str
pytorchjob:
  description: The PyTorchJob as last read (in check mode, as it would be created).
  returned: state=present
  type: dict
phase:
  description: The job's most decisive true condition, as M(gpuops.cluster.mpijob) returns its RV(gpuops.cluster.mpijob#module:phase).
  returned: state=present
  type: str
  sample: Succeeded
conditions:
  description: The PyTorchJob's status conditions, with C(replica_statuses) (C(Master), C(Worker)), C(start_time) and
    C(completion_time) beside them as for M(gpuops.cluster.mpijob).
  returned: state=present
  type: list
  elements: dict
pods:
  description: The job's pods as M(gpuops.cluster.mpijob) returns them; a pod's C(role) is its replica type (C(master), C(worker)).
  returned: state=present
  type: list
  elements: dict
master_log:
  description: The last O(log_lines) lines of the master pod's log; empty when there is none (see RV(master_log_error)).
  returned: wait=true
  type: str
master_log_source:
  description: Where RV(master_log) comes from, C(pod/<name>), or C(none) when no log could be read.
  returned: wait=true
  type: str
  sample: pod/resnet50-ddp-master-0
master_log_pod:
  description: The pod whose log RV(master_log) is.
  returned: wait=true
  type: str
master_log_error:
  description: Why the master pod's log could not be read, or null.
  returned: wait=true
  type: str
replica_logs:
  description: The log of every pod of the job that started, read once the wait ended, the master first, then the workers by index.
  returned: wait=true
  type: list
  elements: dict
  contains:
    pod:
      description: The pod's name.
      type: str
      sample: resnet50-ddp-worker-0
    replica_type:
      description: The pod's replica type, in lowercase.
      type: str
      sample: worker
    index:
      description: The pod's index among the replicas of its type.
      type: int
      sample: 0
    text:
      description: The last O(log_lines) lines of its log, or null when it could not be read.
      type: str
    error:
      description: Why its log could not be read, or null.
      type: str
elapsed:
  description: Seconds spent waiting.
  returned: wait=true
  type: float
reason:
  description:
    - Why the job cannot succeed. A failed task also returns C(detected_at), C(failed_pods) (the pods concerned,
      with their events) and C(events) (the PyTorchJob's), as M(gpuops.cluster.mpijob) does.
  returned: failure
  type: str
  sample: "worker pod(s) failed: resnet50-ddp-worker-0: container pytorch exit code 1 (Error); ..."
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.module_flow import run_job_module
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.options import kubeflow_job_argument_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.pytorchjob import PYTORCHJOB, desired_job, job_to_delete
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def argument_spec():
    return kubeflow_job_argument_spec(
        procs_per_worker=dict(type="int"),
        volumes=dict(type="list", elements="dict"),
        port=dict(type="int"),
    )


def run_module(module, make_api=None):
    run_job_module(module, PYTORCHJOB, desired_job, job_to_delete, make_api)


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
