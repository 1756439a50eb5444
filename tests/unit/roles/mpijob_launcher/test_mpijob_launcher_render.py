"""The mpijob_launcher role's launch contract without a cluster: the launcher's and the workers' default
commands rendered from the role's defaults and vars, and the role's input check refusing a bad SSH port
(tests/unit/plugins/action/test_check_inputs_launchers.py checks the role's other inputs).

Every case is a host of one ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases).
The job these commands go into runs against the lab's API server in tests/integration/test_mpijob.py.
"""

import pytest

from gpuops_testlib.role_cases import role_vars_case, run_task_cases, shown

IMAGE = {"mpijob_launcher_image": "horovod:0.28.1"}
# Both default commands, and the port the workers' readiness probe looks at.
COMMANDS = {"launcher": "{{ __mpijob_launcher_default_command }}",
            "worker": "{{ __mpijob_launcher_default_worker_command }}",
            "probed_port": "{{ __mpijob_launcher_worker_ssh_port }}"}


def validate(role_vars):
    check = {"roles": ["mpijob_launcher"]}
    return [{"name": "Check the variables", "gpuops.cluster.check_inputs": check}], dict(IMAGE, **role_vars)


ENV = {"LD_LIBRARY_PATH": "/opt/nccl/lib", "HOROVOD_CYCLE_TIME": 1}
CASES = {
    # NCCL settings come from gpuops_nccl, the launcher's own env adds the rest.
    "pod_network": role_vars_case("mpijob_launcher", COMMANDS, dict(
        IMAGE, kube_job_env=ENV, gpuops_nccl={"NCCL_DEBUG": "INFO"}, mpijob_launcher_workers=2,
        mpijob_launcher_slots_per_worker=2)),
    "host_network": role_vars_case("mpijob_launcher", COMMANDS, dict(
        IMAGE, mpijob_launcher_host_network=True, mpijob_launcher_ssh_port=2022)),
    "host_network_default_port": role_vars_case("mpijob_launcher", COMMANDS, dict(
        IMAGE, mpijob_launcher_host_network=True)),
    "ddp": role_vars_case("mpijob_launcher", COMMANDS, dict(
        IMAGE, mpijob_launcher_distribution="ddp", mpijob_launcher_name="bench", kube_job_namespace="ml",
        kube_job_benchmark_args=["--model", "resnet50"])),
    "ddp_host_network": role_vars_case("mpijob_launcher", COMMANDS, dict(
        IMAGE, mpijob_launcher_distribution="ddp", mpijob_launcher_host_network=True,
        mpijob_launcher_master_port=29600)),
    "port_too_high": validate({"mpijob_launcher_ssh_port": 65536}),
    "port_not_a_number": validate({"mpijob_launcher_ssh_port": "ssh"}),
    "port_highest": validate({"mpijob_launcher_ssh_port": 65535}),
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("mpijob_launcher"), CASES)


MPIRUN_ARGS = ["--allow-run-as-root", "-bind-to", "none", "-map-by", "slot"]
PROGRAM = ["python3", "/opt/gpuops/benchmark/gpuops_benchmark.py"]


def test_ranks_get_path_ld_library_path_and_every_variable_once(ran):
    rendered = shown(ran, "pod_network")
    assert rendered["launcher"] == (["mpirun", "-np", "4"] + MPIRUN_ARGS
                                    + ["-x", "PATH", "-x", "LD_LIBRARY_PATH", "-x", "HOROVOD_CYCLE_TIME",
                                       "-x", "NCCL_DEBUG"] + PROGRAM)
    # In the pod's own network namespace sshd keeps port 22, where the readiness probe looks for it.
    assert rendered["worker"] == ["/usr/sbin/sshd", "-De"]
    assert rendered["probed_port"] == 22


@pytest.mark.parametrize("case, port", [("host_network", "2022"), ("host_network_default_port", "2222")])
def test_host_network_moves_sshd_off_the_nodes_port_and_tells_mpirun(ran, case, port):
    rendered = shown(ran, case)
    assert rendered["worker"] == ["/usr/sbin/sshd", "-De", "-p", port]
    assert rendered["probed_port"] == int(port)
    assert rendered["launcher"] == (["mpirun", "-np", "2"] + MPIRUN_ARGS + ["-mca", "plm_rsh_args", "-p " + port,
                                                                            "-x", "PATH", "-x", "LD_LIBRARY_PATH"]
                                    + PROGRAM)


def test_ddp_ranks_are_started_by_mpirun_and_told_the_first_workers_name_under_the_jobs_service(ran):
    rendered = shown(ran, "ddp")
    assert rendered["launcher"] == (["mpirun", "-np", "2"] + MPIRUN_ARGS
                                    + ["-x", "PATH", "-x", "LD_LIBRARY_PATH",
                                       "-x", "MASTER_ADDR=bench-worker-0.bench.ml.svc", "-x", "MASTER_PORT=29500"]
                                    + PROGRAM + ["--framework", "pytorch", "--distribution", "ddp", "--model", "resnet50"])
    assert rendered["worker"] == ["/usr/sbin/sshd", "-De"]
    # With host networking the Service names the node's address, and mpirun still reaches sshd on its own port.
    rendered = shown(ran, "ddp_host_network")
    assert rendered["launcher"] == (["mpirun", "-np", "2"] + MPIRUN_ARGS + ["-mca", "plm_rsh_args", "-p 2222",
                                                                            "-x", "PATH", "-x", "LD_LIBRARY_PATH"]
                                    + ["-x", "MASTER_ADDR=gpuops-benchmark-worker-0.gpuops-benchmark.default.svc",
                                       "-x", "MASTER_PORT=29600"]
                                    + PROGRAM + ["--framework", "pytorch", "--distribution", "ddp"])


@pytest.mark.parametrize("case, problem", [
    ("port_too_high", "mpijob_launcher_ssh_port: got 65536; expected a port from 1 to 65535 for the workers' sshd"),
    ("port_not_a_number", "mpijob_launcher_ssh_port: got 'ssh'; expected a whole number"),
])
def test_a_port_outside_1_to_65535_is_refused_naming_the_variable(ran, case, problem):
    result = ran[case]
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task == "Check the variables"
    assert failure["problems"] == [problem]


def test_the_highest_port_passes(ran):
    assert ran["port_highest"].rc == 0, ran["port_highest"].failures()
