# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rank census: the hosts a log names for the ranks, against the placement the launcher asked for."""

import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.summary import summary_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "training_logs")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def placement_line(report):
    return [line for line in summary_lines(report, {}) if line.startswith("placement:")]


def test_ranks_where_the_launcher_placed_them_pass_and_the_summary_says_so():
    # An MPIJob's 4 ranks, 2 on each of two lab nodes.
    report = report_from_text(fixture("lab_mpi_2node_4rank_tf.log"), {"expect_ranks": 4, "expect_placement": [2, 2]})
    assert report["passed"], report["failures"]
    assert report["placement"] == {"hosts": {"node1": 2, "node2": 2}, "ranks_named": 4, "expected": [2, 2]}
    assert placement_line(report) == [
        "placement:   2 hosts (node1: 2 ranks, node2: 2 ranks), as the launcher placed them (2 hosts of 2 ranks each)"]


def test_a_real_mpijob_whose_mpirun_put_every_rank_on_one_worker_completes_and_fails_the_census():
    report = report_from_text(fixture("lab_mpijob_every_rank_on_one_worker.log"),
                              {"expect_ranks": 4, "expect_placement": [2, 2]})
    assert report["complete"] and report["ranks"] == 4
    assert report["failures"] == [
        "the ranks ran on 1 host (ppr2-worker-0: 4 ranks); the launcher placed them on 2 hosts of 2 ranks each"]


def test_every_rank_on_one_host_fails_naming_the_hosts_seen():
    # The same run, as an mpirun that ignored the host file would leave it: every rank on the first node.
    text = fixture("lab_mpi_2node_4rank_tf.log").replace("on node2:", "on node1:")
    report = report_from_text(text, {"expect_ranks": 4, "expect_placement": [2, 2]})
    assert report["failures"] == [
        "the ranks ran on 1 host (node1: 4 ranks); the launcher placed them on 2 hosts of 2 ranks each"]
    assert placement_line(report) == [
        "placement:   1 host (node1: 4 ranks), not as the launcher placed them (2 hosts of 2 ranks each)"]


def test_hosts_of_unequal_counts_are_compared_as_counts_whatever_their_order():
    text = fixture("lab_mpi_2node_4rank_tf.log")
    assert report_from_text(text, {"expect_placement": [2, 2]})["passed"]
    failed = report_from_text(text, {"expect_placement": [3, 1]})
    assert failed["failures"] == [
        "the ranks ran on 2 hosts (node1: 2 ranks, node2: 2 ranks); the launcher placed them on 2 hosts of 3 and 1 ranks"]
    assert report_from_text(text, {"expect_placement": [1, 2, 1]})["failures"][0].endswith(
        "the launcher placed them on 3 hosts of 1, 2 and 1 ranks")


def test_a_log_that_names_no_rank_host_is_not_judged_and_says_so():
    report = report_from_text(fixture("pytorch_synthetic_1gpu_a100.log"), {"expect_placement": [1]})
    assert report["passed"]
    assert report["placement"] == {"hosts": {}, "ranks_named": 0, "expected": [1]}
    assert "the placement of the ranks was not judged: the log names the host of 0 of 1 ranks" in report["warnings"]
    assert placement_line(report) == ["placement:   not judged: the log names no rank's host"]


def test_a_log_of_fewer_ranks_fails_on_the_count_alone_and_the_placement_says_why_it_was_not_judged():
    # Two ranks of a run placed as two hosts of two: the rank count fails it, and says what happened.
    report = report_from_text(fixture("lab_gloo_2node_tf.log"), {"expect_ranks": 4, "expect_placement": [2, 2]})
    assert report["failures"] == ["expected 4 ranks, the log shows 2 (from Horovod 'Number of CPUs')"]
    assert "the placement of the ranks was not judged: the log shows 2 ranks where the launcher placed 4" \
        in report["warnings"]
    assert placement_line(report) == [
        "placement:   2 hosts (node1: 1 rank, node2: 1 rank); not judged: the log shows 2 ranks where the launcher "
        "placed 4"]


def test_without_a_placement_asked_the_hosts_are_shown_and_nothing_is_judged():
    text = fixture("lab_mpi_2node_4rank_tf.log").replace("on node2:", "on node1:")
    report = report_from_text(text, {})
    assert report["passed"]
    assert placement_line(report) == ["placement:   1 host (node1: 4 ranks)"]


@pytest.mark.parametrize("options, problem", [
    ({"expect_placement": [2, 0]}, "expect_placement must list each host's ranks, 1 or more each, such as [8, 8], "
                                   "got [2, 0]"),
    ({"expect_placement": []}, "expect_placement must list each host's ranks, 1 or more each, such as [8, 8], got []"),
    ({"expect_placement": [8, 8], "expect_ranks": 8}, "expect_placement places 16 ranks (8 + 8) but expect_ranks is 8"),
])
def test_a_placement_that_cannot_be_is_refused_before_the_log_is_read(options, problem):
    with pytest.raises(TrainingReportError) as raised:
        report_from_text("not a log", options)
    assert problem in str(raised.value)
