"""Every node role has an on/off switch, <role>_enabled: switched off, it does nothing on the node and says so in
one line, whatever else the inventory holds (here values its input rules would refuse, and nothing on the node the
role could work with). Each role runs for real on localhost with RHEL 9 facts, in one ansible-playbook run, and
again in check mode."""

import pytest

from gpuops_testlib.role_cases import RoleCase, render

# Values each role's rules refuse, so a role that did not honour its switch would fail, not pass quietly.
SWITCHED_OFF = {
    "nvidia_driver": {"nvidia_driver_enabled": "false", "nvidia_driver_branch": "57"},
    "nvidia_container_toolkit": {"nvidia_container_toolkit_enabled": False, "nvidia_container_toolkit_version": "latest"},
    "hugepages": {"hugepages_enabled": "no", "hugepages_1g_count": -3},
    # Its defaults leave the bond without members, which its rules refuse.
    "gpu_network": {"gpu_network_enabled": False},
    "gpu_selinux_contexts": {"gpu_selinux_contexts_enabled": False},
}
SAID = {"gpu_selinux_contexts": "Say why the file contexts are left as they are"}
CASES = [RoleCase(role, role, "rhel9", role_vars) for role, role_vars in SWITCHED_OFF.items()]


@pytest.fixture(scope="module", name="runs")
def _runs(tmp_path_factory):
    return {"real": render(tmp_path_factory.mktemp("switched_off"), CASES),
            "check": render(tmp_path_factory.mktemp("switched_off_check"), CASES, check=True)}


@pytest.mark.parametrize("mode", ["real", "check"])
@pytest.mark.parametrize("role", sorted(SWITCHED_OFF))
def test_a_switched_off_node_role_does_nothing_and_says_so(runs, role, mode):
    result = runs[mode][role]
    assert result.rc == 0, result.failures()
    assert result.changed() == []
    assert result.written() == []
    [said] = result.results(SAID.get(role, "Say that the role is switched off"))
    assert said["msg"] == "%s: nothing done, %s_enabled is false" % (role, role)
