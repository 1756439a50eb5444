"""The job_launcher role without a cluster: the workers' and mpirun's commands rendered from the role's defaults
and vars, and the role refusing bad variables before any API call.

Every case is a host of one ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases).
The workers and the mpirun Job run in real pods in tests/e2e/test_job_launcher.py.
"""

import pytest

from gpuops_testlib.role_cases import role_vars_case, run_task_cases, shown

IMAGE = {"job_launcher_image": "horovod:0.28.1"}
COMMANDS = {"mpirun": "{{ __job_launcher_command }}", "worker": "{{ __job_launcher_worker_command }}",
            "mpirun_env": "{{ __job_launcher_mpirun_env }}"}


def run_role(role_vars):
    return [{"name": "Run", "ansible.builtin.include_role": {"name": "gpuops.cluster.job_launcher"}}], role_vars


CASES = {
    "dgx_pair": role_vars_case("job_launcher", COMMANDS, dict(
        IMAGE, job_launcher_name="bench", job_launcher_gpus_per_worker=8, gpuops_nccl={"NCCL_DEBUG": "INFO"})),
    "drop_cache": role_vars_case("job_launcher", COMMANDS, dict(
        IMAGE, job_launcher_drop_page_cache=True, job_launcher_ssh_port=2022)),
    "bad_port": run_role(dict(IMAGE, job_launcher_ssh_port=70000)),
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("job_launcher"), CASES)


def test_mpirun_names_each_worker_by_its_dns_name_and_slots_and_tells_ssh_the_port(ran):
    rendered = shown(ran, "dgx_pair")
    assert rendered["mpirun"] == [
        "mpirun", "-np", "16", "-H", "bench-workers-0.bench-workers:8,bench-workers-1.bench-workers:8",
        "--allow-run-as-root", "-bind-to", "none", "-map-by", "slot",
        "-x", "PATH", "-x", "LD_LIBRARY_PATH", "-x", "NCCL_DEBUG", "python3", "/opt/gpuops/benchmark/gpuops_benchmark.py"]
    # The port and the whole names, in the environment Open MPI 4's mpirun reads and in the one Open MPI 5's reads.
    assert rendered["mpirun_env"] == {
        "NCCL_DEBUG": "INFO",
        "OMPI_MCA_plm_rsh_args": "-p 22122", "PRTE_MCA_plm_ssh_args": "-p 22122",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true", "PRTE_MCA_prte_keep_fqdn_hostnames": "true"}
    assert rendered["worker"] == ["/usr/sbin/sshd", "-De", "-p", "22122"]


def test_the_page_cache_drop_runs_before_sshd_replaces_the_shell(ran):
    assert shown(ran, "drop_cache")["worker"] == [
        "sh", "-c", "sync && echo 3 > /proc/sys/vm/drop_caches && exec /usr/sbin/sshd -De -p 2022"]


def test_a_port_beyond_65535_is_refused_naming_the_variable_before_any_api_call(ran):
    result = ran["bad_port"]
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task == "Check the variables"
    assert failure["problems"] == [
        "job_launcher_ssh_port: got 70000; expected a port from 1 to 65535 for the workers' sshd"]
    assert result.results("Look for the namespace") == []
