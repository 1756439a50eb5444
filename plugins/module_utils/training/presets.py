# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Threshold presets: per-device throughput floors and per-transport scaling-efficiency floors, each derived
from a published figure by a stated margin. This file is the one owner of those numbers; the module's and the
role's documentation and docs/user-guide.md cite them, and a unit test keeps the guide's table equal to them.

Python rather than YAML so that the data travels with the module: Ansible ships a module's module_utils
(Python files only) to whichever host runs it.

A floor is published figure x margin, rounded down. The throughput margin is 0.5 because the collection's
benchmark is untuned (synthetic data, the framework's stock ResNet-50, no channels-last layout, no XLA), and
published figures for one GPU already differ by up to a third between careful runs: Lambda's A100 80GB SXM4
resnet50 fp16 figure (1582 img/s, pytorch-train-throughput-fp16.csv below) is 64% of NVIDIA's (2470). At 0.5
the floor still catches a GPU at half speed: a MIG slice, a power cap, a narrowed PCIe link, a run that fell
back to the CPU, and, on the A100 and the V100, mixed precision that is not in effect (the FP32 figure is under
the AMP floor). The efficiency margin is 0.8 of a published scaling figure.

On Ampere and later GPUs, FP32 training runs its convolutions as TF32 by default (PyTorch's cuDNN setting,
TensorFlow since 2.4): NVIDIA labels its A100 figure TF32, Lambda its H100 figure fp32; both are the fp32 floor.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import shlex

PRECISIONS = ("amp", "fp32")
# The slowest transport a run used bounds its scaling: network transports before the ones inside a node.
SLOWEST_FIRST = ("NET/Socket", "NET/IB", "SHM", "P2P")
# The key of a run whose log has no NCCL connection: CPU ranks over Gloo or MPI, or NCCL_DEBUG unset.
NO_TRANSPORT = "none"
THROUGHPUT_MARGIN = 0.5
EFFICIENCY_MARGIN = 0.8
# The collection's benchmark (roles/training_benchmark/files): fp32 unless --mixed-precision, an argparse flag
# that may be abbreviated down to --mi.
BENCHMARK_PROGRAM = "gpuops_benchmark.py"
AMP_FLAG = "--mixed-precision"
AMP_FLAG_SHORTEST = "--mi"

_DLE_PYTORCH = {
    "title": "NVIDIA DeepLearningExamples, ResNet50 v1.5 for PyTorch (pytorch-21.03 NGC container; batch sizes from "
             "the example's configs.yml)",
    "url": "https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/Classification/ConvNets/resnet50v1.5/README.md",
    "commit": "291f0d02e815b148fa5c2b81bf07aa3552142895",
}
_LAMBDA_FP16 = {
    "title": "Lambda deeplearning-benchmark, PyTorch training throughput, fp16",
    "url": "https://github.com/lambdal/deeplearning-benchmark/blob/master/pytorch/pytorch-train-throughput-fp16.csv",
    "commit": "0551cb70ffdc155dc4cb2c10dddebb65651c3883",
}
_LAMBDA_FP32 = {
    "title": "Lambda deeplearning-benchmark, PyTorch training throughput, fp32",
    "url": "https://github.com/lambdal/deeplearning-benchmark/blob/master/pytorch/pytorch-train-throughput-fp32.csv",
    "commit": "0551cb70ffdc155dc4cb2c10dddebb65651c3883",
}
_HOROVOD_DOCS = {
    "title": "Horovod documentation, Benchmarks",
    "url": "https://github.com/horovod/horovod/blob/master/docs/benchmarks.rst",
    "commit": "27743d08ca7a59290b52154c8cddc807006436d3",
}
_HOROVOD_PAPER = {
    "title": "Sergeev and Del Balso, Horovod: fast and easy distributed deep learning in TensorFlow, section 8",
    "url": "https://arxiv.org/abs/1802.05799",
}
_LAB = {
    "title": "this collection's docs/benchmarks.md: the lab's measured runs, two podman nodes sharing 2 cores",
    "url": "docs/benchmarks.md",
}


def _throughput(published, source, figure, batch_size=None, margin=THROUGHPUT_MARGIN):
    return {"published": published, "margin": margin, "batch_size": batch_size, "source": source, "figure": figure}


def _efficiency(published, source, figure, margin=EFFICIENCY_MARGIN):
    return {"published": published, "margin": margin, "source": source, "figure": figure}


# Between nodes, the only published per-transport figures found are Horovod's, measured on Pascal GPUs (4 per
# server, 25 Gbit/s): faster GPUs need more bandwidth per image, so a modern node over the same network scales
# worse. RoCE, as on Horovod's servers, is NCCL's NET/IB transport.
_NETWORK_EFFICIENCY = {
    "NET/IB": _efficiency(0.9, _HOROVOD_DOCS, "90% scaling efficiency for Inception V3 and ResNet-101, 128 servers with "
                                              "4 Pascal GPUs each over a RoCE-capable 25 Gbit/s network"),
    "NET/Socket": _efficiency(0.88, _HOROVOD_PAPER, "88% scaling efficiency at 128 GPUs for Inception V3 and ResNet-101 "
                                                    "over 25 GbE TCP (Pascal GPUs)"),
}


def _gpu(description, amp, fp32, p2p):
    efficiency = dict(_NETWORK_EFFICIENCY)
    efficiency["P2P"] = p2p
    return {"description": description, "device": "GPU", "model": "resnet50",
            "img_per_sec_per_device": {"amp": amp, "fp32": fp32}, "scaling_efficiency": efficiency}


PRESETS = {
    "h100-sxm": _gpu(
        "NVIDIA H100 SXM5 80GB (DGX H100, HGX H100)",
        amp=_throughput(2616, _LAMBDA_FP16, "1x H100 80GB SXM5, resnet50: 2616 img/s (batch size not stated for this row)"),
        fp32=_throughput(1753, _LAMBDA_FP32, "1x H100 80GB SXM5, resnet50: 1753 img/s (batch size not stated for this row)"),
        p2p=_efficiency(0.988, _LAMBDA_FP32, "8x H100 80GB SXM5, resnet50: 13856 img/s against 1753 on one, 0.988 "
                                             "(fp16: 20728 against 2616, 0.990); the lower is used")),
    "a100-sxm": _gpu(
        "NVIDIA A100 SXM4 (DGX A100, HGX A100; measured on 80GB)",
        amp=_throughput(2470, _DLE_PYTORCH, "DGX A100, 1x A100 80GB, mixed precision: 2470 img/s", 256),
        fp32=_throughput(938, _DLE_PYTORCH, "DGX A100, 1x A100 80GB, TF32: 938 img/s", 256),
        p2p=_efficiency(0.84, _DLE_PYTORCH, "DGX A100, 8 GPUs: mixed precision strong scaling 6.72x, 0.84 "
                                            "(TF32: 7.72x, 0.965); the lower is used")),
    "v100": _gpu(
        "NVIDIA V100 SXM2 16GB (DGX-1)",
        amp=_throughput(1200, _DLE_PYTORCH, "DGX-1 16GB, 1x V100 16GB, mixed precision: 1200 img/s", 256),
        fp32=_throughput(367, _DLE_PYTORCH, "DGX-1 16GB, 1x V100 16GB, FP32: 367 img/s", 112),
        p2p=_efficiency(0.866, _DLE_PYTORCH, "DGX-1 16GB, 8 GPUs: mixed precision strong scaling 6.93x, 0.866 "
                                             "(FP32: 7.76x, 0.97); the lower is used")),
    # The lab (inventories/lab/group_vars/all.yml, lab_benchmark_args): small_cnn on CPUs, batch 16, 64x64 images,
    # two podman nodes sharing the machine's 2 cores with other work. Half of the lowest figures measured there,
    # under load, so that a busy lab still passes and a rank that stalls does not.
    "cpu-lab": {
        "description": "the collection's lab: small_cnn on CPU ranks, 64x64 images, batch 16 per rank",
        "device": "CPU", "model": "small_cnn",
        "img_per_sec_per_device": {
            "fp32": _throughput(32.8, _LAB, "mpirun (Open MPI 4.1.4) over SSH, 2 ranks on two lab nodes under load "
                                            "average 13 to 27: 32.8 img/s per rank, the lowest measured", 16),
        },
        "scaling_efficiency": {
            NO_TRANSPORT: _efficiency(0.2163, _LAB, "bench/horovod_scaling.py, horovodrun --gloo, 2 nodes against 1 "
                                                    "on the shared machine: 0.2163, the lowest measured", margin=0.5),
        },
    },
}
PRESET_NAMES = tuple(sorted(PRESETS))

# Named in the issue, left out for want of a published figure (rather than an invented one).
OMITTED = {
    "t4": "no published single-T4 ResNet-50 training throughput was found: NVIDIA's DeepLearningExamples ResNet-50 "
          "v1.5 READMEs give T4 inference figures only, and Lambda's PyTorch training tables have no T4 row; measure "
          "one T4 alone and set gpuops_training_min_img_per_sec_per_device",
}

THRESHOLD_KEYS = ("expect_ranks", "min_img_per_sec_per_device", "min_scaling_efficiency", "require_transport",
                  "forbid_transport")


def floor(figure):
    """published x margin, rounded down: whole images per second, or an efficiency to two places."""
    value = figure["published"] * figure["margin"]
    # Throughput figures carry a batch size (or None); efficiency figures do not.
    if "batch_size" in figure:
        return int(math.floor(value + 1e-9))
    return math.floor(value * 100 + 1e-9) / 100


def _tokens(command):
    """The command's words, each element split as a shell would (a custom command may be bash -c '...')."""
    tokens = []
    for item in [command] if isinstance(command, str) else command or []:
        try:
            tokens.extend(shlex.split(str(item)))
        except ValueError:
            tokens.extend(str(item).split())
    return tokens


def precision_from_command(command):
    """(precision, why) as the benchmark command shows it, or (None, why not). Only the collection's own program
    says it for certain: it trains in fp32 unless --mixed-precision is given."""
    tokens = _tokens(command)
    if not tokens:
        return None, "no benchmark command was given"
    if not any(os.path.basename(token) == BENCHMARK_PROGRAM for token in tokens):
        return None, "the benchmark command does not run %s, whose arguments say it" % BENCHMARK_PROGRAM
    # --mixed-precision takes an optional fp16 or bf16, given as the next word or after "=".
    flags = [token.split("=", 1)[0] for token in tokens]
    if any(flag.startswith(AMP_FLAG_SHORTEST) and AMP_FLAG.startswith(flag) for flag in flags):
        return "amp", "%s in the benchmark command" % AMP_FLAG
    return "fp32", "the benchmark command has no %s" % AMP_FLAG


def run_precision(options):
    """(precision, why): as given, else as the benchmark command shows it, else (None, why not)."""
    if options.get("precision"):
        return options["precision"], "given"
    return precision_from_command(options.get("benchmark_command"))


def preset_problems(options):
    """What stops a preset from being applied, checked before the log is read: its name, and the precision
    that picks its floor per device (unless an explicit minimum replaces that floor)."""
    name = options.get("threshold_preset")
    precision = options.get("precision")
    problems = []
    if precision is not None and precision not in PRECISIONS:
        problems.append("precision must be one of %s, got %r" % (", ".join(PRECISIONS), precision))
    if name is None:
        return problems
    if name not in PRESETS:
        reason = " (%s: %s)" % (name, OMITTED[name]) if name in OMITTED else ""
        return problems + ["threshold_preset: %r is not a preset; expected one of %s%s" % (name, ", ".join(PRESET_NAMES), reason)]
    if options.get("min_img_per_sec_per_device") is not None or problems:
        return problems
    floors = PRESETS[name]["img_per_sec_per_device"]
    precision, why = run_precision(options)
    if precision is None:
        problems.append("threshold_preset %s has a floor per device for each precision (%s) and the precision is not "
                        "known: %s; set precision (gpuops_training_precision) or min_img_per_sec_per_device"
                        % (name, ", ".join(sorted(floors)), why))
    elif precision not in floors:
        problems.append("threshold_preset %s has no %s floor per device, only %s (%s); set precision "
                        "(gpuops_training_precision) or min_img_per_sec_per_device"
                        % (name, precision, ", ".join(sorted(floors)), why))
    return problems


def bottleneck(transports):
    """The transport that bounds a run's scaling: the slowest that carried a connection, a network one when any
    did. A network transport the table does not rank (another NET plugin) is returned as it is."""
    used = [name for name, count in transports.items() if count]
    if not used:
        return NO_TRANSPORT
    network = [name for name in used if name.startswith("NET/")]
    candidates = network or used
    unranked = sorted(name for name in candidates if name not in SLOWEST_FIRST)
    if unranked:
        return unranked[0]
    return min(candidates, key=SLOWEST_FIRST.index)


def _cited(figure, **extra):
    cited = {"floor": floor(figure), "published": figure["published"], "margin": figure["margin"],
             "figure": figure["figure"], "source": figure["source"]["title"], "url": figure["source"]["url"]}
    if figure.get("batch_size"):
        cited["batch_size"] = figure["batch_size"]
    cited.update(extra)
    return cited


def _efficiency_floor(preset, name, options, transport):
    """(floor, why not): the preset's efficiency floor for the transport that bounded the run."""
    figure = preset["scaling_efficiency"].get(transport)
    if figure is None and transport == NO_TRANSPORT:
        return None, "the log has no NCCL connection lines to tell the transport (run with NCCL_DEBUG=INFO)"
    if figure is None:
        return None, "preset %s has no published scaling figure for %s" % (name, transport)
    if options.get("baseline_img_per_sec") is None:
        return None, "needs baseline_img_per_sec (gpuops_training_baseline_img_per_sec), one device's figure"
    return figure, None


def _mismatch(preset, name, report, figure):
    """A warning when the run is not what the preset's figures measured: the floors then compare unlike runs."""
    ran, measured = [], []
    model = (report["model"] or "").lower().replace("-", "").replace("_", "")
    if report["model"] and model != preset["model"].replace("_", ""):
        ran.append(report["model"])
        measured.append(preset["model"])
    batch = figure.get("batch_size") if figure else None
    if batch and report["batch_size"] and report["batch_size"] != batch:
        ran.append("batch %s" % report["batch_size"])
        measured.append("batch %s" % batch)
    if report["device"] and report["device"] != preset["device"]:
        ran.append("%s ranks" % report["device"])
        measured.append("%s ranks" % preset["device"])
    if not ran:
        return []
    return ["preset %s's floors come from %s; this run is %s: set the thresholds explicitly to judge it on its own terms"
            % (name, ", ".join(measured), ", ".join(ran))]


def apply_preset(options, report):
    """(effective options, the thresholds' origin, warnings): the preset's floors where no explicit threshold
    is given. The origin names each threshold's source ("explicit" or "preset") and, with a preset, the figures
    behind its floors and those it could not apply. Expects preset_problems(options) to be empty."""
    origin = dict((key, "explicit") for key in THRESHOLD_KEYS if options.get(key) not in (None, []))
    name = options.get("threshold_preset")
    if name is None:
        return options, {"origin": origin, "preset": None}, []
    preset = PRESETS[name]
    effective = dict(options)
    detail = {"name": name, "description": preset["description"], "precision": None, "precision_from": None,
              "applied": {}, "overridden": [], "not_applied": {}}
    figure = None
    if options.get("min_img_per_sec_per_device") is not None:
        detail["overridden"].append("min_img_per_sec_per_device")
    else:
        detail["precision"], detail["precision_from"] = run_precision(options)
        figure = preset["img_per_sec_per_device"][detail["precision"]]
        effective["min_img_per_sec_per_device"] = floor(figure)
        detail["applied"]["min_img_per_sec_per_device"] = _cited(figure)
        origin["min_img_per_sec_per_device"] = "preset"
    if options.get("min_scaling_efficiency") is not None:
        detail["overridden"].append("min_scaling_efficiency")
    else:
        transport = bottleneck(report["transports"])
        scaling, why_not = _efficiency_floor(preset, name, options, transport)
        if scaling is None:
            detail["not_applied"]["min_scaling_efficiency"] = why_not
        else:
            effective["min_scaling_efficiency"] = floor(scaling)
            detail["applied"]["min_scaling_efficiency"] = _cited(scaling, transport=transport)
            origin["min_scaling_efficiency"] = "preset"
    return effective, {"origin": origin, "preset": detail}, _mismatch(preset, name, report, figure)
