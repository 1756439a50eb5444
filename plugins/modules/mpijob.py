#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: mpijob
short_description: Create, replace or delete a Kubeflow MPIJob and wait for it, failing fast
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Manages one MPIJob (C(kubeflow.org/v2beta1), the Kubeflow MPI Operator's API) built from high-level
    options (image, command, workers, GPUs, slots, environment, resources including hugepages, placement)
    or given as a raw O(definition).
  - Every option is checked before any API call, and every problem is reported at once.
  - Creation is idempotent. The job records the spec it was created with in the annotation
    C(gpuops.io/applied-spec); a later run with the same spec changes nothing. A different spec fails,
    because most of an MPIJob's spec cannot be changed, unless O(force=true), which deletes the job and
    creates it again.
  - With O(wait=true) it waits for the job to succeed (or run, see O(wait_for)) and returns as soon as
    the job cannot succeed any more, not at the timeout. That is when the MPIJob has the condition
    C(Failed), when a worker pod has failed (the MPI Operator never replaces a failed worker, so mpirun
    has lost a rank), when a container of the launcher or a worker cannot start (a waiting reason
    C(ErrImageNeverPull), C(ErrImagePull), C(ImagePullBackOff), C(InvalidImageName),
    C(CreateContainerConfigError) or C(CreateContainerError)), when a pod cannot be scheduled (unless
    O(fail_on_unschedulable=false)), or when the MPI Operator rejected the job. The failure carries the
    reason, the pods concerned with their events, the MPIJob's events and the tail of the launcher's log.
  - A built job's launcher is never restarted in place (C(restartPolicy=Never) on its replica spec); the
    launcher Job makes a new pod up to O(backoff_limit) times. With the MPI Operator's default
    (V(OnFailure)) the Job controller deletes a launcher pod whose restarts pass the limit, and its log with it.
  - While it waits, a look the API server does not answer (a restart) is tried again (see O(api_retries));
    only what the API server reports decides success.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpuops.cluster.k8s_connection
  - gpuops.cluster.job_wait
  - gpuops.cluster.job_pod
  - gpuops.cluster.kubeflow_job
options:
  name:
    description:
      - The MPIJob's name. Required unless O(definition) has C(metadata.name).
      - Pods are named C(<name>-worker-<index>) and C(<name>-launcher-<suffix>), so the name must be a DNS-1035
        label and C(<name>-worker-<workers - 1>) at most 63 characters.
    type: str
  definition:
    description:
      - A whole MPIJob manifest (C(apiVersion=kubeflow.org/v2beta1), C(kind=MPIJob)), used as given.
      - Mutually exclusive with the high-level options (O(image), O(command), O(workers) and the others
        that describe the job, O(labels) and O(annotations) included; put those in the definition).
    type: dict
  image:
    description:
      - The container image of the launcher and the workers. Required with O(state=present) unless
        O(definition) is given.
    type: str
  command:
    description:
      - The launcher's command, as a list (for example C(mpirun) and its arguments, or C(horovodrun)).
      - Required with O(state=present) unless O(definition) is given.
      - Give a YAML list; a single string would be split at commas.
    type: list
    elements: str
  worker_command:
    description:
      - The workers' command. When not given the image's entrypoint runs, which must start an SSH server
        for OpenMPI and MPICH (for example C([/usr/sbin/sshd, -De])).
    type: list
    elements: str
  workers:
    description:
      - How many worker pods. At least 1. When not given, 1.
    type: int
  slots_per_worker:
    description:
      - MPI slots (ranks) per worker. When not given, O(gpus_per_worker) when that is above 0, else 1.
    type: int
  gpus_per_worker:
    description:
      - GPUs each worker requests, as the limit of O(gpu_resource_name). 0 or more; when not given, 0.
    type: int
  env:
    description:
      - Environment variables of the launcher and the workers (for example C(NCCL_DEBUG), C(NCCL_SOCKET_IFNAME),
        C(HOROVOD_FUSION_THRESHOLD)). Numbers and booleans are written as text.
    type: dict
  resources:
    description:
      - Resources of each worker container.
      - Either the Kubernetes form, a dict with C(limits) and/or C(requests), or a flat dict of
        resource name to quantity, which sets requests and limits alike.
      - Names are C(cpu), C(memory), C(ephemeral-storage), C(hugepages-<size>) (C(hugepages-2Mi),
        C(hugepages-1Gi)) or domain-qualified extended resources (C(rdma/hca), C(nvidia.com/gpu)).
      - Hugepages and extended resources cannot be overcommitted (requests equal limits), and
        hugepages need a cpu or memory request as well.
    type: dict
  launcher_resources:
    description:
      - Resources of the launcher container, in the same forms as O(resources).
    type: dict
  host_network:
    description:
      - Run the launcher and the workers in the host's network namespace, as fabrics without a CNI for RDMA
        require.
    type: bool
  shm_size:
    description:
      - The size of a memory-backed C(emptyDir) mounted at C(/dev/shm) in the launcher and every worker, a
        quantity such as V(1Gi). The container runtime's own C(/dev/shm) (64Mi) is too small for NCCL's
        shared-memory transport between the ranks of one pod.
      - When not given (or empty), no volume is added. The memory counts against the pods' memory limit.
    type: str
  privileged:
    description:
      - Run the worker containers privileged. Off by default; a site turns it on when the ranks must open
        RDMA devices or map hugepages that the device plugins do not hand to the pod. The launcher, which
        runs only mpirun, is never privileged.
    type: bool
    default: false
  capabilities:
    description:
      - Linux capabilities added to the worker containers (not the launcher), without the C(CAP_) prefix, such as V(IPC_LOCK), which RDMA needs to
        pin the memory it registers (InfiniBand or RoCE through an RDMA device plugin's resource, given in
        O(resources)). A narrower grant than O(privileged). None by default.
    type: list
    elements: str
  host_paths:
    description:
      - Absolute host paths mounted at the same path in every worker (not the launcher), for example
        C(/dev/hugepages) for hugepages and C(/sys) for NCCL's view of the PCI and NIC topology. None by
        default. A relative path or a path given twice is refused.
    type: list
    elements: str
  service_account:
    description:
      - The service account of the launcher and the workers (it must exist). When not given, the namespace's
        C(default) one.
    type: str
  node_selector:
    description:
      - Node labels the workers must match. The launcher, which runs only mpirun, is not constrained.
    type: dict
  tolerations:
    description:
      - Tolerations of the workers, each a dict with C(key), C(operator) (V(Equal) or V(Exists)), C(value),
        C(effect) and C(tolerationSeconds).
    type: list
    elements: dict
  launcher_creation_policy:
    description:
      - V(WaitForWorkersReady) creates the launcher once every worker is ready, so that mpirun does not start
        before its hosts; V(AtStartup) creates it at once. When not given, V(WaitForWorkersReady).
      - Either way the launcher pod of a built job starts with an init container, C(wait-for-workers), that waits
        until every worker's name resolves (a ready worker's DNS record can lag behind its readiness), at most 120 s,
        then lets mpirun start and report any name still missing. It runs C(sh) and C(getent) from O(image).
    type: str
    choices: [AtStartup, WaitForWorkersReady]
  worker_ssh_port:
    description:
      - The port the workers' sshd listens on. A worker counts as ready only once it accepts connections
        there (a TCP readiness probe), so that with O(launcher_creation_policy=WaitForWorkersReady) mpirun
        never starts before its hosts' sshd. V(0) adds no probe (a worker is ready when its container starts).
      - When not given, V(22).
    type: int
  backoff_limit:
    description:
      - How many times the launcher is retried before the job fails.
    type: int
  ssh_auth_mount_path:
    description:
      - Where the MPI Operator mounts the SSH keys in the pods (the operator's default is C(/root/.ssh)).
    type: str
  mpi_implementation:
    description:
      - The MPI implementation the image uses. When not given, V(OpenMPI).
    type: str
    choices: [OpenMPI, Intel, MPICH]
  labels:
    description:
      - Labels of the MPIJob object.
    type: dict
  annotations:
    description:
      - Annotations of the MPIJob object.
    type: dict
  log_lines:
    description:
      - How many of the launcher log's last lines to return; 0 returns the whole log.
    type: int
    default: 1000
requirements:
  - kubernetes >= 24.2.0
notes:
  - The credentials need C(get), C(create) and C(delete) on C(mpijobs.kubeflow.org), and C(list) on
    C(pods) and C(events), and C(get) on C(pods/log).
  - A failed task returns RV(reason), RV(failed_pods), RV(events) and RV(launcher_log) as well.
seealso:
  - module: kubernetes.core.k8s
  - module: gpuops.cluster.training_report
  - name: Kubeflow MPI Operator
    description: The operator that runs MPIJobs.
    link: https://github.com/kubeflow/mpi-operator
"""

EXAMPLES = r"""
- name: Run the Horovod benchmark on 2 DGX nodes (16 GPUs) and wait for it
  gpuops.cluster.mpijob:
    name: resnet50-16gpu
    namespace: training
    image: registry.example.com/horovod:0.28.1-pytorch
    command: [mpirun, -np, "16", -bind-to, none, -map-by, slot, -x, NCCL_DEBUG,
              python3, /opt/gpuops/benchmark.py, --model, resnet50]
    worker_command: [/usr/sbin/sshd, -De]
    workers: 2
    gpus_per_worker: 8
    env:
      NCCL_DEBUG: INFO
      NCCL_IB_HCA: mlx5
    resources:
      cpu: 32
      memory: 256Gi
      hugepages-1Gi: 16Gi
    host_network: true
    shm_size: 8Gi
    host_paths: [/dev/infiniband]
    privileged: true
    service_account: gpuops-benchmark
    image_pull_secrets: [gpuops-registry]
    node_selector:
      nvidia.com/gpu.present: "true"
    tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
    clean_pod_policy: Running
    wait: true
    wait_timeout: 1800
  register: benchmark

- name: Keep the launcher log for the report
  ansible.builtin.copy:
    content: "{{ benchmark.launcher_log }}"
    dest: /var/tmp/benchmark.log
    mode: "0644"

- name: Apply a job written by hand
  gpuops.cluster.mpijob:
    definition: "{{ lookup('ansible.builtin.file', 'pi.yaml') | from_yaml }}"
    namespace: training
    wait: true

- name: Delete it and wait until its pods are gone
  gpuops.cluster.mpijob:
    name: resnet50-16gpu
    namespace: training
    state: absent
    wait: true
"""

RETURN = r"""
method:
  description: What was done (in check mode, what would be done).
  returned: always
  type: str
  choices: [created, replaced, unchanged, deleted, absent]
  sample: created
spec:
  description: The MPIJob spec applied (in check mode, the spec it would create).
  returned: state=present
  type: dict
  sample: {slotsPerWorker: 8, launcherCreationPolicy: WaitForWorkersReady, mpiReplicaSpecs: {}}
differences:
  description: "The spec fields that differ from the live job's, as C(path: live -> desired)."
  returned: state=present
  type: list
  elements: str
  sample: ["spec.mpiReplicaSpecs.Worker.replicas: 2 -> 4"]
mpijob:
  description: The MPIJob as last read (in check mode, as it would be created).
  returned: state=present
  type: dict
phase:
  description: The job's most decisive true condition, or V(Pending) when it has none.
  returned: state=present
  type: str
  choices: [Pending, Created, Running, Restarting, Suspended, Succeeded, Failed]
  sample: Succeeded
conditions:
  description: The MPIJob's status conditions.
  returned: state=present
  type: list
  elements: dict
replica_statuses:
  description: The MPIJob's replica statuses (C(Launcher) and C(Worker), with C(active), C(succeeded), C(failed)).
  returned: state=present
  type: dict
  sample: {Launcher: {succeeded: 1}, Worker: {active: 2}}
start_time:
  description: When the job started.
  returned: state=present
  type: str
completion_time:
  description: When the job finished.
  returned: state=present
  type: str
pods:
  description:
    - The job's pods with name, role, phase, node, reason and message, and where they apply
      C(terminated_containers) (name, exit code, reason, message), C(waiting_containers) (name, image, the
      kubelet's reason and message) and C(unschedulable) (the scheduler's message).
  returned: state=present
  type: list
  elements: dict
launcher_log:
  description: The last O(log_lines) lines of the launcher's log; empty when there is none (see RV(launcher_log_error)).
  returned: wait=true
  type: str
launcher_log_source:
  description:
    - Where RV(launcher_log) comes from, C(pod/<name>) for the launcher pod's log read through the API, or
      C(none) when no log could be read (see RV(launcher_log_error)).
  returned: wait=true
  type: str
  sample: pod/resnet50-16gpu-launcher-x7k2p
launcher_log_pod:
  description: The launcher pod whose log was read.
  returned: wait=true
  type: str
launcher_log_error:
  description: Why the launcher pod's log could not be read, or null.
  returned: wait=true
  type: str
elapsed:
  description: Seconds spent waiting.
  returned: wait=true
  type: float
  sample: 3.021
reason:
  description: Why the job cannot succeed.
  returned: failure
  type: str
  sample: "container(s) cannot start: pod bench-worker-0: container worker (image horovod:0.28.1): ErrImagePull: ..."
detected_at:
  description: When the failure was seen, in seconds since the epoch.
  returned: failure
  type: float
failed_pods:
  description:
    - The pods concerned by the failure, each with its summary (as in RV(pods)) and its events. Those are
      the failed pods, the pods with a container that cannot start (see C(waiting_containers)) and the pods
      the scheduler cannot place (see C(unschedulable)).
  returned: failure
  type: list
  elements: dict
events:
  description: The MPIJob's events.
  returned: failure
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.module_flow import run_job_module
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB, desired_job, job_to_delete
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.options import kubeflow_job_argument_spec
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule


def argument_spec():
    return kubeflow_job_argument_spec(
        worker_command=dict(type="list", elements="str"),
        slots_per_worker=dict(type="int"),
        launcher_resources=dict(type="dict"),
        launcher_creation_policy=dict(type="str", choices=["AtStartup", "WaitForWorkersReady"]),
        worker_ssh_port=dict(type="int"),
        ssh_auth_mount_path=dict(type="str"),
        mpi_implementation=dict(type="str", choices=["OpenMPI", "Intel", "MPICH"]),
    )


def run_module(module, make_api=None):
    run_job_module(module, MPIJOB, desired_job, job_to_delete, make_api)


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argument_spec(), supports_check_mode=True)
    run_module(module)


if __name__ == "__main__":
    main()
