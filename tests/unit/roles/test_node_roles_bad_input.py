"""Bad input to the hugepages and nvidia_driver roles fails before any change, naming the variable.

Each case runs the role in check mode on localhost (so nothing could change even if the check were
missing) and requires the play to stop at the argument validation or the role's own checks, with
no task reporting a change, and a message naming the variable and what was expected. All cases run as
hosts of one ansible-playbook run (gpuops_testlib.role_cases); each fails on its own.
"""

import re

import pytest

from gpuops_testlib.role_cases import RoleCase, render

ARGSPEC_TASK = "Validating arguments against arg spec 'main'"
RULES_TASK = "Check the variables"

CASES = [
    # role, variables, task that must stop the play, words the message must contain
    ("hugepages", {"hugepages_2m_count": "lots"}, ARGSPEC_TASK, ["hugepages_2m_count", "int"]),
    ("hugepages", {"hugepages_2m_count": -4}, RULES_TASK, ["hugepages_2m_count", "0 or more", "-4"]),
    ("hugepages", {"hugepages_1g_count": 30}, "Check that the pages fit in the node's memory",
     ["hugepages_1g_count=30", "30720 MiB", "hugepages_max_memory_fraction"]),
    ("hugepages", {"hugepages_mount_enabled": True, "hugepages_1g_count": 1, "hugepages_mount_path": "hugepages"},
     RULES_TASK, ["hugepages_mount_path", "absolute path", "'hugepages'"]),
    ("hugepages", {"hugepages_mount_enabled": True, "hugepages_mount_page_size": "1G"},
     RULES_TASK, ["hugepages_mount_page_size: got '1G' (with hugepages_1g_count=0", "set hugepages_1g_count above 0"]),
    ("hugepages", {"hugepages_unsupported_action": "ignore"}, ARGSPEC_TASK,
     ["hugepages_unsupported_action", "fail, warn", "ignore"]),
    ("hugepages", {"hugepages_reboot_allowed": "maybe"}, ARGSPEC_TASK, ["hugepages_reboot_allowed", "bool"]),
    ("hugepages", {"hugepages_max_memory_fraction": 1.5}, RULES_TASK,
     ["hugepages_max_memory_fraction", "at most 1", "1.5"]),
    ("nvidia_driver", {"nvidia_driver_branch": "latest"}, RULES_TASK,
     ["nvidia_driver_branch", "three digits", "'latest'"]),
    ("nvidia_driver", {"nvidia_driver_cuda_repo_base_url": "developer.download.nvidia.com/compute/cuda/repos"},
     RULES_TASK, ["nvidia_driver_cuda_repo_base_url", "https://", "developer.download.nvidia.com"]),
    ("nvidia_driver", {"nvidia_driver_module_options": {"NVreg_EnableStreamMemOPs": "1 2"}},
     RULES_TASK, ["nvidia_driver_module_options: got {\"NVreg_EnableStreamMemOPs\": \"1 2\"}", "have no spaces"]),
    ("nvidia_driver", {"nvidia_driver_nvswitch": "auto"}, ARGSPEC_TASK, ["nvidia_driver_nvswitch", "bool"]),
    ("nvidia_driver", {"nvidia_driver_packages": []}, RULES_TASK,
     ["nvidia_driver_packages", "at least one package"]),
    ("nvidia_driver", {"nvidia_driver_cuda_repo_key_checksum": "d42d0685"}, RULES_TASK,
     ["nvidia_driver_cuda_repo_key_checksum", "sha256:<hex>"]),
]


def case_id(case):
    role, role_vars = case[0], case[1]
    name = list(role_vars)[-1]  # the offending variable comes last
    return role + ":" + name + "=" + str(role_vars[name])[:20]


def host_name(case_name):
    return "bad_" + re.sub(r"[^A-Za-z0-9]+", "_", case_name)


UNSUPPORTED_ROLES = ["hugepages", "nvidia_driver"]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    # debian12 facts: 24105 MiB of memory, so 30 GiB of pages cannot fit.
    cases = [RoleCase(host_name(case_id(case)), case[0], "debian12", case[1]) for case in CASES]
    cases += [RoleCase(host_name("sles15_" + role), role, "sles15") for role in UNSUPPORTED_ROLES]
    return render(tmp_path_factory.mktemp("node_roles_bad_input"), cases, check=True)


@pytest.mark.parametrize("role, role_vars, stopping_task, words", CASES, ids=[case_id(case) for case in CASES])
def test_bad_input_fails_before_any_change(rendered, role, role_vars, stopping_task, words):
    result = rendered[host_name(case_id((role, role_vars)))]
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task == stopping_task or (stopping_task == ARGSPEC_TASK and task.startswith(ARGSPEC_TASK + ' - '))
    message = str(failure.get("msg", "")) + " " + " ".join(str(e) for e in failure.get("argument_errors", []))
    for word in words:
        assert word in message, message
    assert result.changed() == []


@pytest.mark.parametrize("role", UNSUPPORTED_ROLES)
def test_unsupported_platform_is_refused_by_name(rendered, role):
    result = rendered[host_name("sles15_" + role)]
    [(task, failure)] = result.failed()
    assert task == "Check that this platform is supported"
    assert "SLES 15.5" in failure["msg"] and "RHEL 8/9, Ubuntu 20.04/22.04/24.04, DGX OS and Debian 12" in failure["msg"]
    assert result.changed() == []
