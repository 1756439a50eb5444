# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A baseline given as the report of a run the collection judged: its figure per device, and what makes it another
kind of run than the one it is the baseline of."""

import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.report_file import report_json
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")
LAB_COMMAND = ["/opt/gpuops/venv/bin/python3", "/opt/gpuops/benchmark/gpuops_benchmark.py", "--model", "small_cnn"]


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def judged_to_file(tmp_path, log, options=None):
    """The report of a fixture log, written where a launcher's verdict writes it; returns the path."""
    path = tmp_path / (log.replace(".log", ".json"))
    path.write_text(report_json(report_from_text(fixture(log), dict({"benchmark_command": LAB_COMMAND}, **(options or {})))))
    return str(path)


def test_the_lab_baseline_report_gives_the_figure_per_device_and_the_summary_names_it(tmp_path):
    # One rank alone on node1, then one rank on each of two nodes: the lab's own pair of runs.
    baseline_path = judged_to_file(tmp_path, "lab_gloo_1node_tf.log")
    alone = report_from_text(fixture("lab_gloo_1node_tf.log"), {})
    report = report_from_text(fixture("lab_gloo_2node_tf.log"), {
        "baseline_report": baseline_path, "benchmark_command": LAB_COMMAND, "min_scaling_efficiency": 0.01})
    assert report["passed"], report["failures"]
    assert report["baseline_img_per_sec"] == alone["img_per_sec_per_device"]["mean"]
    assert report["scaling_efficiency"] == pytest.approx(
        report["img_per_sec_total"]["mean"] / (2 * alone["img_per_sec_per_device"]["mean"]), rel=1e-3)
    assert report["baseline"]["path"] == baseline_path and report["baseline"]["precision"] == "fp32"
    assert not [warning for warning in report["warnings"] if "baseline" in warning]
    [scaling] = [line for line in summary_lines(report, {}) if line.startswith("scaling:")]
    assert scaling == "scaling:     %.2f of linear (baseline %.1f img/sec on one CPU, measured in %s)" % (
        report["scaling_efficiency"], alone["img_per_sec_per_device"]["mean"], baseline_path)


def test_a_baseline_of_another_framework_precision_and_size_is_named_in_a_warning(tmp_path):
    # torchrun's two Gloo ranks on CPUs (the same model and batch size), in mixed precision: another framework and
    # precision, and two devices.
    baseline_path = judged_to_file(tmp_path, "torchrun_ddp_gloo_cpu_2rank.log", {
        "benchmark_command": LAB_COMMAND + ["--mixed-precision", "bf16"]})
    report = report_from_text(fixture("lab_gloo_2node_tf.log"), {
        "baseline_report": baseline_path, "benchmark_command": LAB_COMMAND})
    warnings = [warning for warning in report["warnings"] if "baseline" in warning]
    assert warnings == [
        "the baseline (%s) is another kind of run: framework pytorch there, tensorflow here; precision amp there, fp32 "
        "here; the scaling efficiency compares unlike runs" % baseline_path,
        "the baseline (%s) ran on 2 devices, not one: its figure per device stands in for one device alone"
        % baseline_path]


@pytest.mark.parametrize("content, problem", [
    (None, "cannot be read (No such file or directory)"),
    ("{not json", "is not JSON"),
    ('{"ranks": 1, "img_per_sec_per_device": {"mean": null}}', "holds no figure per device (img_per_sec_per_device.mean)"),
    ('{"complete": false, "img_per_sec_per_device": {"mean": 700.0}}', "is the report of a run that did not finish"),
])
def test_a_baseline_report_that_gives_no_figure_is_refused_naming_the_option(tmp_path, content, problem):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(TrainingReportError) as raised:
        report_from_text(fixture("lab_gloo_2node_tf.log"), {"baseline_report": str(path)})
    assert str(raised.value) == "baseline_report: %s %s; expected the JSON report of a run on one device, such as " \
                                "<cache>/training/gpuops-baseline.json" % (path, problem)


def test_a_baseline_given_twice_is_refused_before_anything_is_read(tmp_path):
    with pytest.raises(TrainingReportError) as raised:
        report_from_text("not a log", {"baseline_report": str(tmp_path / "absent.json"), "baseline_img_per_sec": 700.0})
    assert "baseline_report and baseline_img_per_sec both give the baseline; give one" in str(raised.value)
