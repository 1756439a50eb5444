"""The ssh_launcher role's launch commands rendered from its defaults and vars without any host: mpirun for Horovod,
and for PyTorch's DDP mpirun starting one torchrun on each host (its own --nproc-per-node, the rendezvous on the
first host); and the ranks the hosts run checked against gpuops_training_expect_ranks before anything starts.

Every case is a host of one ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases).
"""

from pathlib import Path

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT
from gpuops_testlib.role_cases import role_vars_case, run_task_cases, shown

ROLE = Path(REPO_ROOT) / "roles" / "ssh_launcher"
# Two hosts as the role's validate.yml places them: node1 runs 2 ranks (its ssh_launcher_slots), node2 1.
PLACEMENT = [{"host": "node1", "address": "10.0.0.1", "slots": 2}, {"host": "node2", "address": "10.0.0.2", "slots": 1}]
BASE = {"__ssh_launcher_placement": PLACEMENT, "ssh_launcher_hosts": ["node1", "node2"], "__ssh_launcher_mpirun": "mpirun",
        "__ssh_launcher_mpirun_prefix_args": [], "ssh_launcher_python": "/opt/gpuops/venv/bin/python3",
        "ssh_launcher_program_args": ["--model", "small_cnn", "--device", "cpu"]}


# The launch command (task Render) and the ranks' environment (task Environment).
COMMAND = "{{ __ssh_launcher_command }}"
ENVIRONMENT = [("Environment", "{{ __ssh_launcher_env }}")]


def expect_ranks(expected):
    """The role's own validation on this host alone, with 2 slots of its own (ssh_launcher_slots) and gpuops_training_expect_ranks given."""
    tasks = [
        {"name": "Defaults", "ansible.builtin.include_vars": str(ROLE / "defaults" / "main.yml")},
        {"name": "Vars", "ansible.builtin.include_vars": str(ROLE / "vars" / "main.yml")},
        {"name": "Expected ranks", "ansible.builtin.include_tasks": str(ROLE / "tasks" / "validate.yml")},
    ]
    return tasks, {"ssh_launcher_hosts": ["{{ inventory_hostname }}"], "ssh_launcher_slots": 2,
                   "gpuops_training_expect_ranks": expected, "ssh_launcher_distribution": "ddp"}


CASES = {
    "horovod": role_vars_case("ssh_launcher", COMMAND, BASE, more_shown=ENVIRONMENT),
    "ddp": role_vars_case("ssh_launcher", COMMAND, dict(
        BASE, ssh_launcher_distribution="ddp", ssh_launcher_run_name="training-ddp",
        ssh_launcher_network_interface="eth1", ssh_launcher_env={"OMP_NUM_THREADS": "1"},
        gpuops_nccl={"NCCL_DEBUG": "INFO"}), more_shown=ENVIRONMENT),
}
# The role places the ranks once for the play (run_once): each of these runs alone.
EXPECT_CASES = {"expect_3_of_2": expect_ranks(3), "expect_2_of_2": expect_ranks(2)}

TORCHRUN = ["/opt/gpuops/venv/bin/python3", "-m", "torch.distributed.run", "--nnodes", "2", "--rdzv-backend", "c10d",
            "--rdzv-endpoint", "10.0.0.1:29400", "--rdzv-id", "training-ddp", "--rdzv-conf", "join_timeout=120",
            "--max-restarts", "0"]
PROGRAM = ["/opt/gpuops/benchmark/gpuops_benchmark.py", "--framework", "pytorch", "--distribution", "ddp", "--model",
           "small_cnn", "--device", "cpu"]
EXPORTS = ["-x", "NCCL_DEBUG", "-x", "GLOO_SOCKET_IFNAME", "-x", "OMP_NUM_THREADS"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("ssh_launcher"), CASES)


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    return dict((name, run_task_cases(tmp_path_factory.mktemp(name), {name: case})[name])
                for name, case in EXPECT_CASES.items())


def test_horovod_is_one_mpirun_over_the_hostfile_as_before(ran):
    command = shown(ran, "horovod")
    assert command[:7] == ["mpirun", "--allow-run-as-root", "--tag-output", "-np", "3", "--hostfile",
                           "/var/tmp/gpuops-training/hostfile"]
    assert command[-6:] == ["/opt/gpuops/venv/bin/python3", "/opt/gpuops/benchmark/gpuops_benchmark.py", "--model",
                            "small_cnn", "--device", "cpu"]


def test_ddp_is_mpirun_starting_one_torchrun_per_host_each_with_its_own_ranks_meeting_on_the_first(ran):
    assert shown(ran, "ddp") == (
        ["mpirun", "--allow-run-as-root", "--tag-output", "--bind-to", "none", "--mca", "plm_rsh_args",
         "-F /var/tmp/gpuops-training/ssh_config", "--mca", "btl_tcp_if_include", "eth1", "--mca", "oob_tcp_if_include",
         "eth1"]
        + ["-np", "1", "--host", "10.0.0.1"] + EXPORTS + TORCHRUN + ["--nproc-per-node", "2"] + PROGRAM
        + [":", "-np", "1", "--host", "10.0.0.2"] + EXPORTS + TORCHRUN + ["--nproc-per-node", "1"] + PROGRAM)


def test_ddp_ranks_get_gloos_interface_beside_nccl_and_the_roles_variables(ran):
    assert shown(ran, "ddp", "Environment") == {"NCCL_DEBUG": "INFO", "GLOO_SOCKET_IFNAME": "eth1",
                                                "OMP_NUM_THREADS": "1"}


def test_expected_ranks_other_than_the_hosts_slots_are_refused_before_anything_starts(validated):
    result = validated["expect_3_of_2"]
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task == "Check that the expected ranks are the hosts' slots"
    assert failure["msg"] == (
        "gpuops_training_expect_ranks: got 3; expected 2, the ranks the hosts run (expect_3_of_2 slots=2: "
        "ssh_launcher_slots_per_host, or a host's ssh_launcher_slots), or leave it unset to expect that count")
    assert validated["expect_2_of_2"].rc == 0, validated["expect_2_of_2"].failures()
