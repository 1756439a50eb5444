"""GPUDirect RDMA in the verdict: how many network connections NCCL made over it (NET/IB/<n>/GDRDMA), shown on the
summary's transport line, and required by require_gpudirect_rdma. On the constructed 16-GPU InfiniBand log, and on the
same log with the suffix taken off (a node without nvidia-peermem)."""

import os
import re

from ansible_collections.gpuops.cluster.plugins.module_utils.training.nccl import gpudirect_counts
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")


def _ib_log(without_gdrdma_from=None):
    """The 16-GPU IB log; from the given rank's lines on, its network connections lose GPUDirect RDMA."""
    with open(os.path.join(FIXTURES, "horovod_pytorch_16gpu_ib_nccl.log")) as handle:
        text = handle.read()
    if without_gdrdma_from is None:
        return text
    return "\n".join(line.replace("/GDRDMA", "") if line.startswith("[1,%d]" % without_gdrdma_from) else line
                     for line in text.split("\n"))


def test_every_network_connection_over_gpudirect_passes_the_requirement_and_the_summary_counts_them():
    report = report_from_text(_ib_log(), {"require_gpudirect_rdma": True, "expect_ranks": 16})
    assert report["passed"], report["failures"]
    assert report["nccl"]["gpudirect_rdma"] == {"connections": 8, "network": 8}
    transport = [line for line in summary_lines(report, {}) if line.startswith("transport:")]
    assert transport and transport[0].endswith("; GPUDirect RDMA on 8 of 8 RDMA network connections"), transport


def test_a_node_without_it_fails_the_requirement_naming_the_connections():
    report = report_from_text(_ib_log(without_gdrdma_from=8), {"require_gpudirect_rdma": True})
    direct = report["nccl"]["gpudirect_rdma"]
    assert 0 < direct["connections"] < direct["network"] == 8, direct
    assert not report["passed"]
    failures = [failure for failure in report["failures"] if "GPUDirect" in failure]
    assert failures == ["GPUDirect RDMA is required but %d of 8 RDMA network connections went without it (all: %s)" % (
        8 - direct["connections"], ", ".join("%s x%d" % item for item in sorted(report["nccl"]["transport_details"].items())))]
    # Not required, the same log passes: the count is shown, not judged.
    assert report_from_text(_ib_log(without_gdrdma_from=8), {})["passed"]


def test_a_run_without_rdma_connections_cannot_meet_the_requirement():
    assert gpudirect_counts({"P2P/IPC/read": 28, "SHM/direct/direct": 4}) == (0, 0)
    # Sockets are not RDMA: counted by neither.
    assert gpudirect_counts({"NET/IB/0/GDRDMA": 4, "NET/IB/1": 2, "NET/Socket/0": 2, "P2P/IPC": 8}) == (4, 6)
    over_sockets = re.sub(r"NET/IB/\d+/GDRDMA", "NET/Socket/0", _ib_log())
    report = report_from_text(over_sockets, {"require_gpudirect_rdma": True})
    assert [failure for failure in report["failures"] if "GPUDirect" in failure] == [
        "GPUDirect RDMA is required but NCCL made no RDMA connection between nodes (NET/IB and the like; TCP sockets "
        "carry none; a run across nodes with NCCL_DEBUG=INFO shows them)"]
