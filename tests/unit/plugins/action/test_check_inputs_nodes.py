"""The node roles' input rules (meta/input_rules.yml of nvidia_driver, hugepages and gpu_network), as a run meets them.

Each case runs gpuops.cluster.check_inputs as a host of one ansible-playbook run, with the values as a user gives
them on the command line: ``-e name=value`` makes a string, so "-3" and "false" arrive as strings; a list or a
mapping is given as JSON. The problem lines must be exactly these: every problem, and nothing else.
"""

import json

import pytest

from gpuops_testlib.role_cases import check_inputs_cases

CHECK_TASK = "Check the role's inputs"

# gpu_network's defaults leave the bond without members, which its rules refuse.
BOND = {"gpu_network_bond_members": ["ens1f0np0", "ens1f1np1"]}


def as_json(values):
    return json.dumps(values, sort_keys=True)


# case id: (role, -e arguments, the problem lines)
BAD = {
    "hugepages: count below 0, as a string": (
        "hugepages", ["hugepages_1g_count=-3"],
        ["hugepages_1g_count: got -3; expected a whole number of 1 GiB pages, 0 or more"]),
    "hugepages: page size outside the choices": (
        "hugepages", ["hugepages_mount_page_size=4K"],
        ["hugepages_mount_page_size: got '4K'; expected one of 2M, 1G"]),
    # The rules that read the switch cannot be worked out with 'maybe': only the type is reported.
    "hugepages: switch that is not a boolean": (
        "hugepages", ["hugepages_mount_enabled=maybe", "hugepages_1g_count=2"],
        ["hugepages_mount_enabled: got 'maybe'; expected true or false"]),
    "hugepages: two problems": (
        "hugepages", ["hugepages_2m_count=-1", "hugepages_max_memory_fraction=1.5"],
        ["hugepages_2m_count: got -1; expected a whole number of 2 MiB pages, 0 or more",
         "hugepages_max_memory_fraction: got 1.5; expected a share of the node's memory above 0 and at most 1, such as 0.9"]),

    "nvidia_driver: branch of two digits, as a string": (
        "nvidia_driver", ["nvidia_driver_branch=57"],
        ["nvidia_driver_branch: got '57'; expected a driver branch of three digits, such as 570, or null for the "
         "newest driver"]),
    "nvidia_driver: switch that is not a boolean": (
        "nvidia_driver", ["nvidia_driver_nvswitch=auto"],
        ["nvidia_driver_nvswitch: got 'auto'; expected true or false"]),
    "nvidia_driver: key checksum without its algorithm": (
        "nvidia_driver", ["nvidia_driver_cuda_repo_key_checksum=d42d0685"],
        ["nvidia_driver_cuda_repo_key_checksum: got 'd42d0685'; expected sha256:<hex> (or sha1, sha384, sha512), "
         "or null"]),
    "nvidia_driver: two problems": (
        "nvidia_driver", ["nvidia_driver_cuda_repo_base_url=developer.download.nvidia.com/compute/cuda/repos",
                          as_json({"nvidia_driver_module_options": {"NVreg_EnableStreamMemOPs": "1 2"}})],
        ["nvidia_driver_cuda_repo_base_url: got 'developer.download.nvidia.com/compute/cuda/repos'; expected an "
         "http://, https:// or file:// URL without spaces, such as https://developer.download.nvidia.com/compute/cuda/repos",
         "nvidia_driver_module_options: got {\"NVreg_EnableStreamMemOPs\": \"1 2\"}; expected values that are not "
         "empty and have no spaces, such as {NVreg_EnableStreamMemOPs: 1}"]),

    "gpu_network: bond MTU above 9216, as a string": (
        "gpu_network", [as_json(BOND), "gpu_network_bond_mtu=9500"],
        ["gpu_network_bond_mtu: got 9500; expected an MTU from 68 to 9216"]),
    "gpu_network: LACP rate outside the choices": (
        "gpu_network", [as_json(BOND), "gpu_network_bond_lacp_rate=medium"],
        ["gpu_network_bond_lacp_rate: got 'medium'; expected one of slow, fast"]),
    # The items of a list of mappings arrive as given: the table is the string "254".
    "gpu_network: NIC on the main routing table": (
        "gpu_network", [as_json(dict(BOND, gpu_network_secondary_nics=[
            {"device": "ens6", "address": "10.0.1.11/24", "table": "254"}]))],
        ["gpu_network_secondary_nics: got [{\"address\": \"10.0.1.11/24\", \"device\": \"ens6\", \"table\": \"254\"}]; "
         "expected a routing table id on every NIC, a whole number from 1 to 4294967295 other than 253, 254 and 255"]),
    # gpuops_nccl writes the hosts' file and the ranks' environment: the role's own NCCL variables are gone, and one
    # still set is refused, naming what replaces it.
    "gpu_network: removed NCCL variables": (
        "gpu_network", [as_json(dict(BOND, gpuops_nccl={"NCCL_IB_HCA": "mlx5_0"},
                                     gpu_network_nccl_extra={"NCCL_DEBUG": "INFO"})), "gpu_network_nccl_ib_hca=mlx5_1"],
        ["gpu_network_nccl_ib_hca: got 'mlx5_1'; expected nothing (a removed variable); give NCCL_IB_HCA in gpuops_nccl, "
         "which writes /etc/nccl.conf and the ranks' environment",
         "gpu_network_nccl_extra: got {\"NCCL_DEBUG\": \"INFO\"}; expected nothing (a removed variable); give these NCCL_* "
         "settings in gpuops_nccl, which writes /etc/nccl.conf and the ranks' environment"]),
    "gpu_network: two problems": (
        "gpu_network", [as_json(BOND), "gpu_network_apply=yes", "gpu_network_root_dir=/srv/image",
                        "gpu_network_nccl_conf_path=etc/nccl.conf"],
        ["gpu_network_apply: got true (with gpu_network_root_dir='/srv/image'); expected false while "
         "gpu_network_root_dir is set (the running system does not read files rendered there)",
         "gpu_network_nccl_conf_path: got 'etc/nccl.conf'; expected an absolute path such as /etc/nccl.conf"]),
}

NICS_WITH_NUMBERS_AS_STRINGS = [
    {"device": "ens6", "address": "10.0.1.11/24", "table": "101", "mtu": "9000"},
    {"device": "ens7", "address": "10.0.2.11/24", "table": 102, "priority": "900"},
]
# Every number and boolean as a string, as -e and INI inventories give them.
GOOD = {
    "hugepages": ["hugepages_2m_count=512", "hugepages_1g_count=2", "hugepages_mount_enabled=true",
                  "hugepages_mount_page_size=1G", "hugepages_max_memory_fraction=0.5", "hugepages_reboot_allowed=false",
                  "hugepages_runtime_enabled=yes", "hugepages_kernel_cmdline_enabled=True"],
    "nvidia_driver": ["nvidia_driver_branch=570", "nvidia_driver_nvswitch=false", "nvidia_driver_packages_enabled=no",
                      "nvidia_driver_reboot_allowed=true", "nvidia_driver_cuda_repo_key_checksum=sha256:0abc12",
                      as_json({"nvidia_driver_module_options": {"NVreg_EnableStreamMemOPs": 1}})],
    "gpu_network": [as_json(dict(BOND, gpu_network_bond_addresses=["10.0.0.11/24"],
                                 gpu_network_secondary_nics=NICS_WITH_NUMBERS_AS_STRINGS)),
                    "gpu_network_bond_gateway=10.0.0.1", "gpu_network_bond_mtu=9000", "gpu_network_bond_miimon=100",
                    "gpu_network_apply=false", "gpu_network_secondary_rule_priority=1000",
                    "gpu_network_nccl_enabled=yes", "gpu_network_nccl_conf_path=/etc/nccl.conf",
                    as_json({"gpuops_nccl": {"NCCL_IB_GID_INDEX": "3", "NCCL_SOCKET_NTHREADS": 4}})],
}


# A role switched off does nothing: its rules do not hold the run up, its types still must hold.
SWITCHED_OFF = {
    "hugepages off": ("hugepages", ["hugepages_enabled=false", "hugepages_1g_count=-3"], []),
    "nvidia_driver off": ("nvidia_driver", ["nvidia_driver_enabled=no", "nvidia_driver_branch=57"], []),
    "gpu_network off, its default bond without members": ("gpu_network", ["gpu_network_enabled=false"], []),
    "gpu_network off, a type still checked": (
        "gpu_network", ["gpu_network_enabled=false", "gpu_network_bond_mtu=big"],
        ["gpu_network_bond_mtu: got 'big'; expected a whole number"]),
    "the switch itself not a boolean": (
        "hugepages", ["hugepages_enabled=maybe"], ["hugepages_enabled: got 'maybe'; expected true or false"]),
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """{case id or role: (the run, the check's result)} for every case of this file, from one run."""
    cases = dict((case_id, (role, extra_vars)) for case_id, (role, extra_vars, _lines) in BAD.items())
    cases.update((role, (role, extra_vars)) for role, extra_vars in GOOD.items())
    cases.update((case_id, (role, extra_vars)) for case_id, (role, extra_vars, _lines) in SWITCHED_OFF.items())
    ran = check_inputs_cases(tmp_path_factory.mktemp("input_rules_nodes"), cases, CHECK_TASK)
    return dict((case, (run, result)) for case, (run, result, _host) in ran.items())


@pytest.mark.parametrize("case_id", list(BAD))
def test_bad_values_are_named_one_line_each(checked, case_id):
    run, result = checked[case_id]
    lines = BAD[case_id][2]
    assert result.get("failed"), run.explain()
    assert result["problems"] == lines
    assert result["msg"].splitlines()[1:] == lines


@pytest.mark.parametrize("role", sorted(GOOD))
def test_numbers_and_booleans_given_as_strings_pass(checked, role):
    run, result = checked[role]
    assert not result.get("failed"), run.explain()
    assert result["problems"] == [] and result["checked"] == [role]


@pytest.mark.parametrize("case_id", list(SWITCHED_OFF))
def test_a_switched_off_role_is_held_to_its_types_only(checked, case_id):
    run, result = checked[case_id]
    lines = SWITCHED_OFF[case_id][2]
    assert result["problems"] == lines, run.explain()
    assert (not result.get("failed")) == (lines == []), run.explain()
