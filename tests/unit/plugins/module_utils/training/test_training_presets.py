# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Threshold presets: which floor a run is held to, where it came from, and what an explicit threshold,
the precision and the transport the log shows change."""

import os

import pytest
import yaml

from ansible_collections.gpuops.cluster.plugins.module_utils.common.values import convert
from ansible_collections.gpuops.cluster.plugins.module_utils.training import presets
from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..")
FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures", "training_logs")
BENCHMARK = "/opt/gpuops/benchmark/gpuops_benchmark.py"
MPIRUN = ["mpirun", "--allow-run-as-root", "-np", "16", "python3", BENCHMARK, "--model", "resnet50"]


def judge(name, **options):
    with open(os.path.join(FIXTURES, name)) as handle:
        return report_from_text(handle.read(), options)


def refusal(**options):
    with pytest.raises(TrainingReportError) as error:
        judge("pytorch_synthetic_1gpu_a100.log", **options)
    return str(error.value)


# Each floor: the published figure times the margin, rounded down.
@pytest.mark.parametrize("name, precision, floor", [
    ("h100-sxm", "amp", 1308), ("h100-sxm", "fp32", 876),
    ("a100-sxm", "amp", 1235), ("a100-sxm", "fp32", 469),
    ("v100", "amp", 600), ("v100", "fp32", 183),
    ("cpu-lab", "fp32", 16),
])
def test_a_preset_holds_each_device_to_its_floor_for_the_precision(name, precision, floor):
    report = judge("pytorch_synthetic_1gpu_a100.log", threshold_preset=name, precision=precision)
    assert report["thresholds"]["min_img_per_sec_per_device"] == floor
    assert report["thresholds"]["origin"]["min_img_per_sec_per_device"] == "preset"
    applied = report["thresholds"]["preset"]["applied"]["min_img_per_sec_per_device"]
    assert applied["floor"] == floor and applied["url"] and applied["figure"]
    assert applied["floor"] <= applied["published"] * applied["margin"] < applied["floor"] + 1


@pytest.mark.parametrize("name, transport, floor", [
    ("h100-sxm", "P2P", 0.79), ("a100-sxm", "P2P", 0.67), ("v100", "P2P", 0.69),
    ("a100-sxm", "NET/IB", 0.72), ("a100-sxm", "NET/Socket", 0.7), ("cpu-lab", "none", 0.1),
])
def test_every_efficiency_floor_is_its_published_figure_times_the_margin(name, transport, floor):
    assert presets.floor(presets.PRESETS[name]["scaling_efficiency"][transport]) == floor


def test_a_run_under_the_presets_floor_fails_naming_it():
    report = judge("horovod_pytorch_16gpu_socket_fallback.log", threshold_preset="h100-sxm", precision="amp")
    assert report["failures"] == ["img/sec per GPU is under the minimum 1308: mean 1318.6; below it: rank 7 (1305.2)"]
    passed = judge("horovod_pytorch_16gpu_socket_fallback.log", threshold_preset="a100-sxm", precision="amp")
    assert passed["passed"] and passed["thresholds"]["min_img_per_sec_per_device"] == 1235


def test_explicit_thresholds_override_the_presets_and_say_so():
    report = judge("horovod_pytorch_16gpu_socket_fallback.log", threshold_preset="a100-sxm", precision="amp",
                   min_img_per_sec_per_device=2000, baseline_img_per_sec=2470, min_scaling_efficiency=0.5,
                   expect_ranks=16)
    thresholds = report["thresholds"]
    assert (thresholds["min_img_per_sec_per_device"], thresholds["min_scaling_efficiency"]) == (2000, 0.5)
    assert thresholds["origin"] == {"expect_ranks": "explicit", "min_img_per_sec_per_device": "explicit",
                                    "min_scaling_efficiency": "explicit"}
    assert thresholds["preset"]["overridden"] == ["min_img_per_sec_per_device", "min_scaling_efficiency"]
    assert thresholds["preset"]["applied"] == {}
    assert report["failures"] == ["img/sec per GPU is under the minimum 2000: mean 1318.6; all 16 ranks are below it"]


def test_an_explicit_floor_per_device_needs_no_precision():
    report = judge("pytorch_synthetic_1gpu_a100.log", threshold_preset="a100-sxm", min_img_per_sec_per_device=2400)
    assert report["passed"] and report["thresholds"]["preset"]["precision"] is None


def test_without_a_preset_the_thresholds_are_todays():
    report = judge("pytorch_synthetic_1gpu_a100.log", min_img_per_sec_per_device=2400)
    assert report["thresholds"]["preset"] is None
    assert report["thresholds"]["origin"] == {"min_img_per_sec_per_device": "explicit"}
    assert not any(line.startswith("thresholds:") for line in summary_lines(report, {}))


def test_an_unknown_preset_is_refused_naming_the_valid_ones():
    message = refusal(threshold_preset="h200")
    assert message == "threshold_preset: 'h200' is not a preset; expected one of a100-sxm, cpu-lab, h100-sxm, v100"


def test_the_t4_is_refused_with_the_reason_it_has_no_preset():
    message = refusal(threshold_preset="t4", precision="amp")
    assert message.startswith("threshold_preset: 't4' is not a preset; expected one of a100-sxm, cpu-lab, h100-sxm, v100")
    assert "no published single-T4 ResNet-50 training throughput was found" in message


def _threshold_options():
    """The thresholds as the input check reads them: the training_verdict role's options."""
    with open(os.path.join(ROOT, "roles", "training_verdict", "meta", "argument_specs.yml")) as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def test_the_input_check_refuses_an_unknown_preset_before_any_change():
    options = _threshold_options()
    dummy, problem = convert("gpuops_training_threshold_preset", "h200", options["gpuops_training_threshold_preset"])
    assert problem.line() == ("gpuops_training_threshold_preset: got 'h200'; expected one of a100-sxm, cpu-lab, "
                              "h100-sxm, v100")
    dummy, problem = convert("gpuops_training_precision", "bf16", options["gpuops_training_precision"])
    assert problem.line() == "gpuops_training_precision: got 'bf16'; expected one of amp, fp32"


@pytest.mark.parametrize("command, precision", [
    (MPIRUN + ["--mixed-precision"], "amp"),
    (MPIRUN + ["--mixed"], "amp"),
    (MPIRUN + ["--mixed-precision", "bf16"], "amp"),
    (MPIRUN + ["--mixed-precision=bf16"], "amp"),
    (MPIRUN, "fp32"),
    (MPIRUN + ["--fp16-allreduce"], "fp32"),
    (["bash", "-c", "python3 %s --batch-size 256 --mixed-precision" % BENCHMARK], "amp"),
])
def test_the_precision_comes_from_the_benchmarks_arguments(command, precision):
    assert presets.precision_from_command(command)[0] == precision
    report = judge("pytorch_synthetic_1gpu_a100.log", threshold_preset="a100-sxm", benchmark_command=command)
    assert report["thresholds"]["preset"]["precision"] == precision
    assert report["thresholds"]["min_img_per_sec_per_device"] == {"amp": 1235, "fp32": 469}[precision]


def test_a_given_precision_wins_over_the_command():
    report = judge("pytorch_synthetic_1gpu_a100.log", threshold_preset="a100-sxm", precision="fp32",
                   benchmark_command=MPIRUN + ["--mixed-precision"])
    assert report["thresholds"]["min_img_per_sec_per_device"] == 469
    assert report["thresholds"]["preset"]["precision_from"] == "given"


@pytest.mark.parametrize("command, why", [
    (None, "no benchmark command was given"),
    (["python", "tf_cnn_benchmarks.py", "--use_fp16"], "the benchmark command does not run gpuops_benchmark.py"),
])
def test_an_unknown_precision_is_an_error_asking_for_it(command, why):
    message = refusal(threshold_preset="a100-sxm", benchmark_command=command)
    assert message.startswith("threshold_preset a100-sxm has a floor per device for each precision (amp, fp32) and "
                              "the precision is not known: " + why)
    assert message.endswith("set precision (gpuops_training_precision) or min_img_per_sec_per_device")


def test_a_precision_the_preset_has_no_floor_for_is_an_error():
    message = refusal(threshold_preset="cpu-lab", precision="amp")
    assert message.startswith("threshold_preset cpu-lab has no amp floor per device, only fp32")


def test_the_efficiency_floor_is_the_one_of_the_transport_the_log_shows():
    over_ib = judge("horovod_pytorch_16gpu_ib_nccl.log", threshold_preset="a100-sxm", precision="amp",
                    baseline_img_per_sec=2470)
    applied = over_ib["thresholds"]["preset"]["applied"]["min_scaling_efficiency"]
    assert (applied["transport"], applied["floor"], over_ib["thresholds"]["min_scaling_efficiency"]) == ("NET/IB", 0.72, 0.72)
    assert over_ib["passed"]
    over_socket = judge("horovod_pytorch_16gpu_socket_fallback.log", threshold_preset="a100-sxm", precision="amp",
                        baseline_img_per_sec=2470)
    assert over_socket["thresholds"]["preset"]["applied"]["min_scaling_efficiency"]["transport"] == "NET/Socket"
    assert over_socket["failures"] == [
        "scaling efficiency 0.534 is under the minimum 0.7 (total 21097.4 img/sec over 16 GPU(s), baseline 2470 per GPU)"]
    inside_a_node = judge("tensorflow2_synthetic_4gpu_v100.log", threshold_preset="v100", precision="fp32",
                          baseline_img_per_sec=367)
    assert inside_a_node["thresholds"]["preset"]["applied"]["min_scaling_efficiency"]["transport"] == "P2P"
    assert inside_a_node["thresholds"]["min_scaling_efficiency"] == 0.69


def test_the_infiniband_examples_baseline_lets_the_h100_presets_net_ib_floor_apply():
    """inventories/examples/dgx-h100-ib gives one GPU's figure, without which the preset's efficiency floor is not
    applied; with it, a run over InfiniBand is held to the NET/IB floor."""
    with open(os.path.join(ROOT, "inventories", "examples", "dgx-h100-ib", "group_vars", "all.yml")) as handle:
        example = yaml.safe_load(handle)
    report = judge("horovod_pytorch_16gpu_ib_nccl.log", threshold_preset=example["gpuops_training_threshold_preset"],
                   baseline_img_per_sec=example["gpuops_training_baseline_img_per_sec"],
                   benchmark_command=["python3", BENCHMARK] + example["kube_job_benchmark_args"])
    preset = report["thresholds"]["preset"]
    assert (preset["name"], preset["precision"]) == ("h100-sxm", "amp")
    assert (preset["applied"]["min_scaling_efficiency"]["transport"], report["thresholds"]["min_scaling_efficiency"]) == (
        "NET/IB", 0.72)
    assert "min_scaling_efficiency" not in preset["not_applied"]


def test_cpu_ranks_without_nccl_have_the_labs_floor():
    report = judge("lab_mpi_2node_4rank_tf.log", threshold_preset="cpu-lab", benchmark_command=["python3", BENCHMARK],
                   baseline_img_per_sec=830.6)
    assert report["thresholds"]["min_img_per_sec_per_device"] == 16
    assert report["thresholds"]["min_scaling_efficiency"] == 0.1
    assert report["passed"] and report["warnings"] == []
    assert "thresholds:  preset cpu-lab, fp32 (the benchmark command has no --mixed-precision): min img/sec per CPU 16 " \
           "(preset); min scaling 0.1 for no NCCL transport (preset)" in summary_lines(report, {})


@pytest.mark.parametrize("name, options, why", [
    ("pytorch_synthetic_1gpu_a100.log", {"baseline_img_per_sec": 2470},
     "the log has no NCCL connection lines to tell the transport (run with NCCL_DEBUG=INFO)"),
    ("horovod_pytorch_16gpu_ib_nccl.log", {},
     "needs baseline_img_per_sec (gpuops_training_baseline_img_per_sec), one device's figure"),
])
def test_an_efficiency_floor_that_cannot_apply_says_why(name, options, why):
    report = judge(name, threshold_preset="a100-sxm", precision="amp", **options)
    assert report["thresholds"]["min_scaling_efficiency"] is None
    assert report["thresholds"]["preset"]["not_applied"] == {"min_scaling_efficiency": why}
    assert "min scaling from the preset not applied: " + why in summary_lines(report, {})[-2]


@pytest.mark.parametrize("transports, slowest", [
    ({"NET/IB": 8, "P2P": 28}, "NET/IB"),
    ({"NET/Socket": 8, "NET/IB": 8, "P2P": 28}, "NET/Socket"),
    ({"SHM": 4, "P2P": 28}, "SHM"),
    ({"P2P": 28}, "P2P"),
    ({"NET/AWS Libfabric": 8, "P2P": 28}, "NET/AWS Libfabric"),
    ({}, "none"),
])
def test_the_slowest_transport_used_bounds_the_scaling(transports, slowest):
    assert presets.bottleneck(transports) == slowest


def test_a_transport_without_a_published_figure_has_no_floor():
    text = "\n".join(line.replace("NET/IB/0", "NET/AWS Libfabric/0") for line in open(
        os.path.join(FIXTURES, "horovod_pytorch_16gpu_ib_nccl.log")).read().splitlines())
    report = report_from_text(text, {"threshold_preset": "a100-sxm", "precision": "amp", "baseline_img_per_sec": 2470})
    assert report["thresholds"]["preset"]["not_applied"] == {
        "min_scaling_efficiency": "preset a100-sxm has no published scaling figure for NET/AWS Libfabric"}


def test_a_run_unlike_the_presets_figures_is_judged_with_a_warning():
    report = judge("tensorflow2_synthetic_4gpu_v100.log", threshold_preset="v100", precision="fp32")
    assert report["passed"]
    assert report["warnings"][-1] == ("preset v100's floors come from batch 112; this run is batch 32: set the "
                                      "thresholds explicitly to judge it on its own terms")
    lab = judge("lab_mpi_2node_4rank_tf.log", threshold_preset="a100-sxm", precision="amp")
    assert lab["warnings"][-1] == ("preset a100-sxm's floors come from resnet50, batch 256, GPU ranks; this run is "
                                   "small_cnn, batch 16, CPU ranks: set the thresholds explicitly to judge it on its "
                                   "own terms")


def test_the_summary_names_the_preset_and_where_each_threshold_came_from():
    report = judge("horovod_pytorch_16gpu_ib_nccl.log", threshold_preset="a100-sxm", expect_ranks=16,
                   benchmark_command=MPIRUN + ["--mixed-precision"], baseline_img_per_sec=2470,
                   require_transport=["NET/IB"])
    assert summary_lines(report, {})[-2] == (
        "thresholds:  preset a100-sxm, amp (--mixed-precision in the benchmark command): ranks 16 (explicit); "
        "min img/sec per GPU 1235 (preset); min scaling 0.72 for NET/IB (preset); required NET/IB (explicit)")


def test_the_roles_choices_are_the_presets():
    options = _threshold_options()
    assert options["gpuops_training_threshold_preset"]["choices"] == list(presets.PRESET_NAMES)
    assert options["gpuops_training_precision"]["choices"] == list(presets.PRECISIONS)


def _guide_tables():
    """The user guide's two preset tables, as presets.py gives them; a figure several presets share is one row."""
    per_device, scaling = {}, {}
    for name in presets.PRESET_NAMES:
        preset = presets.PRESETS[name]
        for precision, figure in sorted(preset["img_per_sec_per_device"].items()):
            batch = ", batch %d" % figure["batch_size"] if figure.get("batch_size") else ""
            row = "%s | %g per %s | %s%s" % (precision, presets.floor(figure), preset["device"], figure["figure"], batch)
            per_device.setdefault((row, figure["margin"], id(figure["source"])), []).append(name)
        for transport in presets.SLOWEST_FIRST + (presets.NO_TRANSPORT,):
            figure = preset["scaling_efficiency"].get(transport)
            if figure:
                row = "%s | %g | %s" % ("no NCCL" if transport == presets.NO_TRANSPORT else transport,
                                        presets.floor(figure), figure["figure"])
                scaling.setdefault((row, figure["margin"], id(figure["source"])), []).append(name)
    sources = dict((id(source), source) for preset in presets.PRESETS.values()
                   for kind in ("img_per_sec_per_device", "scaling_efficiency")
                   for source in (figure["source"] for figure in preset[kind].values()))
    tables = []
    for header, rows in (("| preset | precision | floor | published figure | margin | source |", per_device),
                         ("| preset | transport | floor | published figure | margin | source |", scaling)):
        lines = [header, "| --- | --- | --- | --- | --- | --- |"]
        for (row, margin, source), names in rows.items():
            url = sources[source]["url"]
            # The lab's figures are a page of the collection's docs, beside the guide.
            url = url[len("docs/"):] if url.startswith("docs/") else url
            presets_named = ", ".join("`%s`" % name for name in names)
            lines.append("| %s | %s | %g | [%s](%s) |" % (presets_named, row, margin, sources[source]["title"], url))
        tables.append("\n".join(lines))
    return tables


def test_the_user_guides_tables_are_the_presets():
    with open(os.path.join(ROOT, "docs", "user-guide.md")) as handle:
        guide = handle.read()
    for table in _guide_tables():
        assert table in guide
