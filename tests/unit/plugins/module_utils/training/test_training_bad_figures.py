# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad and unusual input: every message names the file or the line, never a Python exception."""

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.training.errors import TrainingReportError
from ansible_collections.gpuops.cluster.plugins.module_utils.training.run import judge
from ansible_collections.gpuops.cluster.plugins.module_utils.training.verdict import report_from_text

GOOD = "Rank 0: Img/sec per GPU: 100.0 +-1.0\n"


@pytest.mark.parametrize("text, message", [
    ("Rank 0: Iter #0: 10.0 img/sec per GPU\nRank 0: Iter #1: nan img/sec per GPU\n",
     "line 2 of content: the figure nan is not a number of images per second: 'Rank 0: Iter #1: nan img/sec per GPU'"),
    ("[1,0]<stdout>:Rank 0 on a: Iter #0: inf img/sec per CPU\n",
     "line 1 of content: the figure inf is not a number of images per second: 'Rank 0 on a: Iter #0: inf img/sec per CPU'"),
    ("Iter #0: -12.5 img/sec per GPU\n",
     "line 1 of content: the figure -12.5 is negative; images per second cannot be: 'Iter #0: -12.5 img/sec per GPU'"),
    ("Model: x\nRank 3: Img/sec per GPU: NaN +-1.0\n",
     "line 2 of content: the figure NaN is not a number of images per second"),
    ("Rank 0: Img/sec per GPU: 100.0 +-nan\n", "line 1 of content: the spread nan is not a positive number"),
    ("Rank 0: Iter #0: 25000000.0 img/sec per GPU\n",
     "line 1 of content: the figure 25000000.0 is more than 1e+07 img/sec per device, beyond any device"),
    ("[1,0]<stdout>:Rank 0: Iter #0: 3e9 img/sec per GPU\n", "line 1 of content: the figure 3e9 is more than 1e+07"),
    ("Img/sec per GPU: -Infinity +-1.0\n", "line 1 of content: the figure -Infinity is not a number of images per second"),
    ("Total img/sec on 2 GPU(s): 3e7 +-1.0\n", "line 1 of content: the figure 3e7 is more than 1e+07 img/sec per device"),
    ("10\timages/sec: -3.0 +/- 0.1 (jitter = 0.3)\t8.1\n", "line 1 of content: the figure -3.0 is negative"),
    ("total images/sec: inf\n", "line 1 of content: the figure inf is not a number of images per second"),
    ("Total images/sec = 100.0\nsomething\nTotal images/sec = 250.0\n",
     "line 3 of content: a second total, 250.0 img/sec, contradicts the total 100.0 img/sec on line 1: "
     "'Total images/sec = 250.0'"),
    ("mpirun -np 0 python train.py\n" + GOOD,
     "line 1 of content: the launcher's rank count '0' is not a whole number of ranks, 1 or more"),
    ("horovodrun -np four python train.py\n" + GOOD, "the launcher's rank count 'four' is not a whole number of ranks"),
])
def test_a_figure_that_cannot_be_a_measurement_is_refused_naming_its_line(text, message):
    with pytest.raises(TrainingReportError) as error:
        report_from_text(text, {})
    assert message in str(error.value)


def test_the_line_number_counts_physical_lines_with_tags_and_blank_lines():
    text = "[1,0]<stdout>:Model: x\n\n[1,1]<stdout>:Rank 1: Iter #0: [1,0]<stdout>:Rank 0: Iter #0: 9.0 img/sec per GPU\n" \
           "[1,1]<stdout>:-1.0 img/sec per GPU\n"
    with pytest.raises(TrainingReportError) as error:
        report_from_text(text, {})
    assert "line 4 of content: the figure -1.0 is negative" in str(error.value)
    assert "'Rank 1: Iter #0: -1.0 img/sec per GPU'" in str(error.value)


@pytest.mark.parametrize("line", [
    "Total images/sec = 12881.3",
    "total images/sec: 12881.3",
    "Total img/sec: 12881.3 img/sec",
    "TOTAL IMAGES/SEC = 12881.3 images/sec",
    "[1,0]<stdout>:Total images/sec = 12881.3",
    "[1,0]<stdout>:total images/sec: 12881.3",
])
def test_a_wrapper_summary_line_is_the_run_total(line):
    report = report_from_text("mpirun -np 8 --tag-output python wrapper.py\n" + line + "\n", {})
    assert report["img_per_sec_total"]["mean"] == 12881.3
    assert report["img_per_sec_total"]["reported"] == 12881.3
    assert (report["ranks"], report["ranks_source"]) == (8, "the launcher's command line (line 1)")
    assert report["img_per_sec_per_device"]["mean"] == pytest.approx(12881.3 / 8, abs=0.001)


@pytest.mark.parametrize("command, ranks", [
    ("mpirun -np 4 -H a:2,b:2 python bench.py", 4),
    ("+ mpirun --allow-run-as-root -n 8 --tag-output python bench.py", 8),
    ("$ horovodrun --gloo -np 2 -H node1:1,node2:1 python bench.py", 2),
    ("/usr/bin/mpiexec --np 6 python bench.py", 6),
])
def test_the_rank_count_comes_from_the_echoed_command_line_when_nothing_else_states_it(command, ranks):
    report = report_from_text(command + "\nRank 0: Img/sec per GPU: 100.0 +-1.0\n", {"expect_ranks": ranks})
    assert report["ranks"] == ranks
    assert report["ranks_source"] == "the launcher's command line (line 1)"
    # The ranks that did not print are missing from the run, by number.
    assert report["failures"] == ["the run did not finish: no figures at all from rank(s) %s of %d"
                                  % (", ".join(str(rank) for rank in range(1, ranks)), ranks)]


def test_a_stated_rank_count_wins_over_the_command_line():
    report = report_from_text("mpirun -np 4 python bench.py\nNumber of GPUs: 2\n" + GOOD
                              + "Rank 1: Img/sec per GPU: 100.0 +-1.0\nTotal img/sec on 2 GPU(s): 200.0 +-2.0\n", {})
    assert (report["ranks"], report["ranks_source"]) == (2, "Horovod 'Number of GPUs'")


def test_an_echoed_template_is_not_a_rank_count():
    report = report_from_text("mpirun -np $NP python bench.py\n" + GOOD, {})
    assert report["ranks_source"] == "ranks that printed figures"


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize("content, message", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is not UTF-8 text (a binary or compressed file?)"),
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "is not UTF-8 text (a binary or compressed file?)"),
    (b"Model: resnet50\n\x00\x00\x00\x00\n", "line 2 holds a NUL byte: this is a binary file, not a training log"),
    (b"Model: r\xe9snet50\nRank 0: Img/sec per GPU: 1.0 +-0.1\n", "is not UTF-8 text"),
    (b"", "the training log is empty"),
])
def test_a_file_that_is_no_log_is_refused_naming_it(tmp_path, content, message):
    path = write(tmp_path, "bench.log", content)
    with pytest.raises(TrainingReportError) as error:
        judge({"src": path})
    assert message in str(error.value)
    if "empty" not in message:
        assert path in str(error.value)


def test_a_directory_or_a_missing_file_is_named(tmp_path):
    with pytest.raises(TrainingReportError) as error:
        judge({"src": str(tmp_path)})
    assert str(error.value) == "src: %s is a directory; expected the benchmark's log file" % tmp_path
    with pytest.raises(TrainingReportError) as error:
        judge({"src": str(tmp_path / "gone.log")})
    assert str(error.value) == "src: %s does not exist; expected the benchmark's log file" % (tmp_path / "gone.log")


def test_a_truncated_last_line_is_a_warning_naming_its_rank(tmp_path):
    path = write(tmp_path, "bench.log", b"[1,0]<stdout>:Rank 0: Img/sec per GPU: 100.0 +-1.0\n"
                                        b"[1,1]<stdout>:Rank 1: Img/sec per GPU: 99.0 +-1.0\n[1,1]<stdout>:Rank 1: Iter #7: 9")
    report = judge({"src": path})
    assert "the log ends in the middle of a line from rank(s) 1" in report["warnings"]


def test_windows_line_ends_and_a_file_read_in_one_pass_give_the_text_verdict(tmp_path):
    text = "[1,0]<stdout>:Rank 0 on a: Iter #0: 10.0 img/sec per CPU\r\n[1,0]<stdout>:Rank 0 on a: Img/sec per CPU: 10.0 +-0.0\r\n"
    path = write(tmp_path, "bench.log", text.encode("utf-8"))
    from_file = judge({"src": path})
    assert from_file["per_rank"] == report_from_text(text, {})["per_rank"]
    assert from_file["per_rank"][0]["host"] == "a"
