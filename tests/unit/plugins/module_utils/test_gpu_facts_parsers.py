# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_facts import (
    REQUIRED_FIELDS,
    GpuFactsError,
    collect_gpu,
    collect_hugepages,
    collect_nics,
    parse_ip_addr_json,
    parse_meminfo,
    parse_query_gpu,
    parse_smi_header,
    parse_topo_matrix,
    product_label_value,
)
from gpuops_testlib.recorded_smi import RecordedSmi, fixture


# --------------------------------------------------------------------------------- whole systems


def test_v100_dgx1_old_driver_retries_without_mig_and_compute_cap_fields():
    run = RecordedSmi("v100_dgx1")
    facts = collect_gpu(run, "/usr/bin/nvidia-smi")

    queries = run.queries()
    assert len(queries) == 3
    assert "mig.mode.current" in queries[0] and "mig.mode.current" not in queries[1]
    assert "compute_cap" in queries[1] and queries[2] == "--query-gpu=" + ",".join(REQUIRED_FIELDS)
    assert facts["present"] is True
    assert facts["count"] == 8
    assert facts["product"] == "Tesla V100-SXM2-16GB"
    assert facts["product_label"] == "Tesla-V100-SXM2-16GB"
    assert facts["memory_mib"] == 16160
    assert facts["memory_total_mib"] == 8 * 16160
    assert facts["driver_version"] == "418.116.00"
    assert facts["cuda_version"] == "10.1"
    assert facts["mig_mode"] == "unsupported"
    # A driver older than MIG partitions nothing; one older than compute_cap leaves 7.0 unknown.
    assert facts["mig_capable"] is False
    assert facts["compute_capability"] is None
    assert {gpu["compute_capability"] for gpu in facts["gpus"]} == {None}
    assert facts["nvlink"] is True
    assert facts["nvlink_max_links"] == 2
    gpu0 = facts["gpus"][0]
    # The hybrid cube-mesh: GPU0 reaches GPU1 and GPU2 over one link, GPU3 and GPU4 over two.
    assert gpu0["nvlink_peers"] == {"GPU1": 1, "GPU2": 1, "GPU3": 2, "GPU4": 2}
    assert gpu0["links"]["GPU5"] == "SYS"
    assert gpu0["pci_bus_id"] == "00000000:06:00.0"
    assert gpu0["cpu_affinity"] == "0-19,40-59"
    assert gpu0["numa_affinity"] is None
    assert gpu0["nearest_nics"] == ["mlx5_0"]
    assert facts["gpus"][7]["cpu_affinity"] == "20-39,60-79"
    # Every V100 has six NVLinks.
    assert all(sum(gpu["nvlink_peers"].values()) == 6 for gpu in facts["gpus"])
    assert [nic["name"] for nic in facts["topology_nics"]] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert facts["topology_nics"][0]["gpu_links"]["GPU0"] == "PIX"


def test_a100_dgx_nvswitch():
    run = RecordedSmi("a100_dgx")
    facts = collect_gpu(run, "/usr/bin/nvidia-smi")

    # Driver 470 knows MIG but not compute_cap: asked again without it.
    assert [query.endswith(",compute_cap") for query in run.queries()] == [True, False]
    assert facts["mig_capable"] is True
    assert facts["compute_capability"] is None
    assert facts["count"] == 8
    assert facts["products"] == ["NVIDIA A100-SXM4-40GB"]
    assert facts["product_label"] == "NVIDIA-A100-SXM4-40GB"
    assert facts["memory_mib"] == 40536
    assert facts["driver_version"] == "470.57.02"
    assert facts["cuda_version"] == "11.4"
    assert facts["mig_mode"] == "Disabled"
    assert facts["nvlink"] is True
    assert facts["nvlink_max_links"] == 12
    for gpu in facts["gpus"]:
        assert len(gpu["nvlink_peers"]) == 7
        assert set(gpu["nvlink_peers"].values()) == {12}
    assert facts["gpus"][0]["numa_affinity"] == "3"
    assert facts["gpus"][0]["cpu_affinity"] == "48-63,176-191"
    assert facts["gpus"][6]["nearest_nics"] == ["mlx5_8", "mlx5_9"]
    # The storage NICs are near no GPU.
    storage = [nic for nic in facts["topology_nics"] if nic["name"] in ("mlx5_4", "mlx5_5")]
    assert all(set(nic["gpu_links"].values()) == {"SYS"} for nic in storage)
    assert len(facts["topology_nics"]) == 10


def test_h100_hgx_nv18():
    facts = collect_gpu(RecordedSmi("h100_hgx"), "/usr/bin/nvidia-smi")

    assert facts["count"] == 8
    assert facts["product"] == "NVIDIA H100 80GB HBM3"
    assert facts["product_label"] == "NVIDIA-H100-80GB-HBM3"
    assert facts["memory_mib"] == 81559
    assert facts["driver_version"] == "535.129.03"
    assert facts["cuda_version"] == "12.2"
    assert facts["compute_capability"] == "9.0"
    assert {gpu["compute_capability"] for gpu in facts["gpus"]} == {"9.0"}
    assert facts["mig_capable"] is True
    assert facts["nvlink_max_links"] == 18
    assert [gpu["nearest_nics"] for gpu in facts["gpus"]] == [["mlx5_%d" % i] for i in range(8)]
    assert facts["gpus"][4]["numa_affinity"] == "1"
    assert facts["gpus"][4]["links"]["NIC0"] == "SYS"
    assert facts["gpus"][4]["links"]["NIC5"] == "NODE"
    assert [gpu["pci_bus_id"][-7:-5] for gpu in facts["gpus"]] == ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"]


def test_t4_single_pcie_without_nvlink():
    run = RecordedSmi("t4_pcie")
    facts = collect_gpu(run, "/usr/bin/nvidia-smi")

    assert len(run.queries()) == 1
    assert facts["count"] == 1
    assert facts["product"] == "Tesla T4"
    assert facts["memory_mib"] == 15360
    assert facts["compute_capability"] == "7.5"
    assert facts["mig_mode"] == "N/A"
    assert facts["mig_capable"] is False
    assert facts["nvlink"] is False
    assert facts["nvlink_max_links"] == 0
    gpu = facts["gpus"][0]
    assert gpu["nvlink_peers"] == {}
    assert gpu["links"] == {"NIC0": "PHB", "NIC1": "NODE", "NIC2": "SYS"}
    # PHB crosses the CPU's host bridge: not "near" for GPUDirect RDMA.
    assert gpu["nearest_nics"] == []
    assert gpu["cpu_affinity"] == "0-15,32-47"
    assert facts["topology_nics"] == [
        {"name": "mlx5_0", "gpu_links": {"GPU0": "PHB"}},
        {"name": "mlx5_1", "gpu_links": {"GPU0": "NODE"}},
        {"name": "mlx5_2", "gpu_links": {"GPU0": "SYS"}},
    ]


# --------------------------------------------------------------------------------- no GPU


def test_no_nvidia_smi_is_a_clear_no_gpu_result():
    def run(argv):
        raise AssertionError("nothing should run without nvidia-smi")

    facts = collect_gpu(run, None)
    assert facts == {"present": False, "reason": "nvidia-smi was not found on this host", "count": 0}


@pytest.mark.parametrize("recorded, rc, reason", [
    ("no_devices.txt", 6, "nvidia-smi: No devices were found"),
    ("no_driver.txt", 9, "nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."),
])
def test_nvidia_smi_without_devices_or_driver_is_a_no_gpu_result(recorded, rc, reason):
    calls = []

    def run(argv):
        calls.append(argv)
        return rc, fixture("no_gpu", recorded), ""

    facts = collect_gpu(run, "/usr/bin/nvidia-smi")
    assert facts["present"] is False
    assert facts["count"] == 0
    assert facts["reason"].startswith(reason)
    assert len(calls) == 1


def test_empty_query_output_is_a_no_gpu_result():
    facts = collect_gpu(lambda argv: (0, "\n", ""), "/usr/bin/nvidia-smi")
    assert facts == {"present": False, "reason": "nvidia-smi reported no GPU", "count": 0}


# --------------------------------------------------------------------------------- malformed output


def test_query_with_wrong_field_count_names_the_line():
    with pytest.raises(GpuFactsError, match=r"line 2 has 3 field\(s\), expected 8"):
        parse_query_gpu(fixture("t4_pcie", "query.csv") + "1, Tesla T4, oops\n")


def test_query_with_non_numeric_memory_is_rejected():
    line = "0, Tesla T4, GPU-x, lots, 535.104.05, 00000000:3B:00.0, [N/A], 7.5\n"
    with pytest.raises(GpuFactsError, match="non-numeric index or memory.total"):
        parse_query_gpu(line)


@pytest.mark.parametrize("compute_cap", ["7", "7.5.1", "sm_75", "Turing"])
def test_query_with_a_compute_cap_that_is_not_major_minor_is_rejected(compute_cap):
    line = "0, Tesla T4, GPU-x, 15360, 535.104.05, 00000000:3B:00.0, [N/A], %s\n" % compute_cap
    with pytest.raises(GpuFactsError, match="line 1 has a compute_cap that is not major.minor"):
        parse_query_gpu(line)


def test_query_with_compute_cap_not_available_leaves_it_unknown():
    line = "0, Tesla T4, GPU-x, 15360, 535.104.05, 00000000:3B:00.0, [N/A], [N/A]\n"
    assert parse_query_gpu(line)[0]["compute_capability"] is None


def test_query_without_mig_field_marks_mig_unsupported():
    gpus = parse_query_gpu(fixture("v100_dgx1", "query.csv"), REQUIRED_FIELDS)
    assert [gpu["index"] for gpu in gpus] == list(range(8))
    assert {gpu["mig_mode"] for gpu in gpus} == {"unsupported"}
    assert {gpu["mig_capable"] for gpu in gpus} == {False}


def test_a_rejected_field_the_module_needs_is_not_dropped_but_reported():
    calls = []

    def run(argv):
        calls.append(argv)
        return 2, 'Field "pci.bus_id" is not a valid field to query.\n', ""

    with pytest.raises(GpuFactsError, match=r'failed \(rc=2\): Field "pci.bus_id" is not a valid field'):
        collect_gpu(run, "nvidia-smi")
    assert len(calls) == 1


def test_mixed_mig_modes_are_reported_as_mixed():
    query = ("0, NVIDIA A100-SXM4-80GB, GPU-a, 81920, 535.129.03, 00000000:07:00.0, Enabled, 8.0\n"
             "1, NVIDIA A100-SXM4-80GB, GPU-b, 81920, 535.129.03, 00000000:0F:00.0, Disabled, 8.0\n")
    topo = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV12\t0-63\nGPU1\tNV12\t X \t0-63\n"

    def run(argv):
        if argv[1:] == ["topo", "-m"]:
            return 0, topo, ""
        if len(argv) == 1:
            return 0, fixture("a100_dgx", "nvidia_smi.txt"), ""
        return 0, query, ""

    facts = collect_gpu(run, "nvidia-smi")
    assert facts["mig_mode"] == "mixed"
    assert [gpu["mig_mode"] for gpu in facts["gpus"]] == ["Enabled", "Disabled"]
    assert facts["mig_capable"] is True
    assert facts["compute_capability"] == "8.0"


def test_topology_without_header_is_rejected():
    with pytest.raises(GpuFactsError, match="no header row starting with GPU0"):
        parse_topo_matrix("NVML: Unable to determine the topology\n")


def test_topology_row_with_missing_cells_is_rejected():
    text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \t0-7\nGPU1\tPHB\t X \t0-7\n"
    with pytest.raises(GpuFactsError, match="row GPU0 has 2 value"):
        parse_topo_matrix(text)


def test_topology_copied_with_spaces_instead_of_tabs_parses_the_same():
    spaced = fixture("h100_hgx", "topo.txt").replace("\t", "    ")
    assert parse_topo_matrix(spaced) == parse_topo_matrix(fixture("h100_hgx", "topo.txt"))


def test_banner_without_cuda_version_fails_clearly():
    def run(argv):
        if len(argv) == 1:
            return 0, "NVIDIA-SMI something else\n", ""
        return 0, fixture("t4_pcie", "query.csv"), ""

    with pytest.raises(GpuFactsError, match="no 'CUDA Version:'"):
        collect_gpu(run, "nvidia-smi")


def test_failing_query_with_other_error_fails_with_its_output():
    with pytest.raises(GpuFactsError, match=r"failed \(rc=15\): Unable to determine .*: GPU is lost"):
        collect_gpu(lambda argv: (15, "", "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost"),
                    "nvidia-smi")


def test_banner_versions_of_both_layouts():
    assert parse_smi_header(fixture("v100_dgx1", "nvidia_smi.txt")) == {
        "cuda_version": "10.1", "driver_version": "418.116.00"}
    assert parse_smi_header(fixture("h100_hgx", "nvidia_smi.txt")) == {
        "cuda_version": "12.2", "driver_version": "535.129.03"}


@pytest.mark.parametrize("name, label", [
    ("Tesla V100-SXM2-32GB", "Tesla-V100-SXM2-32GB"),
    ("NVIDIA H100 80GB HBM3", "NVIDIA-H100-80GB-HBM3"),
    ("NVIDIA GeForce RTX 4090 (ES)", "NVIDIA-GeForce-RTX-4090-ES"),
    ("", ""),
])
def test_product_label_value(name, label):
    assert product_label_value(name) == label


# --------------------------------------------------------------------------------- hugepages

MEMINFO = """MemTotal:       1056466972 kB
MemFree:        981234560 kB
HugePages_Total:    1024
HugePages_Free:     1000
HugePages_Rsvd:       12
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:        18874368 kB
"""


def write_tree(root, files):
    for path, content in files.items():
        full = os.path.join(str(root), path)
        if not os.path.isdir(os.path.dirname(full)):
            os.makedirs(os.path.dirname(full))
        with open(full, "w") as handle:
            handle.write(content)


def test_meminfo():
    assert parse_meminfo(MEMINFO) == {"total": 1024, "free": 1000, "reserved": 12, "surplus": 0,
                                      "default_size_kb": 2048, "hugetlb_kb": 18874368}


def test_meminfo_without_hugepage_lines_fails_clearly():
    with pytest.raises(GpuFactsError, match="missing HugePages_Total, HugePages_Free, Hugepagesize"):
        parse_meminfo("MemTotal: 1 kB\n")


def test_hugepages_per_size(tmp_path):
    write_tree(tmp_path, {
        "proc/meminfo": MEMINFO,
        "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages": "1024\n",
        "sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages": "1000\n",
        "sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages": "12\n",
        "sys/kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages": "0\n",
        "sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages": "16\n",
        "sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages": "16\n",
        "sys/kernel/mm/hugepages/hugepages-1048576kB/resv_hugepages": "0\n",
        "sys/kernel/mm/hugepages/hugepages-1048576kB/surplus_hugepages": "0\n",
    })
    facts = collect_hugepages(str(tmp_path))
    assert facts["total"] == 1024
    assert facts["sizes"] == [
        {"size_kb": 2048, "total": 1024, "free": 1000, "reserved": 12, "surplus": 0},
        {"size_kb": 1048576, "total": 16, "free": 16, "reserved": 0, "surplus": 0},
    ]


def test_hugepages_on_this_machine_reads_the_real_files():
    facts = collect_hugepages("/")
    assert facts["default_size_kb"] > 0
    assert facts["total"] >= facts["free"] >= 0
    assert [size["size_kb"] for size in facts["sizes"]] == sorted(size["size_kb"] for size in facts["sizes"])


# --------------------------------------------------------------------------------- network interfaces

IP_ADDR = json.dumps([
    {"ifindex": 1, "ifname": "lo", "mtu": 65536, "operstate": "UNKNOWN", "addr_info": [
        {"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host"},
        {"family": "inet6", "local": "::1", "prefixlen": 128, "scope": "host"}]},
    {"ifindex": 2, "ifname": "ens1f0", "mtu": 9000, "operstate": "UP", "addr_info": [
        {"family": "inet", "local": "10.0.0.11", "prefixlen": 24, "scope": "global"}]},
    {"ifindex": 3, "ifname": "bond0", "mtu": 9000, "operstate": "DOWN", "addr_info": []},
])


def test_ip_addr_json():
    addresses = parse_ip_addr_json(IP_ADDR)
    assert addresses["ens1f0"] == [{"family": "ipv4", "address": "10.0.0.11", "prefixlen": 24, "scope": "global"}]
    assert addresses["lo"][1]["family"] == "ipv6"
    assert addresses["bond0"] == []


def test_ip_addr_that_is_not_json_fails_clearly():
    with pytest.raises(GpuFactsError, match="ip -j addr: output is not JSON"):
        parse_ip_addr_json("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536")


def test_nics_from_sysfs_and_ip(tmp_path):
    pci = tmp_path / "sys" / "devices" / "pci0000:00" / "0000:0c:00.0"
    (pci / "infiniband" / "mlx5_0").mkdir(parents=True)
    write_tree(tmp_path, {
        "sys/class/net/ens1f0/mtu": "9000\n",
        "sys/class/net/ens1f0/operstate": "up\n",
        "sys/class/net/ens1f0/address": "b8:ce:f6:00:00:01\n",
        "sys/class/net/ens1f0/speed": "100000\n",
        "sys/class/net/bond0/mtu": "9000\n",
        "sys/class/net/bond0/operstate": "down\n",
        "sys/class/net/bond0/address": "b8:ce:f6:00:00:02\n",
        "sys/class/net/bond0/speed": "-1\n",
        "sys/class/net/bond0/bonding/mode": "802.3ad 4\n",
        "sys/class/net/lo/mtu": "65536\n",
        "sys/class/net/lo/operstate": "unknown\n",
        "sys/class/net/lo/address": "00:00:00:00:00:00\n",
    })
    os.symlink(str(pci), str(tmp_path / "sys" / "class" / "net" / "ens1f0" / "device"))
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, IP_ADDR, ""

    nics = collect_nics(run, "/usr/sbin/ip", str(tmp_path))
    assert calls == [["/usr/sbin/ip", "-j", "addr", "show"]]
    by_name = dict((nic["name"], nic) for nic in nics)
    assert sorted(by_name) == ["bond0", "ens1f0", "lo"]
    assert by_name["ens1f0"] == {
        "name": "ens1f0", "mtu": 9000, "state": "up", "mac": "b8:ce:f6:00:00:01", "speed_mbps": 100000,
        "physical": True, "bond_master": False, "pci_bus_id": "0000:0c:00.0", "rdma_devices": ["mlx5_0"],
        "addresses": [{"family": "ipv4", "address": "10.0.0.11", "prefixlen": 24, "scope": "global"}]}
    assert by_name["bond0"]["bond_master"] is True
    assert by_name["bond0"]["speed_mbps"] is None
    assert by_name["lo"]["physical"] is False
    assert by_name["lo"]["speed_mbps"] is None


def test_nics_without_iproute2_have_no_addresses(tmp_path):
    write_tree(tmp_path, {"sys/class/net/eth0/mtu": "1500\n", "sys/class/net/eth0/operstate": "up\n"})
    nics = collect_nics(lambda argv: pytest.fail("no command should run"), None, str(tmp_path))
    assert nics == [{"name": "eth0", "mtu": 1500, "state": "up", "mac": None, "speed_mbps": None,
                     "physical": False, "bond_master": False, "pci_bus_id": None, "rdma_devices": [],
                     "addresses": []}]
