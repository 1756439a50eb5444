# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU node labels, named and formatted as NVIDIA's GPU feature discovery (GFD) writes them, from the
facts gpu_facts gathers on the recorded systems; what the facts cannot give is left out."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_facts import collect_gpu
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_labels import (
    BASE_KEYS,
    GFD_KEYS,
    GpuLabelsError,
    gpu_family,
    gpu_node_label_keys,
    gpu_node_labels,
)
from gpuops_testlib.recorded_smi import RecordedSmi


def gathered(system):
    return collect_gpu(RecordedSmi(system), "/usr/bin/nvidia-smi")


# Each recorded system's labels, whole. V100 (driver 418) and A100 (driver 470) predate compute_cap (510):
# no family and no compute capability, rather than a guess from the product name.
RECORDED_LABELS = {
    "h100_hgx": {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/gpu.family": "hopper",
        "nvidia.com/gpu.compute.major": "9",
        "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/cuda.driver-version.major": "535",
        "nvidia.com/cuda.driver-version.minor": "129",
        "nvidia.com/cuda.driver-version.revision": "03",
        "nvidia.com/cuda.driver-version.full": "535.129.03",
        "nvidia.com/cuda.runtime-version.major": "12",
        "nvidia.com/cuda.runtime-version.minor": "2",
        "nvidia.com/cuda.runtime-version.full": "12.2",
        "nvidia.com/mig.capable": "true",
    },
    "t4_pcie": {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "Tesla-T4",
        "nvidia.com/gpu.count": "1",
        "nvidia.com/gpu.memory": "15360",
        "nvidia.com/gpu.family": "turing",
        "nvidia.com/gpu.compute.major": "7",
        "nvidia.com/gpu.compute.minor": "5",
        "nvidia.com/cuda.driver-version.major": "535",
        "nvidia.com/cuda.driver-version.minor": "104",
        "nvidia.com/cuda.driver-version.revision": "05",
        "nvidia.com/cuda.driver-version.full": "535.104.05",
        "nvidia.com/cuda.runtime-version.major": "12",
        "nvidia.com/cuda.runtime-version.minor": "2",
        "nvidia.com/cuda.runtime-version.full": "12.2",
        "nvidia.com/mig.capable": "false",
    },
    "a100_dgx": {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "40536",
        "nvidia.com/cuda.driver-version.major": "470",
        "nvidia.com/cuda.driver-version.minor": "57",
        "nvidia.com/cuda.driver-version.revision": "02",
        "nvidia.com/cuda.driver-version.full": "470.57.02",
        "nvidia.com/cuda.runtime-version.major": "11",
        "nvidia.com/cuda.runtime-version.minor": "4",
        "nvidia.com/cuda.runtime-version.full": "11.4",
        "nvidia.com/mig.capable": "true",
    },
    "v100_dgx1": {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "16160",
        "nvidia.com/cuda.driver-version.major": "418",
        "nvidia.com/cuda.driver-version.minor": "116",
        "nvidia.com/cuda.driver-version.revision": "00",
        "nvidia.com/cuda.driver-version.full": "418.116.00",
        "nvidia.com/cuda.runtime-version.major": "10",
        "nvidia.com/cuda.runtime-version.minor": "1",
        "nvidia.com/cuda.runtime-version.full": "10.1",
        # GFD says false too where the driver has no MIG.
        "nvidia.com/mig.capable": "false",
    },
}


@pytest.mark.parametrize("system", sorted(RECORDED_LABELS))
def test_recorded_systems_get_gfd_labels(system):
    assert gpu_node_labels(gathered(system)) == RECORDED_LABELS[system]


@pytest.mark.parametrize("system", sorted(RECORDED_LABELS))
def test_where_gfd_runs_only_the_labels_of_before(system):
    labels = gpu_node_labels(gathered(system), gfd_managed=True)
    assert labels == dict((key, RECORDED_LABELS[system][key]) for key in BASE_KEYS if key in RECORDED_LABELS[system])
    assert sorted(labels) == ["nvidia.com/gpu.count", "nvidia.com/gpu.present", "nvidia.com/gpu.product"]


@pytest.mark.parametrize("capability, family", [
    ((3, 7), "kepler"), ((5, 2), "maxwell"), ((6, 0), "pascal"),
    ((7, 0), "volta"), ((7, 2), "volta"), ((7, 5), "turing"),
    ((8, 0), "ampere"), ((8, 6), "ampere"), ((8, 9), "ada-lovelace"),
    ((9, 0), "hopper"), ((10, 0), "blackwell"), ((12, 0), "blackwell"),
    ((4, 0), None), ((11, 0), None), ((13, 0), None),
])
def test_family_follows_gfds_table(capability, family):
    assert gpu_family(*capability) == family


A100_80GB_DRIVER_550 = {"present": True, "count": 8, "product_label": "NVIDIA-A100-SXM4-80GB", "memory_mib": 81920,
                        "compute_capability": "8.0", "driver_version": "550.54", "cuda_version": "12.4",
                        "mig_capable": True}


def test_a100_on_a_driver_with_compute_cap_and_a_two_part_version():
    labels = gpu_node_labels(A100_80GB_DRIVER_550)
    assert labels["nvidia.com/gpu.family"] == "ampere"
    assert (labels["nvidia.com/gpu.compute.major"], labels["nvidia.com/gpu.compute.minor"]) == ("8", "0")
    assert labels["nvidia.com/cuda.driver-version.full"] == "550.54"
    # GFD writes an empty revision here; an empty label is left out instead.
    assert "nvidia.com/cuda.driver-version.revision" not in labels


def test_a_compute_major_gfd_has_no_family_for_gets_the_capability_only():
    labels = gpu_node_labels(dict(A100_80GB_DRIVER_550, compute_capability="13.0"))
    assert "nvidia.com/gpu.family" not in labels
    assert labels["nvidia.com/gpu.compute.major"] == "13"


def test_facts_of_an_older_gpu_facts_leave_out_what_they_lack():
    facts = dict(A100_80GB_DRIVER_550)
    del facts["compute_capability"], facts["mig_capable"]
    labels = gpu_node_labels(facts)
    assert not set(labels) & {"nvidia.com/gpu.family", "nvidia.com/gpu.compute.major", "nvidia.com/gpu.compute.minor",
                              "nvidia.com/mig.capable"}
    assert labels["nvidia.com/gpu.memory"] == "81920"


def test_inventory_only_as_the_lab_gives_no_label_it_cannot_know():
    labels = gpu_node_labels({}, product="NVIDIA A100-SXM4-80GB", count="8")
    assert labels == {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                      "nvidia.com/gpu.count": "8"}
    assert gpu_node_labels(None, product="NVIDIA A100-SXM4-80GB", count=0) == {}


def test_inventory_wins_for_product_and_count_the_facts_give_the_rest():
    labels = gpu_node_labels(gathered("h100_hgx"), product="H100 (lab)", count=4)
    assert labels["nvidia.com/gpu.product"] == "H100-lab"
    assert labels["nvidia.com/gpu.count"] == "4"
    assert labels["nvidia.com/gpu.family"] == "hopper"


def test_no_gpu_no_labels_not_even_extra_ones():
    no_gpu = {"present": False, "reason": "nvidia-smi was not found on this host", "count": 0}
    assert gpu_node_labels(no_gpu, extra={"team": "ml"}, openshift=True) == {}


def test_switches_openshift_and_extra_labels():
    labels = gpu_node_labels(gathered("t4_pcie"), product_enabled=False, count_enabled=False, openshift=True,
                             extra={"team": "ml", "nvidia.com/gpu.family": "custom"})
    assert "nvidia.com/gpu.product" not in labels and "nvidia.com/gpu.count" not in labels
    assert labels["openshift.com/gpu-accelerator"] == "true"
    assert (labels["team"], labels["nvidia.com/gpu.family"]) == ("ml", "custom")


def test_absent_removes_every_key_the_role_may_write_and_only_those():
    assert sorted(gpu_node_label_keys()) == sorted(BASE_KEYS + GFD_KEYS)
    assert set(gpu_node_label_keys()) >= set(RECORDED_LABELS["h100_hgx"])
    # Where GFD runs, its labels are its own to remove.
    assert gpu_node_label_keys(gfd_managed=True, extra={"team": "ml"}) == dict(
        (key, "") for key in BASE_KEYS + ("team",))


@pytest.mark.parametrize("facts, arguments, message", [
    ("H100", {}, "gpuops_gpu must be the dict gpuops.cluster.gpu_facts returns, got 'H100'"),
    ({"present": True, "count": -1}, {}, "gpuops_gpu.count must be a count >= 0, got -1"),
    ({}, {"count": "eight"}, "the GPU count must be a count >= 0, got 'eight'"),
    ({}, {"count": True}, "the GPU count must be a count >= 0, got True"),
    ({}, {"count": 8, "product": 100}, "the GPU product must be a string, got 100"),
    ({}, {"count": 8, "extra": ["team=ml"]}, "the extra labels must be a dict, got ['team=ml']"),
    (dict(A100_80GB_DRIVER_550, memory_mib="lots"), {}, "gpuops_gpu.memory_mib must be a count >= 0, got 'lots'"),
    (dict(A100_80GB_DRIVER_550, compute_capability="8"), {}, "gpuops_gpu.compute_capability must be major.minor, got '8'"),
    (dict(A100_80GB_DRIVER_550, compute_capability=8.0), {}, "gpuops_gpu.compute_capability must be a string, got 8.0"),
    (dict(A100_80GB_DRIVER_550, driver_version="550"), {},
     "gpuops_gpu.driver_version must be major.minor[.revision], got '550'"),
    (dict(A100_80GB_DRIVER_550, driver_version="550.54.14.1"), {},
     "gpuops_gpu.driver_version must be major.minor[.revision], got '550.54.14.1'"),
    (dict(A100_80GB_DRIVER_550, cuda_version="twelve"), {}, "gpuops_gpu.cuda_version must be major.minor, got 'twelve'"),
    (dict(A100_80GB_DRIVER_550, mig_capable="yes"), {}, "gpuops_gpu.mig_capable must be true or false, got 'yes'"),
])
def test_bad_input_names_the_value(facts, arguments, message):
    with pytest.raises(GpuLabelsError) as raised:
        gpu_node_labels(facts, **arguments)
    assert str(raised.value) == message
