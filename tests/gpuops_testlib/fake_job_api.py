# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An in-memory cluster for the jobs' lifecycle (plugins/module_utils/jobs/lifecycle.py), for unit tests: FakeMPIJobApi
serves every job kind, and the MPIJob "bench" is the job the lifecycle, wait and module tests run on it (BENCH, its
launcher's LOG, and running / succeeded, which play the operator).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import itertools

from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.lifecycle import Settings, ensure_present
from ansible_collections.gpuops.cluster.plugins.module_utils.jobs.mpijob import MPIJOB, build_mpijob
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s.errors import ApiError


class FakeMPIJobApi(object):
    """An in-memory cluster. `script` maps the number of the job read (1, 2, ...) to a function
    that changes the cluster then, which is how a test makes the job run, fail or vanish.

    `outage` holds the errors of an API server that does not answer: each read (of the job, its pods
    or its events) raises the next one, until none is left."""

    def __init__(self, jobs=(), pods=(), events=(), logs=None, script=None, deletion_reads=0, kind=MPIJOB):
        self.kind = kind
        self.jobs = dict(((j["metadata"]["namespace"], j["metadata"]["name"]), copy.deepcopy(j)) for j in jobs)
        self.pods = [copy.deepcopy(p) for p in pods]
        self.events = list(events)
        self.logs = dict(logs or {})
        self.script = dict(script or {})
        self.writes = []
        self.reads = 0
        # How many reads a job being deleted stays visible (foreground deletion takes a while).
        self.deletion_reads = deletion_reads
        self._deleting = {}
        self.outage = []

    def _answer(self):
        if self.outage:
            raise self.outage.pop(0)

    def get(self, namespace, name):
        self.reads += 1
        action = self.script.get(self.reads)
        if action:
            action(self)
        self._answer()
        key = (namespace, name)
        if key in self._deleting:
            if self._deleting[key] <= 0:
                del self._deleting[key]
                self.jobs.pop(key, None)
            else:
                self._deleting[key] -= 1
        return copy.deepcopy(self.jobs.get(key))

    def create(self, namespace, body):
        key = (namespace, body["metadata"]["name"])
        if key in self.jobs:
            raise ApiError("creating {0} {1}/{2}: HTTP 409 Conflict: already exists".format(self.kind.kind, *key),
                           status=409)
        self.writes.append(("create", namespace, copy.deepcopy(body)))
        stored = copy.deepcopy(body)
        stored["metadata"]["uid"] = "uid-{0}".format(len(self.writes))
        self.jobs[key] = stored
        return copy.deepcopy(stored)

    def delete(self, namespace, name):
        self.writes.append(("delete", namespace, name))
        key = (namespace, name)
        if key in self.jobs:
            self.jobs[key]["metadata"]["deletionTimestamp"] = "2025-06-01T10:00:00Z"
            self._deleting[key] = self.deletion_reads

    def list_pods(self, namespace, job_name):
        self._answer()
        return [copy.deepcopy(p) for p in self.pods
                if p["metadata"]["labels"].get(self.kind.name_label) == job_name]

    def list_events(self, namespace, kind, name):
        self._answer()
        return [e for e in self.events if e["involvedObject"] == {"kind": kind, "name": name}]

    def read_pod_log(self, namespace, name, tail_lines):
        log = self.logs.get(name)
        if isinstance(log, Exception):
            raise log
        if log is None:
            raise ApiError("reading the log of pod {0}/{1}: HTTP 404 Not Found".format(namespace, name), status=404)
        lines = log.splitlines(True)
        return "".join(lines[-tail_lines:] if tail_lines else lines)

    # Helpers that play the operator (or the Job controller) and the kubelets.

    def set_conditions(self, namespace, name, *conditions, **status):
        self.jobs[(namespace, name)]["status"] = dict(status, conditions=[
            {"type": kind, "status": "True", "reason": reason, "message": message} for kind, reason, message in conditions])

    def add_pod(self, job_name, role, phase, index=None, exit_code=None, reason=None, waiting=None,
                unschedulable=None):
        """A pod of the job; `waiting` is (reason, message) of its container waiting to start,
        `unschedulable` the scheduler's message for a pod no node can take."""
        name = "{0}-{1}".format(job_name, role if index is None else "{0}-{1}".format(role, index))
        if role == "launcher":
            name += "-x7k2p"
        status = {"phase": phase}
        if exit_code is not None:
            status["containerStatuses"] = [{"name": role, "state": {"terminated": {"exitCode": exit_code,
                                                                                   "reason": reason}}}]
        if waiting is not None:
            status["containerStatuses"] = [{"name": role, "image": "horovod:0.28.1", "state": {"waiting": {
                "reason": waiting[0], "message": waiting[1]}}}]
        if unschedulable is not None:
            status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                     "message": unschedulable}]
        self.pods.append({"metadata": {"name": name, "creationTimestamp": "2025-06-01T10:00:0{0}Z".format(len(self.pods)),
                                       "labels": {self.kind.name_label: job_name, self.kind.role_label: role}},
                          "spec": {"nodeName": "node1"}, "status": status})
        return name


BENCH = dict(name="bench", namespace="ml", image="horovod:0.28.1", command=["mpirun", "python3", "bench.py"],
             workers=2, gpus_per_worker=2)
LOG = "".join("Iter #{0}: 100.0 img/sec per GPU\n".format(i) for i in range(10)) + "Total img/sec on 4 GPU(s): 400.0 +-1.0\n"


def settings(**overrides):
    values = dict(wait_timeout=600, wait_sleep=1.0, ticks_factory=lambda: itertools.count(0.0, 1.0),
                  now=lambda: 1000.0)
    values.update(overrides)
    return Settings(**values)


def existing():
    """A cluster holding the BENCH job as the mpijob module creates it."""
    api = FakeMPIJobApi()
    ensure_present(MPIJOB, api, build_mpijob(BENCH), settings())
    api.writes = []
    return api


def running(api):
    api.set_conditions("ml", "bench", ("Created", "MPIJobCreated", "created"), ("Running", "MPIJobRunning", "running"))
    api.add_pod("bench", "worker", "Running", 0)
    api.add_pod("bench", "worker", "Running", 1)
    api.add_pod("bench", "launcher", "Running")


def succeeded(api):
    api.set_conditions("ml", "bench", ("Created", "MPIJobCreated", "created"),
                       ("Succeeded", "MPIJobSucceeded", "MPIJob ml/bench successfully completed."),
                       replicaStatuses={"Launcher": {"succeeded": 1}, "Worker": {"active": 2}})
    for pod in api.pods:
        if pod["metadata"]["labels"]["training.kubeflow.org/job-role"] == "launcher":
            pod["status"]["phase"] = "Succeeded"
