#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: tfjob
short_description: Create, replace or delete a Kubeflow TFJob and wait for it, failing fast
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Manages one TFJob (C(kubeflow.org/v1), the Kubeflow Training Operator's API) built from high-level
    options (image, command, workers, parameter servers, a chief, GPUs, environment, resources, placement)
    or given as a raw O(definition).
  - Every replica runs the same O(command) in a container named C(tensorflow) (the Training Operator refuses a
    TFJob without one) whose port C(tfjob-port) is O(port). The operator gives each replica its part of the
    cluster in the environment variable C(TF_CONFIG) (C(cluster) with the C(chief), C(worker) and C(ps)
    addresses, and the replica's own C(task) type and index), as TensorFlow's distribution strategies read it.
  - Every replica has C(restartPolicy=Never). A failed replica is never restarted, so its pod and log stay, and
    the Training Operator fails the job.
  - Every option is checked before any API call, and every problem is reported at once.
  - Creation is idempotent, as with M(gpuops.cluster.mpijob). The job records the spec it was created with, a
    later run with the same spec changes nothing, and a different spec fails unless O(force=true), which deletes
    the job and creates it again.
  - With O(wait=true) it waits for the job to succeed (or run, see O(wait_for)) and returns as soon as the job
    cannot succeed any more, not at the timeout. That is when the TFJob has the condition C(Failed), when a pod
    of a replica with C(restartPolicy=Never) has failed, when a container cannot start (an image that cannot
    be pulled, a container the runtime cannot create), when a pod cannot be scheduled (unless
    O(fail_on_unschedulable=false)), or when the Training Operator rejected the job.
  - The job succeeds when the chief completes, or worker 0 when there is no chief. That pod carries the label
    C(training.kubeflow.org/job-role=master); its log is RV(master_log). Once the wait ends the log of every
    replica that started is returned as well, in RV(replica_logs).
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
  - gpuops.cluster.job_wait
  - gpuops.cluster.job_pod
  - gpuops.cluster.kubeflow_job
options:
  name:
    description:
      - The TFJob's name. Required unless O(definition) has C(metadata.name).
      - The Training Operator names each pod, and the Service in front of it, C(<name>-<replica type>-<index>)
        (C(<name>-worker-0), C(<name>-ps-0), C(<name>-chief-0)), so the name must be a DNS-1035 label and the
        longest of those names at most 63 characters.
    type: str
  definition:
    description:
      - A whole TFJob manifest (C(apiVersion=kubeflow.org/v1), C(kind=TFJob)), used as given. Each replica spec
        under C(spec.tfReplicaSpecs) must have a container named C(tensorflow).
      - Mutually exclusive with the high-level options (O(image), O(command), O(workers) and the others
        that describe the job, O(labels) and O(annotations) included; put those in the definition).
    type: dict
  image:
    description:
      - The container image of every replica. Required with O(state=present) unless O(definition) is given.
    type: str
  command:
    description:
      - The command every replica runs, as a list (for example C([python3, /opt/train.py])). Each replica tells
        its part from C(TF_CONFIG).
      - Required with O(state=present) unless O(definition) is given.
    type: list
    elements: str
  workers:
    description:
      - How many worker replicas. At least 1. When not given, 1.
    type: int
  parameter_servers:
    description:
      - How many parameter server replicas (C(PS)). 0 or more; when not given, 0.
    type: int
  chief:
    description:
      - Add one C(Chief) replica, the coordinator that TensorFlow's C(ParameterServerStrategy) needs. The chief
        requests no GPU. With a chief the job succeeds when the chief completes, without one when worker 0 does.
    type: bool
    default: false
  success_policy:
    description:
      - V(AllWorkers) marks the job succeeded once every worker has completed, so that each worker's log is
        whole when the job ends, as synchronous training (MultiWorkerMirroredStrategy) needs. When not given,
        the operator's default, the chief completing, or worker 0 without a chief.
    type: str
    choices: [AllWorkers]
  gpus_per_worker:
    description:
      - GPUs each worker requests, as the limit of O(gpu_resource_name). 0 or more; when not given, 0. The chief
        and the parameter servers request none.
    type: int
  env:
    description:
      - Environment variables of every replica (for example C(NCCL_DEBUG), C(TF_CPP_MIN_LOG_LEVEL)). Numbers and
        booleans are written as text.
    type: dict
  resources:
    description:
      - Resources of each worker container, in the forms M(gpuops.cluster.mpijob) takes for its
        O(gpuops.cluster.mpijob#module:resources) (hugepages included).
    type: dict
  ps_resources:
    description:
      - Resources of each parameter server container, in the same forms as O(resources).
    type: dict
  host_network:
    description:
      - Run every replica in the host's network namespace. The replicas still resolve the Services that
        C(TF_CONFIG) names. Each binds O(port) on its node, so no two replicas may share a node (see
        O(spread_workers)).
    type: bool
  shm_size:
    description:
      - The size of a memory-backed C(emptyDir) mounted at C(/dev/shm) in every worker, a quantity such as
        V(1Gi), for NCCL's shared-memory transport. When not given (or empty), no volume is added.
    type: str
  privileged:
    description:
      - Run the worker containers privileged, for RDMA devices or hugepages that no device plugin hands to the pod.
        The chief and the parameter servers are never privileged.
    type: bool
    default: false
  capabilities:
    description:
      - Linux capabilities added to the worker containers (not the chief or the parameter servers), without the
        C(CAP_) prefix, such as V(IPC_LOCK), which RDMA needs to pin the memory it registers (InfiniBand or RoCE
        through an RDMA device plugin's resource, given in O(resources)). A narrower grant than O(privileged). None
        by default.
    type: list
    elements: str
  volumes:
    description:
      - Volumes of every replica (workers, chief and parameter servers), each a dict with C(name), an absolute
        C(mount_path), an optional C(read_only) and one volume source as Kubernetes writes it, such as
        C(configMap) (the benchmark program, for a stock framework image) or C(persistentVolumeClaim) (a dataset).
    type: list
    elements: dict
  host_paths:
    description:
      - Absolute host paths mounted at the same path in every worker (not the chief or the parameter servers).
        None by default. A relative path or a path given twice is refused.
    type: list
    elements: str
  service_account:
    description:
      - The service account of every replica (it must exist). When not given, the namespace's C(default) one.
    type: str
  node_selector:
    description:
      - Node labels the workers and the chief must match. The parameter servers are not constrained.
    type: dict
  tolerations:
    description:
      - Tolerations of the workers and the chief, each a dict with C(key), C(operator) (V(Equal) or V(Exists)),
        C(value), C(effect) and C(tolerationSeconds).
    type: list
    elements: dict
  port:
    description:
      - The port of the TensorFlow servers, the container port C(tfjob-port) of every replica, which C(TF_CONFIG)
        names. When not given, V(2222).
    type: int
  backoff_limit:
    description:
      - How many times the Training Operator may restart failed replicas before the job fails. Replicas built
        here are never restarted.
    type: int
  labels:
    description:
      - Labels of the TFJob object.
    type: dict
  annotations:
    description:
      - Annotations of the TFJob object.
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
  - The credentials need C(get), C(create) and C(delete) on C(tfjobs.kubeflow.org), C(list) on C(pods) and
    C(events), and C(get) on C(pods/log).
  - A failed task returns RV(reason), the pods concerned with their events, RV(master_log) and RV(replica_logs) as well.
seealso:
  - module: gpuops.cluster.mpijob
  - module: gpuops.cluster.training_report
  - name: Kubeflow Training Operator
    description: The operator that runs TFJobs.
    link: https://github.com/kubeflow/training-operator
"""

EXAMPLES = r"""
- name: Train with ParameterServerStrategy on 4 GPU workers, 2 parameter servers and a chief
  gpuops.cluster.tfjob:
    name: resnet50-ps
    namespace: training
    image: registry.example.com/tensorflow:2.16.1-gpu
    command: [python3, /opt/gpuops/tf_benchmark.py, --strategy, parameter_server]
    workers: 4
    parameter_servers: 2
    chief: true
    gpus_per_worker: 1
    env:
      NCCL_DEBUG: INFO
    resources:
      cpu: 8
      memory: 32Gi
    ps_resources:
      cpu: 4
      memory: 16Gi
    shm_size: 2Gi
    spread_workers: true
    node_selector:
      nvidia.com/gpu.present: "true"
    clean_pod_policy: All
    wait: true
    wait_timeout: 3600
  register: training

- name: Keep the chief's log for the report
  ansible.builtin.copy:
    content: "{{ training.master_log }}"
    dest: /var/tmp/tfjob.log
    mode: "0644"

- name: Name the replicas whose log could not be read
  ansible.builtin.debug:
    msg: "{{ training.replica_logs | selectattr('error') | map(attribute='pod') | list }}"

- name: Delete it; its pods go first
  gpuops.cluster.tfjob:
    state: absent
    name: resnet50-ps
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
  description: The TFJob spec applied (in check mode, the spec it would create).
  returned: state=present
  type: dict
  sample: {tfReplicaSpecs: {Worker: {replicas: 2, restartPolicy: Never}}}
differences:
  description: "The spec fields that differ from the live job's, as C(path: live -> desired)."
  returned: state=present
  type: list
  elements: str
  sample: ["spec.tfReplicaSpecs.Worker.replicas: 2 -> 4"]
tfjob:
  description: The TFJob as last read (in check mode, as it would be created).
  returned: state=present
  type: dict
phase:
  description: The job's most decisive true condition, as M(gpuops.cluster.mpijob) returns its RV(gpuops.cluster.mpijob#module:phase).
  returned: state=present
  type: str
  sample: Succeeded
conditions:
  description: The TFJob's status conditions, with C(replica_statuses) (C(Chief), C(Worker), C(PS)), C(start_time)
    and C(completion_time) beside them as for M(gpuops.cluster.mpijob).
  returned: state=present
  type: list
  elements: dict
pods:
  description:
    - The job's pods as M(gpuops.cluster.mpijob) returns its RV(gpuops.cluster.mpijob#module:pods); a pod's
      C(role) is its replica type (C(chief), C(worker), C(ps), C(evaluator)).
  returned: state=present
  type: list
  elements: dict
master_log:
  description:
    - The last O(log_lines) lines of the log of the pod labelled C(training.kubeflow.org/job-role=master), the
      chief or, without one, worker 0; empty when there is none (see RV(master_log_error)).
  returned: wait=true
  type: str
master_log_source:
  description: Where RV(master_log) comes from, C(pod/<name>), or C(none) when no log could be read.
  returned: wait=true
  type: str
  sample: pod/resnet50-ps-chief-0
master_log_pod:
  description: The pod whose log RV(master_log) is.
  returned: wait=true
  type: str
master_log_error:
  description: Why the master pod's log could not be read, or null.
  returned: wait=true
  type: str
replica_logs:
  description:
    - The log of every pod of the job that started, read once the wait ended, sorted by replica type then index.
  returned: wait=true
  type: list
  elements: dict
  contains:
    pod:
      description: The pod's name.
      type: str
      sample: resnet50-ps-worker-0
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
      with their events) and C(events) (the TFJob's), as M(gpuops.cluster.mpijob) does.
  returned: failure
  type: str
  sample: "ps pod(s) failed: resnet50-ps-ps-0: container tensorflow exit code 1 (Error); ..."
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.module_flow import run_job_module
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.options import kubeflow_job_argument_spec
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.tfjob import TFJOB, desired_job, job_to_delete
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def argument_spec():
    return kubeflow_job_argument_spec(
        parameter_servers=dict(type="int"),
        chief=dict(type="bool", default=False),
        ps_resources=dict(type="dict"),
        volumes=dict(type="list", elements="dict"),
        port=dict(type="int"),
        success_policy=dict(type="str", choices=["AllWorkers"]),
    )


def run_module(module, make_api=None):
    run_job_module(module, TFJOB, desired_job, job_to_delete, make_api)


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
