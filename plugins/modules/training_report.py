#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: training_report
short_description: Judge a distributed training benchmark from its log
version_added: 0.1.0
description:
  - Reads the output of a Horovod synthetic benchmark (PyTorch or TensorFlow), of this collection's
    benchmark program, of tf_cnn_benchmarks, or of a program that logs with NVIDIA's DLLogger (its C(total_ips),
    as NVIDIA's ResNet-50 v1.5 benchmark prints it), as printed directly, through C(mpirun --tag-output)
    or through C(horovodrun), together with any C(NCCL_DEBUG=INFO) lines.
  - Returns the number of ranks, images per second per device and in total, every rank's own
    figure, the NCCL transports actually used, the scaling efficiency against a single-device
    baseline, and warnings such as a log that ends before the final result or a rank much slower
    than the others.
  - Fails when any threshold is unmet, listing all of them, and when the run did not finish. An
    empty log, or one with no throughput figure, is an error naming the formats expected.
  - Optionally writes the verdict as a JSON report and a PNG chart. Files are only rewritten when
    their content changes.
  - Reads the log in one pass, a line at a time, so that logs of millions of lines are judged in
    seconds. The task result carries each rank's summary; every iteration's figure goes to the JSON
    report only.
  - A figure that cannot be a measurement (V(nan), V(inf), negative, or more than 10,000,000 images
    per second per device), a binary or non-UTF-8 file, and two summary lines with different totals
    are errors naming the file, the line number and the line.
  - Horovod's C(Total img/sec) line is rank 0's figure multiplied by the number of ranks. When every
    rank prints its own figures, in the per-rank line format described in the collection's
    docs/training_report.md, the total is the sum over ranks instead, and a slow rank is named.
author:
  - gpuops maintainers (@gpuops)
options:
  src:
    description:
      - Path of the log file on the target.
      - Mutually exclusive with O(content); one of them is required.
    type: path
  content:
    description:
      - The log itself, for example the registered output of a launcher.
      - Mutually exclusive with O(src); one of them is required.
    type: str
  expect_ranks:
    description:
      - Number of ranks (processes) the run must show. Fails otherwise.
    type: int
  expect_placement:
    description:
      - How the launcher placed the ranks, one entry per host (node, pod or worker) with its count of ranks, such as
        V([8, 8]) for two nodes of eight. Fails when the hosts the log names for the ranks (the benchmark's
        C(Rank <R> on <host>) lines, NCCL's) hold other counts, naming the hosts seen; an mpirun that ignored
        the host file and ran every rank on one node completes and shows the right rank count.
      - Judged only where the log names every rank's host; otherwise a warning says so. Its sum must equal
        O(expect_ranks) where both are given.
    type: list
    elements: int
  min_img_per_sec_per_device:
    description:
      - Minimum images per second per GPU (or CPU). Fails when the mean, or any rank that printed
        its own figure, is below it.
    type: float
  baseline_img_per_sec:
    description:
      - Images per second of the same model and batch size on a single device. Enables
        RV(scaling_efficiency).
    type: float
  baseline_report:
    description:
      - The JSON report of a run on one device (the shipped baseline job's, C(<cache>/training/gpuops-baseline.json)),
        whose images per second per device are the baseline, instead of O(baseline_img_per_sec).
      - A warning names what makes it another kind of run than this one (framework, model, batch size, device or
        precision), or a baseline of more than one device. A report of a run that did not finish is refused.
    type: path
  min_scaling_efficiency:
    description:
      - Minimum scaling efficiency, a fraction where 1.0 is linear scaling.
      - Needs O(baseline_img_per_sec) or O(baseline_report).
    type: float
  require_transport:
    description:
      - NCCL transports that must carry at least one ring or channel connection, for example
        V(NET/IB) for InfiniBand (or RoCE) between nodes, V(NET/Socket), V(P2P) or V(SHM).
      - Fails for each one missing, naming the transports NCCL used instead. Needs the log of a run
        with C(NCCL_DEBUG=INFO).
    type: list
    elements: str
  forbid_transport:
    description:
      - NCCL transports that must carry no connection at all, for example V(NET/Socket) where every pair of nodes
        must talk over InfiniBand. A run that used V(NET/IB) for some pairs and fell back to TCP for others passes
        O(require_transport=[NET/IB]) and fails this.
      - A transport cannot be both required and forbidden. Needs the log of a run with C(NCCL_DEBUG=INFO).
    type: list
    elements: str
  require_gpudirect_rdma:
    description:
      - Every network connection NCCL made must be over GPUDirect RDMA (C(NET/IB/<n>/GDRDMA)), where the NIC reads and
        writes the GPU's memory directly. A connection without it went through host memory (C(nvidia-peermem) not
        loaded, or the GPU and its NIC under different PCIe switches). Fails too where the log shows no network
        connection. Needs the log of a run with C(NCCL_DEBUG=INFO).
    type: bool
    default: false
  threshold_preset:
    description:
      - Named floors for a kind of device, each derived from a published ResNet-50 training figure by a stated
        margin - a floor of images per second per device for each precision, and a floor of scaling efficiency for
        each NCCL transport. The collection's plugins/module_utils/training/presets.py holds them with their
        sources; the collection's docs/user-guide.md tabulates them.
      - V(h100-sxm), V(a100-sxm) and V(v100) are ResNet-50 on one GPU. V(cpu-lab) is the collection's lab
        (small_cnn on CPU ranks), from the figures the lab measured. No T4 preset is offered - no published
        single-T4 training figure was found.
      - An explicit O(min_img_per_sec_per_device) or O(min_scaling_efficiency) replaces the preset's floor. The
        floor per device needs the precision (O(precision), or O(benchmark_command)) unless that minimum is given.
      - The efficiency floor is the one of the slowest transport NCCL connected over (a network transport, when
        any) and, like O(min_scaling_efficiency), needs O(baseline_img_per_sec); a log without NCCL connection
        lines has the V(cpu-lab) floor for CPU ranks and none for GPU presets. RV(thresholds) and the
        C(thresholds:) line of RV(summary) say which floors applied, from which figure, and which did not.
      - A run whose model, batch size or kind of device differs from the preset's figures is judged all the same,
        with a warning in RV(log_warnings).
    type: str
    choices: [a100-sxm, cpu-lab, h100-sxm, v100]
  precision:
    description:
      - V(amp) (mixed precision) or V(fp32) (TF32 on Ampere and later GPUs), to pick the preset's floor per
        device. Without it the precision is read from O(benchmark_command).
    type: str
    choices: [amp, fp32]
  benchmark_command:
    description:
      - The command that ran the benchmark, as the launcher built it. When it runs this collection's
        C(gpuops_benchmark.py), its C(--mixed-precision) flag gives the precision (V(amp), else V(fp32)); other
        programs' precision is not read, so O(precision) must say it.
    type: list
    elements: str
  slow_rank_tolerance:
    description:
      - A rank whose images per second are below the median rank's by more than this fraction is
        reported in RV(log_warnings).
    type: float
    default: 0.1
  report_path:
    description:
      - Where to write the verdict as JSON (mode 0644). Its directory must exist.
    type: path
  chart_path:
    description:
      - Where to write a PNG chart of throughput per iteration per rank, with a scaling panel when
        O(baseline_img_per_sec) is given (mode 0644). Its directory must exist.
      - Long series are drawn from at most 500 points per rank, each the mean of consecutive iterations.
      - Needs the matplotlib Python library on the target.
    type: path
  launched_by:
    description:
      - How the run was launched, in words, for the C(verdict:) line of RV(summary), for example
        V(an MPIJob (default/gpuops-benchmark)) or V(horovodrun --gloo over SSH (node1, node2)).
    type: str
  cpu_transport:
    description:
      - What carried the traffic of CPU ranks, for example V(Gloo over TCP), shown in the C(transport:)
        line of RV(summary) when the log has no NCCL line and the ranks ran on CPUs.
    type: str
requirements:
  - matplotlib (only for O(chart_path))
attributes:
  check_mode:
    support: full
    description: Reports what would be written without writing it.
  diff_mode:
    support: full
    description: Shows the JSON report before and after.
notes:
  - The module reads and judges a log; it does not run the benchmark.
  - Figures are images per second as the benchmark printed them. Horovod's C(+-) is 1.96 standard
    deviations of the per-iteration figures; spreads computed here follow the same convention.
seealso:
  - name: Reading a training report
    description: The report's fields, what scaling efficiency means and why per-rank numbers matter.
    link: https://example.invalid/gpuops/cluster/docs/training_report.md
"""

EXAMPLES = r"""
- name: Judge a 16-GPU run over InfiniBand
  gpuops.cluster.training_report:
    src: /var/log/gpuops/benchmark-16gpu.log
    expect_ranks: 16
    min_img_per_sec_per_device: 2000
    baseline_img_per_sec: 2470
    min_scaling_efficiency: 0.9
    require_transport:
      - NET/IB
    forbid_transport:
      - NET/Socket
    report_path: /var/log/gpuops/benchmark-16gpu.json
    chart_path: /var/log/gpuops/benchmark-16gpu.png
  register: verdict

- name: Judge a 16-GPU run on A100 nodes against the a100-sxm preset's floors
  gpuops.cluster.training_report:
    src: /var/log/gpuops/benchmark-16gpu.log
    expect_ranks: 16
    threshold_preset: a100-sxm
    precision: amp
    baseline_img_per_sec: 2470
  register: verdict

- name: Judge the launcher output registered by an earlier task
  gpuops.cluster.training_report:
    content: "{{ launcher.stdout }}"
    expect_ranks: 4
  register: verdict

- name: Show the figures even when a threshold fails
  gpuops.cluster.training_report:
    src: /tmp/benchmark.log
    min_img_per_sec_per_device: 300
  register: verdict
  ignore_errors: true

- name: Print the failures
  ansible.builtin.debug:
    var: verdict.failures

- name: Judge a run over SSH and print its summary
  gpuops.cluster.training_report:
    src: /tmp/training-gloo.log
    launched_by: horovodrun --gloo over SSH (node1, node2)
    cpu_transport: Gloo over TCP
  register: verdict

- name: Print the summary
  ansible.builtin.debug:
    var: verdict.summary
"""

RETURN = r"""
passed:
  description: Whether the run finished and every threshold was met.
  returned: success or threshold failure
  type: bool
  sample: false
failures:
  description: One sentence per unmet threshold, and one when the run did not finish.
  returned: success or threshold failure
  type: list
  elements: str
  sample: ["transport NET/IB is required but NCCL connected over NET/Socket x8, P2P x28"]
log_warnings:
  description:
    - What deserves a look without failing the run, such as a slow rank, a log that ends before the
      final result or a printed total that hides a slow rank. Also emitted as Ansible warnings.
    - The JSON report calls this list C(warnings).
  returned: success or threshold failure
  type: list
  elements: str
  sample: ["rank 5 on v100-node-3 is slow: 208.3 img/sec, 56% of the median rank (370.4)"]
ranks:
  description: Number of ranks (processes) in the run.
  returned: success or threshold failure
  type: int
  sample: 16
baseline:
  description:
    - The baseline read from O(baseline_report), null without one. C(img_per_sec) per device, the C(path), the
      baseline run's C(ranks), C(framework), C(model), C(batch_size), C(device) and C(precision).
  returned: success or threshold failure
  type: dict
  sample: {"img_per_sec": 738.7, "path": "/root/.cache/gpuops/training/gpuops-baseline.json", "ranks": 1,
           "devices_per_rank": 1, "framework": "tensorflow", "model": "small_cnn", "batch_size": 16,
           "device": "CPU", "precision": "fp32"}
precision:
  description: The run's precision (V(amp) or V(fp32)) as given or as the collection's benchmark command shows it; null when unknown.
  returned: success or threshold failure
  type: str
  sample: amp
placement:
  description:
    - Where the ranks ran, as the log names them. C(hosts) maps each host to its count of ranks, C(ranks_named) counts
      the ranks whose host the log names, and C(expected) is O(expect_placement).
  returned: success or threshold failure
  type: dict
  sample: {"hosts": {"dgx-a": 8, "dgx-b": 8}, "ranks_named": 16, "expected": [8, 8]}
ranks_source:
  description: Which lines of the log gave RV(ranks), such as the launcher's command line (C(mpirun -np N)) when nothing else states it.
  returned: success or threshold failure
  type: str
  sample: "Horovod 'Number of GPUs'"
device:
  description: V(GPU) or V(CPU), or null when the log does not say.
  returned: success or threshold failure
  type: str
  sample: GPU
devices_per_rank:
  description: Devices driven by each rank; 1 for Horovod, more for a multi-GPU tf_cnn_benchmarks process.
  returned: success or threshold failure
  type: int
  sample: 1
model:
  description: The model benchmarked.
  returned: success or threshold failure
  type: str
  sample: resnet50
batch_size:
  description: Batch size per device.
  returned: success or threshold failure
  type: int
  sample: 256
framework:
  description: V(pytorch) or V(tensorflow) when the log shows which, else null.
  returned: success or threshold failure
  type: str
  sample: tensorflow
sources:
  description: The kinds of lines found (horovod_synthetic, per_rank, tf_cnn_benchmarks, dllogger, tagged_output, nccl).
  returned: success or threshold failure
  type: list
  elements: str
  sample: ["tagged_output", "horovod_synthetic", "nccl", "per_rank"]
img_per_sec_per_device:
  description: Mean images per second per device over the ranks that printed figures, its spread and where it came from.
  returned: success or threshold failure
  type: dict
  sample: {"mean": 2290.3, "spread": 30.0, "source": "16 rank(s)"}
img_per_sec_total:
  description:
    - Images per second of the whole run. The sum over ranks when every rank printed its own figure,
      else the printed total. C(reported) is the total the benchmark printed.
  returned: success or threshold failure
  type: dict
  sample: {"mean": 36645.0, "spread": 231.8, "source": "sum over 16 ranks", "reported": 36382.1}
per_rank:
  description: Each rank's images per second, spread, host, number of iterations and figure relative to the median rank.
  returned: success or threshold failure
  type: list
  elements: dict
  sample: [{"rank": 0, "host": "dgx-a01", "img_per_sec": 2273.9, "img_per_sec_per_device": 2273.9,
            "spread": 25.1, "iterations": 10, "relative_to_median": 0.993, "source": "per-rank lines"}]
summary:
  description:
    - The lines a person reads, in this order, labels padded to 13 characters; the JSON report holds
      the same list under C(summary). C(verdict:) (with O(launched_by)), C(failures:) (only when
      failed), C(ranks:), C(images/sec:), C(per rank:) (every rank up to 4, else the slowest and the
      fastest), C(scaling:), C(transport:), C(thresholds:) (only with O(threshold_preset) - the preset, the
      precision and where each threshold came from), C(warnings:) (only when there are any), C(log:), and
      C(report:) and C(chart:) when asked for.
    - The per-iteration series is not returned; the JSON report holds it under C(iterations), one
      entry per rank with the lists C(iteration) and C(img_per_sec).
    - When the log cannot be judged at all (missing, unreadable, a refused figure), only C(verdict:),
      C(failures:) with the error and C(log:).
  returned: always
  type: list
  elements: str
  sample: ["verdict:     PASSED (horovodrun --gloo over SSH (node1, node2))",
           "ranks:       2 (CPU, small_cnn, batch 16 per CPU, tensorflow)"]
transports:
  description: NCCL ring or channel connections counted by transport (NET/IB, NET/Socket, P2P, SHM).
  returned: success or threshold failure
  type: dict
  sample: {"NET/IB": 8, "P2P": 28}
nccl:
  description: What NCCL reported, or null when the log has no NCCL line.
  returned: success or threshold failure
  type: dict
  contains:
    version:
      description: NCCL version.
      type: str
      sample: 2.18.5
    cuda:
      description: CUDA version NCCL was built with.
      type: str
      sample: "12.2"
    networks:
      description: Networks NCCL chose (C(Using network ...)).
      type: list
      elements: str
      sample: ["IB"]
    nranks:
      description: Ranks of the largest communicator.
      type: int
      sample: 16
    ranks_initialized:
      description: Ranks of that communicator that printed C(Init COMPLETE).
      type: int
      sample: 16
    communicators:
      description: Number of distinct communicators initialised.
      type: int
      sample: 1
    interfaces:
      description: Network devices NCCL listed (IB devices with port and link layer, socket interfaces with address).
      type: list
      elements: dict
      sample: [{"net": "IB", "name": "mlx5_0", "port": 1, "link_layer": "IB"}]
    bootstrap_interfaces:
      description: Interfaces used for bootstrap and out-of-band traffic.
      type: list
      elements: str
      sample: ["ib0:10.10.1.11"]
    hosts:
      description: Hosts that printed NCCL lines.
      type: list
      elements: str
      sample: ["dgx-a01", "dgx-a02"]
    transport_details:
      description: Connections counted by the exact transport text, such as C(NET/IB/0/GDRDMA) or C(P2P/IPC/read).
      type: dict
      sample: {"NET/IB/0/GDRDMA": 4, "P2P/IPC/read": 28}
    gpudirect_rdma:
      description: Of the RDMA network connections (C(network), NET/IB and the like, not TCP sockets), how many were over GPUDirect RDMA (C(connections)).
      type: dict
      sample: {"connections": 4, "network": 4}
    warnings:
      description: C(NCCL WARN) messages.
      type: list
      elements: str
      sample: []
baseline_img_per_sec:
  description: The baseline given.
  returned: success or threshold failure
  type: float
  sample: 2470.0
scaling_efficiency:
  description: Total images per second divided by (devices x baseline); null without a baseline.
  returned: success or threshold failure
  type: float
  sample: 0.9273
complete:
  description: Whether the log holds the final result of every rank that printed figures.
  returned: success or threshold failure
  type: bool
  sample: true
thresholds:
  description:
    - The thresholds applied, a preset's floors included, with C(origin) (V(explicit) or V(preset) for each one
      set) and C(preset) (null without O(threshold_preset)).
    - C(preset) holds the preset's C(name), C(description), the C(precision) that chose the floor per device and
      C(precision_from); C(applied), each floor with the published figure, margin, source and URL it comes from
      (and the C(transport) of the efficiency floor); C(overridden), the floors an explicit threshold replaced;
      C(not_applied), the floors that could not apply and why.
  returned: success or threshold failure
  type: dict
  sample: {"expect_ranks": 16, "min_img_per_sec_per_device": 1235, "min_scaling_efficiency": 0.72,
           "require_transport": ["NET/IB"], "forbid_transport": null, "slow_rank_tolerance": 0.1,
           "origin": {"expect_ranks": "explicit", "min_img_per_sec_per_device": "preset",
                      "min_scaling_efficiency": "preset", "require_transport": "explicit"},
           "preset": {"name": "a100-sxm", "precision": "amp", "precision_from": "given",
                      "applied": {"min_scaling_efficiency": {"floor": 0.72, "published": 0.9, "margin": 0.8,
                                                             "transport": "NET/IB"}},
                      "overridden": [], "not_applied": {}}}
report_path:
  description: The JSON report's path, when one was asked for.
  returned: when O(report_path) is set
  type: str
  sample: /var/log/gpuops/benchmark-16gpu.json
chart_path:
  description: The PNG chart's path, when one was asked for.
  returned: when O(chart_path) is set
  type: str
  sample: /var/log/gpuops/benchmark-16gpu.png
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.presets import PRECISIONS, PRESET_NAMES
from ansible_collections.gpuops.cluster.plugins.module_utils.training.run import run_training_report
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import unjudged_lines

ARGUMENT_SPEC = dict(
    src=dict(type="path"),
    content=dict(type="str"),
    expect_ranks=dict(type="int"),
    expect_placement=dict(type="list", elements="int"),
    min_img_per_sec_per_device=dict(type="float"),
    baseline_img_per_sec=dict(type="float"),
    baseline_report=dict(type="path"),
    min_scaling_efficiency=dict(type="float"),
    require_transport=dict(type="list", elements="str"),
    forbid_transport=dict(type="list", elements="str"),
    require_gpudirect_rdma=dict(type="bool", default=False),
    threshold_preset=dict(type="str", choices=list(PRESET_NAMES)),
    precision=dict(type="str", choices=list(PRECISIONS)),
    benchmark_command=dict(type="list", elements="str"),
    slow_rank_tolerance=dict(type="float", default=0.1),
    report_path=dict(type="path"),
    chart_path=dict(type="path"),
    launched_by=dict(type="str"),
    cpu_transport=dict(type="str"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, mutually_exclusive=[("src", "content")],
                           required_one_of=[("src", "content")], supports_check_mode=True)
    try:
        result = run_training_report(module.params, module.check_mode, module._diff, warn=module.warn)
    except TrainingReportError as error:
        message = missing_required_lib(error.library) if error.library else str(error)
        module.fail_json(msg=message, summary=unjudged_lines(message, module.params))
    if not result["passed"]:
        module.fail_json(msg="training verdict: %s" % "; ".join(result["failures"]), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
