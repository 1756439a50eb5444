# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sweep's report from per-size reports that training_report wrote from logs the lab recorded at 1, 2 and 4
ranks: figures, efficiency, floors, a failed size, the table, the files, and the module's bad input."""

import json
import os

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.run import run_training_report
from ansible_collections.gpuops.cluster.plugins.module_utils.training.sweep import build_sweep, run_training_sweep
from ansible_collections.gpuops.cluster.plugins.modules import training_sweep

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")
RECORDED = {1: "lab_gloo_1node_tf.log", 2: "lab_mpi_1node_2rank_tf.log", 4: "lab_mpi_2node_4rank_tf.log"}
KILLED = "lab_mpi_2node_rank_killed.log"


def size_report(tmp_path, ranks, log=None):
    """A size as the sweep role gives it: the report training_report wrote of its log, and its failures."""
    path = str(tmp_path / ("size-%d.json" % ranks))
    run_training_report({"src": os.path.join(FIXTURES, log or RECORDED[ranks]), "expect_ranks": ranks, "report_path": path})
    return {"ranks": ranks, "report_path": path, "failures": []}


@pytest.fixture
def sizes(tmp_path):
    return [size_report(tmp_path, ranks) for ranks in (1, 2, 4)]


def test_figures_and_efficiency_against_the_one_rank_run(sizes):
    sweep = build_sweep({"sizes": sizes})
    reports = [json.load(open(size["report_path"])) for size in sizes]
    one = reports[0]["img_per_sec_total"]["mean"]
    assert sweep["passed"] and sweep["baseline_ranks"] == 1
    for row, report in zip(sweep["sizes"], reports):
        total = report["img_per_sec_total"]["mean"]
        assert row["img_per_sec_total"] == total
        assert row["img_per_sec_per_rank"] == pytest.approx(total / row["ranks"], abs=0.001)
        assert row["ideal_img_per_sec"] == pytest.approx(one * row["ranks"], abs=0.001)
        assert row["scaling_efficiency"] == pytest.approx(total / (one * row["ranks"]), abs=0.0001)
        assert row["transport"] == "no NCCL: CPU ranks"
    assert sweep["sizes"][0]["scaling_efficiency"] == 1.0


def test_without_a_one_rank_run_the_smallest_size_is_the_baseline_and_says_so(sizes):
    sweep = build_sweep({"sizes": sizes[1:]})
    assert sweep["baseline_ranks"] == 2
    assert sweep["baseline_note"].startswith("2 ranks, the smallest size (the sweep has no 1-rank run), ")
    two = sweep["sizes"][0]["img_per_sec_per_rank"]
    assert sweep["sizes"][1]["scaling_efficiency"] == pytest.approx(sweep["sizes"][1]["img_per_sec_per_rank"] / two, abs=0.0001)


def test_floors_pass_and_fail_by_size(sizes):
    assert build_sweep({"sizes": sizes, "min_efficiency": {2: 0.7}})["passed"]
    sweep = build_sweep({"sizes": sizes, "min_efficiency": 0.5})
    assert not sweep["passed"]
    efficiency = sweep["sizes"][2]["scaling_efficiency"]
    assert sweep["failures"] == ["4 ranks: scaling efficiency %.2f is under the floor 0.5 (%.1f img/sec per rank, "
                                 "830.6 at 1 rank)" % (efficiency, sweep["sizes"][2]["img_per_sec_per_rank"])]
    assert [row["min_efficiency"] for row in sweep["sizes"]] == [0.5, 0.5, 0.5]


def test_a_failed_size_is_reported_with_its_reasons_and_the_others_all_the_same(tmp_path, sizes):
    killed = size_report(tmp_path, 4, KILLED)
    killed["failures"] = ["Slurm job 12 is FAILED: it ended with a non-zero exit code\nits output ends: ..."]
    never_ran = {"ranks": 8, "report_path": None, "failures": ["sbatch: error: Invalid partition name specified"]}
    sweep = build_sweep({"sizes": sizes[:2] + [killed, never_ran], "min_efficiency": {4: 0.5, 8: 0.5}})
    rows = dict((row["ranks"], row) for row in sweep["sizes"])
    assert rows[1]["passed"] and rows[2]["passed"] and not rows[4]["passed"] and not rows[8]["passed"]
    # An unfinished run has no figures of its size; the failure says why, not a floor it could not be held to.
    assert rows[4]["img_per_sec_total"] is None and rows[4]["complete"] is False
    assert sweep["failures"] == ["4 ranks: Slurm job 12 is FAILED: it ended with a non-zero exit code\nits output ends: ...",
                                 "8 ranks: sbatch: error: Invalid partition name specified"]
    assert sweep["summary"][1] == ("failures:    4 ranks: Slurm job 12 is FAILED: it ended with a non-zero exit code; "
                                   "8 ranks: sbatch: error: Invalid partition name specified")


def test_a_run_under_a_per_run_threshold_fails_with_the_verdicts_words(tmp_path):
    path = str(tmp_path / "two.json")
    verdict = run_training_report({"src": os.path.join(FIXTURES, RECORDED[2]), "expect_ranks": 2, "report_path": path,
                                   "min_img_per_sec_per_device": 100000})
    assert not verdict["passed"]
    sweep = build_sweep({"sizes": [{"ranks": 2, "report_path": path, "failures": []}]})
    assert sweep["failures"] == ["2 ranks: " + "; ".join(verdict["failures"])]
    # Its figures are still shown: the run finished.
    assert sweep["sizes"][0]["img_per_sec_total"] == verdict["img_per_sec_total"]["mean"]


def test_the_table_a_person_reads(tmp_path, sizes):
    lines = build_sweep({"sizes": sizes, "min_efficiency": {2: 0.7}, "launched_by": "slurm launcher",
                         "report_path": str(tmp_path / "sweep.json"), "chart_path": str(tmp_path / "sweep.png")})["summary"]
    rows = build_sweep({"sizes": sizes})["sizes"]
    assert lines[0] == "sweep:       PASSED (3 sizes, slurm launcher)"
    assert lines[1] == "baseline:    1 rank, %.1f img/sec per rank" % rows[0]["img_per_sec_per_rank"]
    assert lines[2] == "sizes:       ranks   img/sec  per rank     ideal efficiency floor  result"
    assert lines[3] == "                 1 %9.1f %9.1f %9.1f       1.00     -  passed" % (
        rows[0]["img_per_sec_total"], rows[0]["img_per_sec_per_rank"], rows[0]["ideal_img_per_sec"])
    assert lines[4].endswith("%10.2f  0.70  passed" % rows[1]["scaling_efficiency"])
    assert lines[6:] == ["transport:   no NCCL: CPU ranks", "report:      %s" % (tmp_path / "sweep.json"),
                         "chart:       %s" % (tmp_path / "sweep.png")]
    # A person reads it in an 80-column terminal.
    assert max(len(line) for line in lines[2:6]) <= 80


def test_the_files_are_written_once_and_check_mode_writes_nothing(tmp_path, sizes):
    options = {"sizes": sizes, "report_path": str(tmp_path / "sweep.json"), "chart_path": str(tmp_path / "sweep.png")}
    assert run_training_sweep(options, check_mode=True)["changed"]
    assert not (tmp_path / "sweep.json").exists() and not (tmp_path / "sweep.png").exists()
    result = run_training_sweep(options, diff=True)
    assert result["changed"] and result["diff"][0]["before"] == ""
    written = json.loads((tmp_path / "sweep.json").read_text())
    assert written["summary"] == result["summary"] and [row["ranks"] for row in written["sizes"]] == [1, 2, 4]
    assert (tmp_path / "sweep.png").read_bytes().startswith(b"\x89PNG\r\n")
    assert not run_training_sweep(options)["changed"]


@pytest.mark.parametrize("options, expected", [
    ({"sizes": []}, "sizes' ranks: got []; expected a list of sizes in ranks"),
    ({"sizes": [{"ranks": 2}, {"ranks": 2}]}, "sizes' ranks: got [2, 2]"),
    ({"sizes": [{"ranks": 0}]}, "sizes' ranks: got [0]"),
    ({"sizes": [{"ranks": 1}], "min_efficiency": 0}, "min_efficiency: got 0; expected a share above 0 and at most 1"),
    ({"sizes": [{"ranks": 1}], "min_efficiency": {2: 0.9}}, "the sweep's sizes are [1]"),
    ({"sizes": [{"ranks": 1}], "report_path": "/no/such/folder/sweep.json"}, "report_path: directory /no/such/folder does not exist"),
])
def test_bad_input_is_refused_before_anything_is_read(options, expected):
    with pytest.raises(TrainingReportError) as refused:
        build_sweep(options)
    assert expected in str(refused.value)


def run_module(args, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exit_info:
            training_sweep.main()
    return exit_info.value.code, json.loads(capsys.readouterr().out)


def test_the_module_fails_listing_every_reason_with_the_table(capsys, sizes):
    code, result = run_module({"sizes": sizes, "min_efficiency": 0.5}, capsys)
    assert code == 1 and result["failed"] and not result["passed"]
    assert result["msg"].startswith("scaling sweep: 4 ranks: scaling efficiency ")
    assert result["summary"][0].startswith("sweep:       FAILED")
    code, result = run_module({"sizes": [{"ranks": 1}, {"ranks": 1}]}, capsys)
    assert code == 1 and result["summary"][0] == "sweep:       FAILED" and "sizes' ranks: got [1, 1]" in result["msg"]
