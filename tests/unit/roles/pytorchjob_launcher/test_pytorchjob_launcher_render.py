"""The pytorchjob_launcher role without a cluster: the torchrun command every pod runs, rendered from the role's
defaults and vars (the Training Operator's RANK, MASTER_ADDR and MASTER_PORT expanded by Kubernetes), and the ranks
the verdict expects.

Every case is a host of one ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases).
"""

import pytest

from gpuops_testlib.role_cases import role_vars_case, run_task_cases, shown

IMAGE = {"gpuops_pytorch_image": "pytorch:2.5.1"}
RENDERED = {"command": "{{ __pytorchjob_launcher_default_command }}", "ranks": "{{ __pytorchjob_launcher_ranks | int }}",
            "image": "{{ pytorchjob_launcher_image }}"}
CASES = {
    "gpus": role_vars_case("pytorchjob_launcher", RENDERED, dict(
        IMAGE, pytorchjob_launcher_workers=2, pytorchjob_launcher_gpus_per_worker=4,
        kube_job_benchmark_args=["--model", "resnet50", "--mixed-precision", "bf16"])),
    "cpus": role_vars_case("pytorchjob_launcher", RENDERED, dict(
        IMAGE, pytorchjob_launcher_workers=2, pytorchjob_launcher_gpus_per_worker=0,
        pytorchjob_launcher_procs_per_worker=2)),
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("pytorchjob_launcher"), CASES)


def test_every_pod_runs_torchrun_with_the_operators_rank_and_master_one_rank_per_gpu(ran):
    rendered = shown(ran, "gpus")
    assert rendered["command"] == [
        "python3", "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "4", "--node-rank", "$(RANK)",
        "--master-addr", "$(MASTER_ADDR)", "--master-port", "$(MASTER_PORT)", "--max-restarts", "0",
        "/opt/gpuops/benchmark/gpuops_benchmark.py", "--framework", "pytorch", "--distribution", "ddp", "--device", "gpu",
        "--model", "resnet50", "--mixed-precision", "bf16"]
    assert (rendered["ranks"], rendered["image"]) == (8, "pytorch:2.5.1")


def test_cpu_pods_run_the_ranks_asked_for_on_the_cpu(ran):
    rendered = shown(ran, "cpus")
    assert rendered["command"][5:7] == ["--nproc-per-node", "2"]
    assert rendered["command"][-2:] == ["--device", "cpu"]
    assert rendered["ranks"] == 4
