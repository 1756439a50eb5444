# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parser alone: demultiplexing launcher output and reading each kind of line."""

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.demux import demultiplex
from ansible_collections.gpuops.cluster.plugins.module_utils.training.nccl import classify_transport
from ansible_collections.gpuops.cluster.plugins.module_utils.training.parser import parse


def texts(lines):
    return [(line.rank, line.stream, line.text) for line in lines]


def test_untagged_lines_have_no_rank():
    assert texts(demultiplex("Model: resnet50\n\nBatch size: 32\n")) == [
        (None, None, "Model: resnet50"),
        (None, None, "Batch size: 32"),
    ]


def test_mpirun_pieces_of_one_line_are_joined_across_tags_and_ranks():
    # OpenMPI forwards each write as it comes: a line printed in three writes gets three tags,
    # and another rank's output can land between them on the same physical line.
    text = (
        "[1,0]<stdout>:Rank 0 on a: Iter #0: [1,1]<stdout>:Rank 1 on b: Iter #0: [1,0]<stdout>:11.2 img/sec"
        "[1,1]<stdout>:12.0 img/sec per CPU\n"
        "[1,0]<stdout>: per CPU\n"
    )
    assert texts(demultiplex(text)) == [
        (1, "stdout", "Rank 1 on b: Iter #0: 12.0 img/sec per CPU"),
        (0, "stdout", "Rank 0 on a: Iter #0: 11.2 img/sec per CPU"),
    ]


def test_stdout_and_stderr_of_one_rank_are_kept_apart():
    text = "[1,2]<stdout>:Rank 2: Iter #1: [1,2]<stderr>:UserWarning: slow\n[1,2]<stdout>:9.5 img/sec per CPU\n"
    assert texts(demultiplex(text)) == [
        (2, "stderr", "UserWarning: slow"),
        (2, "stdout", "Rank 2: Iter #1: 9.5 img/sec per CPU"),
    ]


def test_launcher_lines_after_a_tagged_line_are_untagged():
    text = "[1,0]<stdout>:Running benchmark...\n--------\nPrimary job  terminated normally, but 1 process returned\n"
    assert texts(demultiplex(text)) == [
        (0, "stdout", "Running benchmark..."),
        (None, None, "--------"),
        (None, None, "Primary job  terminated normally, but 1 process returned"),
    ]


def test_horovodrun_gloo_tags_with_and_without_timestamp():
    text = "[3]<stdout>:Model: resnet18\nTue Jun 10 09:41:03 2025[0]<stderr>:warning\r\n"
    assert texts(demultiplex(text)) == [(3, "stdout", "Model: resnet18"), (0, "stderr", "warning")]


def test_a_piece_still_waiting_for_its_newline_at_the_end_is_partial():
    lines = demultiplex("[1,0]<stdout>:Iter #0: 1.0 img/sec per GPU\n[1,3]<stdout>:Rank 3: Iter #6: 14")
    assert [(line.rank, line.text, line.partial) for line in lines] == [
        (0, "Iter #0: 1.0 img/sec per GPU", False),
        (3, "Rank 3: Iter #6: 14", True),
    ]


@pytest.mark.parametrize("detail, expected", [
    ("P2P/IPC", "P2P"),
    ("P2P/IPC/read", "P2P"),
    ("P2P/CUMEM", "P2P"),
    ("P2P/CUMEM/read", "P2P"),
    ("P2P/direct pointer/read", "P2P"),
    ("SHM", "SHM"),
    ("SHM/direct/direct", "SHM"),
    ("NET/IB/0", "NET/IB"),
    ("NET/IB/3/GDRDMA", "NET/IB"),
    ("NET/IB/12/GDRDMA/Shared", "NET/IB"),
    ("NET/IBext_v8/4", "NET/IB"),
    ("NET/Socket/0", "NET/Socket"),
    ("NET/AWS Libfabric/0/GDRDMA", "NET/AWS Libfabric"),
])
def test_transport_names(detail, expected):
    assert classify_transport(detail) == expected


def test_nccl_lines_of_several_versions():
    log = parse("\n".join([
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO Bootstrap : Using [0]eth0:10.0.0.1<0>",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_bond_0:1/RoCE [RO]; OOB ib0:10.1.0.1<0>",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO NET/Socket: Using 2 threads and 8 sockets per thread",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO Using network IB",
        "[1,0]<stdout>:NCCL version 2.19.3+cuda12.3",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO Channel 00 : 0[1b0] -> 1[1c0] via P2P/IPC",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO Channel 02/1 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA",
        "[1,0]<stdout>:h1:10:20 [0] NCCL INFO comm 0x5500 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 7000 "
        "commId 0xabc - Init COMPLETE",
        "[1,1]<stdout>:h1:11:21 [1] NCCL INFO comm 0x5600 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 8000 "
        "commId 0xabc - Init COMPLETE",
        "[1,1]<stdout>:h1:11:21 [1] NCCL WARN NET/IB : Got completion from peer with error 12",
    ]) + "\n")
    assert log.nccl_version == "2.19.3"
    assert log.nccl_cuda == "12.3"
    assert log.nccl_networks == ["IB"]
    assert log.nccl_interfaces == [
        {"net": "IB", "name": "mlx5_0", "port": 1, "link_layer": "IB"},
        {"net": "IB", "name": "mlx5_bond_0", "port": 1, "link_layer": "RoCE"},
        {"net": "Socket", "name": "eth0", "address": "10.0.0.1"},
        {"net": "Socket", "name": "eth1", "address": "10.0.1.1"},
    ]
    assert log.nccl_bootstrap == ["eth0:10.0.0.1", "ib0:10.1.0.1"]
    assert log.transports == {"NET/IB": 2, "P2P": 2}
    assert log.transport_details == {"NET/IB/0": 1, "P2P/IPC": 1, "P2P/CUMEM/read": 1, "NET/IB/0/GDRDMA": 1}
    assert log.nccl_comms == {"0xabc": {"nranks": 4, "ranks": {0: "h1", 1: "h1"}}}
    assert log.nccl_warnings == ["NET/IB : Got completion from peer with error 12"]


def test_per_rank_lines_with_and_without_host():
    log = parse("\n".join([
        "Rank 0 on node-a: Iter #0: 97.1 img/sec per GPU",
        "Rank 0 on node-a: Img/sec per GPU: 97.4 +-1.2",
        "Rank 0 on node-a: Compute img/sec per GPU: 99.0 +-0.8",
        "Rank 12: Img/sec per GPU: 96.0 +-2.0",
    ]) + "\n")
    assert dict((rank, series.points()) for rank, series in log.rank_iterations.items()) == {0: [(0, 97.1)]}
    assert log.rank_summaries == {0: (97.4, 1.2), 12: (96.0, 2.0)}
    assert log.rank_compute == {0: (99.0, 0.8)}
    assert log.rank_hosts == {0: "node-a"}
    assert log.device == "GPU"


def test_tf_cnn_benchmarks_header_and_steps():
    log = parse("\n".join([
        "TensorFlow:  1.15",
        "Model:       resnet50",
        "Batch size:  128 global",
        "             64 per device",
        "Devices:     ['/gpu:0', '/gpu:1']",
        "Variables:   replicated",
        "Running warm up",
        "10\timages/sec: 139.6 +/- 0.1 (jitter = 0.3)\t8.137",
        "total images/sec: 279.10",
    ]) + "\n")
    assert (log.framework, log.model, log.batch_size, log.device) == ("tensorflow", "resnet50", 64, "GPU")
    assert log.tf_devices == ["/gpu:0", "/gpu:1"]
    assert dict((rank, series.points()) for rank, series in log.tf_steps.items()) == {None: [(10, 139.6)]}
    assert log.tf_uncertainty == {None: 0.1}
    assert log.tf_untagged_totals == [279.1]
    # tf_cnn_benchmarks' "Running warm up" is not Horovod's warm-up line.
    assert not log.warmup_started
