# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failed lab test's logs are copied out: the lab's, the test's own readable files, every pod's log."""

import json
import os
import subprocess

from gpuops_testlib import kept_logs

PODS = {"items": [{"metadata": {"namespace": "default", "name": "bench-launcher"}},
                  {"metadata": {"namespace": "mpi-operator", "name": "gone"}}]}


def fake_kubectl(*args, check=True):
    assert check is False and args[-1].startswith("--request-timeout=")
    args = args[:-1]
    if args == ("get", "pods", "-A", "-o", "json"):
        return subprocess.CompletedProcess(args, 0, json.dumps(PODS), "")
    if args[0] == "logs" and args[3] == "gone":
        return subprocess.CompletedProcess(args, 1, "", 'pods "gone" not found')
    if args[0] == "logs":
        return subprocess.CompletedProcess(args, 0, "rank 0: Total img/sec on 2 CPU(s): 1.0\n", "")
    return subprocess.CompletedProcess(args, 0, "listed %s\n" % args[1], "")


def test_the_lab_logs_the_tests_readable_files_and_every_pods_log_are_kept(tmp_path, monkeypatch):
    lab = tmp_path / "lab"
    (lab / "logs").mkdir(parents=True)
    (lab / "logs" / "site.log").write_text("PLAY RECAP\n")
    (lab / "training").mkdir()
    (lab / "training" / "mpijob.json").write_text("{}")
    scratch = tmp_path / "scratch"
    (scratch / "cache" / "training").mkdir(parents=True)
    (scratch / "cache" / "training" / "run.log").write_text("the run's log\n")
    (scratch / "image.tar").write_bytes(b"not a log")
    monkeypatch.setattr(kept_logs, "LAB_DIR", str(lab))
    monkeypatch.setattr(kept_logs, "KEPT_ROOT", str(tmp_path / "kept"))

    kept = kept_logs.keep_what_explains("tests/e2e/test_x.py::test_y[a b]", scratch=scratch, kubectl=fake_kubectl)

    assert kept == str(tmp_path / "kept" / "tests_e2e_test_x.py_test_y_a_b")
    found = sorted(os.path.relpath(os.path.join(folder, name), kept)
                   for folder, _dirs, files in os.walk(kept) for name in files)
    assert found == ["api/events.txt", "api/logs/default/bench-launcher.log", "api/logs/mpi-operator/gone.log",
                     "api/pods.txt", "lab/logs/site.log", "lab/training/mpijob.json", "not-kept.txt",
                     "tmp_path/cache/training/run.log"]
    with open(os.path.join(kept, "api", "logs", "default", "bench-launcher.log"), encoding="utf-8") as handle:
        assert "Total img/sec" in handle.read()
    with open(os.path.join(kept, "not-kept.txt"), encoding="utf-8") as handle:
        assert handle.read() == 'mpi-operator/gone: pods "gone" not found\n'


def test_a_kubectl_that_cannot_run_leaves_the_files_kept_and_says_why(tmp_path, monkeypatch):
    def no_kubectl(*args, check=True):
        raise subprocess.CalledProcessError(1, ["bash", "tools/build_kube_binaries.sh", "--print-dir"])
    monkeypatch.setattr(kept_logs, "LAB_DIR", str(tmp_path / "no-lab"))
    monkeypatch.setattr(kept_logs, "KEPT_ROOT", str(tmp_path / "kept"))

    kept = kept_logs.keep_what_explains("t", kubectl=no_kubectl)

    with open(os.path.join(kept, "not-kept.txt"), encoding="utf-8") as handle:
        assert handle.read().startswith("the pods' logs: kubectl get pods failed: Command '['bash'")
