"""The verdict from DLLogger's lines, as NVIDIA's training programs print them (the ResNet-50 v1.5 benchmark that
DGX procedures run in their MPIJob): its standard output under mpirun, and its JSON stream. The 16-GPU log is
constructed (tests/unit/fixtures/training_logs/README.md)."""

import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")


def _fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def _json_line(step, **data):
    import json
    return "DLLL " + json.dumps({"timestamp": "1749550401.12", "elapsedtime": "81.2", "datetime": "2025-06-10 10:13:21",
                                 "type": "LOG", "step": step, "data": data})


def test_the_summary_total_ips_of_sixteen_gpus_is_the_runs_total():
    text = _fixture("dllogger_resnet50_16gpu_a100.log")
    report = report_from_text(text, {"require_transport": ["NET/IB"], "expect_ranks": 16})
    summary_line = text.splitlines().index(
        "[1,0]<stdout>:DLL 2025-06-10 10:13:21.480912 - Summary: train.loss : 6.93052  train.total_ips : 45812.60 "
        "images/s train.compute_ips : 45904.23 images/s ") + 1
    assert report["ranks"] == 16 and report["passed"], report["failures"]
    # The program's PARAMETER step names the model and the batch per GPU.
    assert (report["model"], report["batch_size"]) == ("resnet50", 256)
    assert report["img_per_sec_total"]["mean"] == 45812.6
    assert report["img_per_sec_total"]["source"] == "DLLogger's summary total_ips (line %d)" % summary_line
    assert report["img_per_sec_per_device"]["mean"] == pytest.approx(45812.6 / 16, rel=1e-3)
    assert report["img_per_sec_per_device"]["source"] == "printed total / 16 devices"
    assert "dllogger" in report["sources"]
    assert report["transports"] == {"NET/IB": 2, "P2P": 2}
    # A printed total has no spread between iterations: the summary shows none, rather than +-0.0.
    images = [line for line in summary_lines(report, {}) if "in total" in line]
    assert len(images) == 1 and images[0].endswith("45812.6 in total, 2863.3 per device"), images


def test_a_run_stopped_before_its_summary_is_judged_on_its_steps():
    text = "\n".join([_json_line([0, 10], **{"train.loss": 6.9, "train.total_ips": 2800.0}),
                      _json_line([0, 20], **{"train.loss": 6.8, "train.total_ips": 3000.0}),
                      _json_line("PARAMETER", arch="resnet50")])
    report = report_from_text(text, {"expect_ranks": 1})
    assert report["img_per_sec_total"]["mean"] == 2900.0
    assert report["img_per_sec_total"]["source"] == "the mean total_ips of DLLogger's 2 step(s), no summary"


def test_the_json_streams_summary_wins_over_its_steps():
    text = "\n".join([_json_line([0, 10], total_ips=2800.0), _json_line([], total_ips=2950.5)])
    report = report_from_text(text, {"expect_ranks": 1})
    assert report["img_per_sec_total"]["mean"] == 2950.5
    assert report["img_per_sec_total"]["source"] == "DLLogger's summary total_ips (line 2)"


@pytest.mark.parametrize("line, problem", [
    ("DLLL {\"step\": [], \"data\": {\"train.total_ips\": ", "a DLLogger line that is not JSON"),
    ("DLLL [1, 2]", "a DLLogger line that is not a JSON object"),
    (_json_line([], **{"train.total_ips": -5.0}), "the figure -5.0 is negative"),
    ("DLL 2025-06-10 10:13:21.480912 - Summary: train.total_ips : nan images/s", "the figure nan is not a number"),
])
def test_a_broken_dllogger_line_is_refused_naming_it(line, problem):
    with pytest.raises(TrainingReportError) as refused:
        report_from_text(line + "\n", {})
    assert str(refused.value).startswith("line 1 of content: " + problem), str(refused.value)
