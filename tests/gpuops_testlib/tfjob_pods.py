# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TFJob ml/ps-bench's pods as the Training Operator makes them, its conditions, and the scripts that play the
operator on gpuops_testlib.fake_job_api's cluster (its replicas run, its parameter server crashes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def tf_pod(replica_type, index, phase, master=False, exit_code=None, waiting=None, job="ps-bench"):
    labels = {"training.kubeflow.org/job-name": job, "training.kubeflow.org/replica-type": replica_type,
              "training.kubeflow.org/replica-index": str(index)}
    if master:
        labels["training.kubeflow.org/job-role"] = "master"
    status = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"name": "tensorflow", "state": {"terminated": {
            "exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}}}]
    if waiting is not None:
        status["containerStatuses"] = [{"name": "tensorflow", "image": "tensorflow:2.16.1-gpu",
                                        "state": {"waiting": {"reason": waiting[0], "message": waiting[1]}}}]
    return {"metadata": {"name": "{0}-{1}-{2}".format(job, replica_type, index), "labels": labels,
                         "creationTimestamp": "2025-06-01T10:00:00Z"},
            "spec": {"nodeName": "node1"}, "status": status}


CREATED = ("Created", "TFJobCreated", "TFJob ml/ps-bench is created.")
RUNNING = ("Running", "TFJobRunning", "TFJob ml/ps-bench is running.")


def replicas_run(api):
    api.set_conditions("ml", "ps-bench", CREATED, RUNNING)
    api.pods = [tf_pod("chief", 0, "Running", master=True), tf_pod("ps", 0, "Running"),
                tf_pod("worker", 0, "Running"), tf_pod("worker", 1, "Running")]


def ps_crashes(api):
    api.pods[1] = tf_pod("ps", 0, "Failed", exit_code=1)
