# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/scaling_sweep.yml through the Slurm launcher, on this machine as its own login host, against the Slurm
stand-ins (gpuops_testlib.fake_slurm): each size's job prints the log the lab recorded at that many ranks
(tests/unit/fixtures/training_logs), so the plan, the launcher run per size with its own job, log and report, the
failed size that does not stop the others, the sweep's report, chart and table, check mode and the inputs refused
before any job all run for real without Slurm."""

import getpass
import json
import os
import sys
from pathlib import Path

import yaml

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook
from gpuops_testlib.fake_slurm import write_fake_slurm

SWEEP = os.path.join(REPO_ROOT, "playbooks", "scaling_sweep.yml")
LOGS = Path(REPO_ROOT) / "tests" / "unit" / "fixtures" / "training_logs"
# What the job at each size prints, as the lab recorded it.
RECORDED = {1: "lab_gloo_1node_tf.log", 2: "lab_mpi_1node_2rank_tf.log", 4: "lab_mpi_2node_4rank_tf.log"}
KILLED = "lab_mpi_2node_rank_killed.log"


def program(folder, killed=()):
    """The program every job runs: the recorded log of its size (read from the batch script's --ntasks-per-node and
    --nodes), or for a size in `killed` the log of a run whose rank was killed, exiting as it did."""
    lines = ["#!/bin/sh", "script=$(ls -t *.sbatch | head -n 1)",
             "nodes=$(sed -n 's/^#SBATCH --nodes=//p' \"$script\")",
             "tasks=$(sed -n 's/^#SBATCH --ntasks-per-node=//p' \"$script\")",
             "case $((nodes * tasks)) in"]
    for ranks, name in sorted(RECORDED.items()):
        if ranks in killed:
            lines.append("  %d) cat %s; exit 137;;" % (ranks, LOGS / KILLED))
        else:
            lines.append("  %d) cat %s;;" % (ranks, LOGS / name))
    lines.append("esac")
    path = Path(folder) / "benchmark.sh"
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return str(path)


def sweep(tmp_path, extra, check=False, killed=(), **host_vars):
    """scaling_sweep.yml with gpuops_launcher=slurm, the launcher's variables in the inventory (as a site gives
    them: the sweep sets each size's over them); (the run, the stand-ins' calls)."""
    state = tmp_path / "slurm"
    state.mkdir()
    write_fake_slurm(tmp_path / "bin")
    login = dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                  "ansible_user": getpass.getuser(), "slurm_launcher_nodes": 2, "slurm_launcher_tasks_per_node": 2,
                  "slurm_launcher_work_dir": str(tmp_path / "work"), "gpuops_sweep_dir": str(tmp_path / "logs"),
                  "slurm_launcher_python": "/bin/sh", "slurm_launcher_program": program(tmp_path, killed),
                  "slurm_launcher_poll_interval": 0.2, "gpuops_training_expect_ranks": 4}, **host_vars)
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {"login01": login}}}}}))
    env = ansible_env(path_prefix=tmp_path / "bin", FAKE_SLURM=state)
    done = run_playbook(SWEEP, inventory, dict({"gpuops_launcher": "slurm"}, **extra), ["--check"] if check else [],
                        env=env, timeout=600)
    calls_file = state / "calls"
    calls = [json.loads(line) for line in calls_file.read_text().splitlines()] if calls_file.exists() else []
    return done, calls


def test_a_sweep_runs_each_size_as_its_own_job_and_reports_them_together(tmp_path):
    done, calls = sweep(tmp_path, {"gpuops_sweep_ranks": [4, 1, 2], "gpuops_sweep_min_efficiency": {2: 0.5}})
    assert done.rc == 0, done.explain()
    assert [call[0] for call in calls].count("sbatch") == 3
    logs = tmp_path / "logs"
    # Smallest first, each size on the fewest nodes, with a job, a log and a report of its own.
    for ranks, nodes, tasks, name in ((1, 1, 1, "gpuops-sweep-1rank"), (2, 1, 2, "gpuops-sweep-2ranks"),
                                      (4, 2, 2, "gpuops-sweep-4ranks")):
        script = (tmp_path / "work" / (name + ".sbatch")).read_text()
        assert "#SBATCH --job-name=%s\n" % name in script
        assert "#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=%d\n" % (nodes, tasks) in script
        assert (logs / (name + ".log")).read_text() == (LOGS / RECORDED[ranks]).read_text()
        assert json.loads((logs / (name + ".json")).read_text())["ranks"] == ranks
    report = json.loads((logs / "gpuops-sweep.json").read_text())
    assert report["passed"] and report["baseline_ranks"] == 1
    assert [row["ranks"] for row in report["sizes"]] == [1, 2, 4]
    assert (logs / "gpuops-sweep.png").read_bytes().startswith(b"\x89PNG")
    printed = done.result("Print the sweep", "login01")["msg"]
    assert printed == report["summary"]
    assert printed[0].startswith("sweep:       PASSED (3 sizes")
    assert printed[-2:] == ["report:      %s" % (logs / "gpuops-sweep.json"), "chart:       %s" % (logs / "gpuops-sweep.png")]


def test_a_failed_size_does_not_stop_the_others_and_the_play_fails_at_the_end(tmp_path):
    done, calls = sweep(tmp_path, {"gpuops_sweep_ranks": [1, 2, 4], "gpuops_sweep_min_efficiency": 0.9}, killed=(4,))
    assert done.rc != 0
    assert [call[0] for call in calls].count("sbatch") == 3
    report = json.loads((tmp_path / "logs" / "gpuops-sweep.json").read_text())
    rows = dict((row["ranks"], row) for row in report["sizes"])
    assert rows[1]["passed"] and rows[2]["passed"] and not rows[4]["passed"]
    assert rows[4]["failures"][0].startswith("Slurm job 4244 is FAILED")
    assert report["failures"][0].startswith("4 ranks: Slurm job 4244 is FAILED")
    assert report["failures"][1].startswith("2 ranks: scaling efficiency 0.74 is under the floor 0.9")
    # The killed run's own log and report are kept beside the others.
    assert (tmp_path / "logs" / "gpuops-sweep-4ranks.log").read_text() == (LOGS / KILLED).read_text()
    assert [name for name, _result in done.failed("login01")][-1] == "Fail when a size failed or an efficiency floor is unmet"
    assert done.result("Print the sweep", "login01")["msg"][0].startswith("sweep:       FAILED (3 sizes")


def test_check_mode_says_what_would_run_and_runs_nothing(tmp_path):
    done, calls = sweep(tmp_path, {"gpuops_sweep_ranks": [1, 2, 4]}, check=True)
    assert done.rc == 0, done.explain()
    assert calls == [] and not (tmp_path / "logs").exists() and not (tmp_path / "work").exists()
    shown = done.result("Show the sizes that would run (check mode, nothing runs)", "login01")["msg"]
    assert [line.split(",")[0] for line in shown] == [
        "1 rank(s): 1 node(s) x 1 task(s)", "2 rank(s): 1 node(s) x 2 task(s)", "4 rank(s): 2 node(s) x 2 task(s)"]


def test_bad_sizes_and_floors_are_refused_before_any_job(tmp_path):
    done, calls = sweep(tmp_path, {"gpuops_sweep_ranks": [0, 2, 2], "gpuops_sweep_min_efficiency": 1.5})
    assert done.rc != 0 and calls == []
    message = done.failed("login01")[0][1]["msg"]
    assert "gpuops_sweep_ranks: got [0, 2, 2]; expected a list of sizes in ranks" in message
    assert "gpuops_sweep_min_efficiency: got 1.5; expected a share above 0 and at most 1" in message


def test_a_size_variable_given_with_e_is_refused_before_any_job(tmp_path):
    done, calls = sweep(tmp_path, {"gpuops_sweep_ranks": [1, 2], "slurm_launcher_nodes": 2})
    assert done.rc != 0 and calls == []
    assert done.failed("login01")[0][1]["msg"].startswith("slurm_launcher_nodes: given as an extra variable (-e)")


def test_a_transport_between_nodes_is_required_only_of_the_sizes_that_span_nodes(tmp_path):
    done, calls = sweep(tmp_path, {"gpuops_sweep_ranks": [1, 4]}, gpuops_training_require_transport=["NET/Socket"])
    assert done.rc != 0
    assert [call[0] for call in calls].count("sbatch") == 2
    rows = dict((row["ranks"], row) for row in json.loads((tmp_path / "logs" / "gpuops-sweep.json").read_text())["sizes"])
    # One node has no other node to reach: its size is judged without NET/Socket, and passes. The recorded 4-rank
    # run is CPU ranks over Open MPI, with no NCCL line: the requirement holds there, and fails it.
    assert rows[1]["passed"], rows[1]
    assert not rows[4]["passed"]
    assert rows[4]["failures"] == ["transport NET/Socket is required but the log has no NCCL connection lines "
                                   "(run with NCCL_DEBUG=INFO)"], rows[4]
    shown = done.result("Show the sizes to run", "login01")["msg"]
    assert "gpuops_training_require_transport=[]" in shown[0] and "gpuops_training_require_transport=['NET/Socket']" in shown[1]
