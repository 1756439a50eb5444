"""The pod_launcher role without a cluster: the horovodrun and torchrun commands rendered from the role's defaults and vars,
and the role refusing bad variables before any API call.

Every case is a host of one ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases).
The Job itself runs in real pods in tests/e2e/test_pod_launcher.py.
"""

import pytest

from gpuops_testlib.role_cases import role_vars_case, run_task_cases, shown

IMAGE = {"pod_launcher_image": "horovod:0.28.1"}
COMMAND = "{{ __pod_launcher_default_command }}"


def run_role(role_vars):
    return [{"name": "Run", "ansible.builtin.include_role": {"name": "gpuops.cluster.pod_launcher"}}], role_vars


CASES = {
    "eight_gpus": role_vars_case("pod_launcher", COMMAND, dict(
        IMAGE, pod_launcher_gpus=8, kube_job_benchmark_args=["--model", "resnet50"],
        pod_launcher_horovodrun_args=["--timeline-filename", "/tmp/timeline.json"])),
    "cpu_ranks": role_vars_case("pod_launcher", COMMAND, dict(IMAGE, pod_launcher_ranks=2)),
    "ddp": role_vars_case("pod_launcher", COMMAND, dict(
        IMAGE, pod_launcher_distribution="ddp", pod_launcher_gpus=4,
        kube_job_benchmark_args=["--model", "resnet50", "--mixed-precision", "bf16"])),
    "bad_counts": run_role(dict(IMAGE, pod_launcher_gpus=-1, pod_launcher_ranks=0)),
    "no_image": run_role({}),
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("pod_launcher"), CASES)


def test_one_rank_per_gpu_on_localhost_with_the_extra_options_before_the_program(ran):
    assert shown(ran, "eight_gpus") == ["horovodrun", "-np", "8", "-H", "localhost:8", "--timeline-filename",
                                        "/tmp/timeline.json", "python3", "/opt/gpuops/benchmark/gpuops_benchmark.py",
                                        "--model", "resnet50"]


def test_ddp_is_torchrun_standalone_with_one_rank_per_gpu_and_the_distribution_the_role_gives(ran):
    assert shown(ran, "ddp") == ["python3", "-m", "torch.distributed.run", "--standalone", "--nnodes", "1",
                                 "--nproc-per-node", "4", "--max-restarts", "0",
                                 "/opt/gpuops/benchmark/gpuops_benchmark.py", "--framework", "pytorch",
                                 "--distribution", "ddp", "--model", "resnet50", "--mixed-precision", "bf16"]


def test_cpu_ranks_where_no_gpu_is(ran):
    assert shown(ran, "cpu_ranks")[:5] == ["horovodrun", "-np", "2", "-H", "localhost:2"]


def _problems(result):
    """The problem lines of the role's input check, the one task that failed."""
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task == "Check the variables", failure
    return failure["problems"]


def test_bad_counts_fail_naming_the_variables_before_any_api_call(ran):
    result = ran["bad_counts"]
    assert _problems(result) == [
        "pod_launcher_gpus: got -1; expected a number of GPUs per pod, 0 (training on CPUs) or more",
        "pod_launcher_ranks: got 0; expected a number of ranks per pod, 1 or more, or null for one per GPU"]
    assert result.results("Look for the namespace") == []


def test_a_missing_image_is_refused_naming_the_variable(ran):
    assert _problems(ran["no_image"]) == [
        "pod_launcher_image: got ''; expected the name of the benchmark's image, with Horovod (horovodrun), the "
        "framework and /opt/gpuops/benchmark/gpuops_benchmark.py"]
