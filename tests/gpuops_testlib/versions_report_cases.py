# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the versions report's unit tests give it and expect of it: the pins, a GPU node's facts, the cluster's
workloads and Helm release records as the API returns them, and the table of the two-node example (the
module_utils tests build its report, the module tests run the same cluster through the module)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import gzip
import json

PINS = {"nvidia_device_plugin": "v0.17.1", "gpu_operator": "v25.3.0", "mpi_operator": "v0.8.2",
        "training_operator": "v1.9.3", "driver": "570", "kubelet": "v1.34.4"}
GPU = {"present": True, "count": 8, "product": "NVIDIA A100-SXM4-40GB", "driver_version": "570.124.06",
       "cuda_version": "12.8"}


def workload(image, labels=None):
    return {"metadata": {"labels": labels or {}}, "spec": {"template": {"spec": {"containers": [{"image": image}]}}}}


def helm_secret(chart_version, revision="1"):
    """A release record as Helm's Secret driver stores it: JSON, gzipped, base64, under the Secret's own base64."""
    release = json.dumps({"name": "gpu-operator", "version": int(revision),
                          "chart": {"metadata": {"name": "gpu-operator", "version": chart_version}}})
    helm_text = base64.b64encode(gzip.compress(release.encode("utf-8")))
    return {"metadata": {"labels": {"owner": "helm", "name": "gpu-operator", "status": "deployed",
                                    "version": revision}},
            "data": {"release": base64.b64encode(helm_text).decode("ascii")}}


EXAMPLE_TABLE = """\
COMPONENT             WHERE                                      OBSERVED    PINNED   STATUS    NOTE
driver                dgx-01                                     570.124.06  570      match
cuda                  dgx-01                                     12.8        -        unpinned
container_toolkit     dgx-01                                     1.17.4      -        unpinned
kubelet               dgx-01                                     v1.34.4     v1.34.4  match
driver                dgx-02                                     -           570      unknown   no GPU facts
cuda                  dgx-02                                     -           -        unknown   no GPU facts
container_toolkit     dgx-02                                     -           -        unknown   not reported
kubelet               dgx-02                                     v1.33.2     v1.34.4  drift
nvidia_device_plugin  nvidia-device-plugin/nvidia-device-plugin  v0.17.1     v0.17.1  match
mpi_operator          mpi-operator/mpi-operator                  0.8.1       v0.8.2   drift
training_operator     kubeflow/training-operator                 v1.9.3      v1.9.3   match
2 node(s), 3 cluster component(s): 4 match, 2 drift, 0 absent, 3 unknown, 2 unpinned"""
