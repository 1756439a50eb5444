"""The nvidia_driver role's RHEL 9, Ubuntu 22.04 and DGX OS paths, run on localhost.

All cases render in one ansible-playbook run (gpuops_testlib.role_cases), each under its own root; the
RHEL 9 case runs a second time to show that nothing changes.
"""

from gpuops_testlib.role_cases import CASE_ROOT, RoleCase, case_fixtures, write_fake_tool

FAKE_NVIDIA_SMI = """
import os
for index in range(int(os.environ["FAKE_GPU_COUNT"])):
    print("%d, 00000000:%02X:00.0, NVIDIA H100 80GB HBM3, 570.124.06, Enabled" % (index, 0x18 + index))
"""

PRIVATE = {
    "__nvidia_driver_dgx_release_file": CASE_ROOT + "/etc/dgx-release",
    "__nvidia_driver_pci_devices_dir": CASE_ROOT + "/pci",
    "__nvidia_driver_sys_module_dir": CASE_ROOT + "/module",
    "__nvidia_driver_nouveau_blacklist_file": CASE_ROOT + "/etc/blacklist-nouveau.conf",
    "__nvidia_driver_module_options_file": CASE_ROOT + "/etc/nvidia-gpuops.conf",
    "__nvidia_driver_repo_file": CASE_ROOT + "/etc/cuda.repo-or-list",
    "__nvidia_driver_keyring_file": CASE_ROOT + "/etc/keyrings/cuda.key",
    "__nvidia_driver_initramfs_image": CASE_ROOT + "/boot/initrd.img",
    "__node_reboot_container_markers": [CASE_ROOT + "/no-container-marker"],
}
ROLE_VARS = {
    "nvidia_driver_cuda_repo_base_url": "file://" + CASE_ROOT + "/mirror",
    "nvidia_driver_packages_enabled": False,
    "nvidia_driver_reboot_allowed": False,
}
DGX_RELEASE = ('DGX_NAME="DGX Server"\nDGX_PRETTY_NAME="NVIDIA DGX Server"\nDGX_SWBUILD_VERSION="6.2.1"\n'
               'DGX_OTA_VERSION="6.3.2"\n')


def pci_device(root, address, vendor, pci_class):
    device = root / address
    device.mkdir(parents=True)
    (device / "vendor").write_text(vendor + "\n")
    (device / "class").write_text(pci_class + "\n")


def plain_node(root):
    """A mirror with both repository keys, a PCI bus without NVIDIA devices, no module loaded."""
    for distro, key in (("rhel9", "D42D0685.pub"), ("ubuntu2204", "3bf863cc.pub")):
        (root / "mirror" / distro / "x86_64").mkdir(parents=True)
        (root / "mirror" / distro / "x86_64" / key).write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n" + distro + "\n")
    pci_device(root / "pci", "0000:00:00.0", "0x8086", "0x060000")
    (root / "module").mkdir()
    (root / "etc").mkdir()


def dgx_node(release, nvswitches):
    def prepare(root):
        plain_node(root)
        (root / "etc" / "dgx-release").write_text(release)
        for index in range(8):
            pci_device(root / "pci", "0000:%02x:00.0" % (0x18 + index), "0x10de", "0x030200")
        for index in range(nvswitches):
            pci_device(root / "pci", "0000:%02x:00.0" % (0x05 + index), "0x10de", "0x068000")
        (root / "module" / "nvidia").mkdir()
        write_fake_tool(root / "bin", "nvidia-smi", FAKE_NVIDIA_SMI)
    return prepare


def nouveau_loaded(root):
    plain_node(root)
    (root / "module" / "nouveau").mkdir()


NO_REBOOT_SWITCH = dict((name, value) for name, value in ROLE_VARS.items() if name != "nvidia_driver_reboot_allowed")
CASES = [
    RoleCase("rhel9", "nvidia_driver", "rhel9", ROLE_VARS, plain_node, {"FAKE_GPU_COUNT": 0}),
    RoleCase("ubuntu2204", "nvidia_driver", "ubuntu2204",
             dict(ROLE_VARS, nvidia_driver_module_options={"NVreg_EnableStreamMemOPs": 1}), plain_node,
             {"FAKE_GPU_COUNT": 0}),
    RoleCase("dgx_os", "nvidia_driver", "ubuntu2204", dict(ROLE_VARS, nvidia_driver_packages_enabled=True),
             dgx_node(DGX_RELEASE, nvswitches=4), {"FAKE_GPU_COUNT": 8}),
    RoleCase("nvidia_smi_short", "nvidia_driver", "ubuntu2204", ROLE_VARS,
             dgx_node('DGX_PRETTY_NAME="NVIDIA DGX Server"\n', nvswitches=0), {"FAKE_GPU_COUNT": 7}),
    RoleCase("nouveau_loaded", "nvidia_driver", "ubuntu2204", NO_REBOOT_SWITCH, nouveau_loaded,
             {"FAKE_GPU_COUNT": 0}),
]


rendered, rendered_again = case_fixtures("nvidia_driver", CASES, PRIVATE, run_twice=["rhel9"])


def test_rhel9_repository_file_and_key(rendered, rendered_again):
    result = rendered["rhel9"]
    etc = result.root / "etc"
    assert result.rc == 0, result.failures()
    repo = (etc / "cuda.repo-or-list").read_text().splitlines()
    assert [line for line in repo if not line.startswith("#")] == [
        "[cuda-rhel9-x86_64]",
        "name=NVIDIA CUDA rhel9 x86_64",
        "baseurl=file://" + str(result.root / "mirror") + "/rhel9/x86_64",
        "enabled=1",
        "gpgcheck=1",
        "gpgkey=file://" + str(etc / "keyrings" / "cuda.key"),
    ]
    assert (etc / "keyrings" / "cuda.key").read_text().endswith("rhel9\n")
    assert (etc / "blacklist-nouveau.conf").read_text().splitlines()[-2:] == [
        "blacklist nouveau", "options nouveau modeset=0"]
    # No initramfs image here: reported, not pretended.
    assert any(m.startswith("initramfs not rebuilt") for m in result.messages())
    [report] = result.results("Record the verification")
    not_verified = report["ansible_facts"]["nvidia_driver_report"]["not_verified"]
    assert not_verified[0].startswith("no NVIDIA GPU on this node")

    again = rendered_again["rhel9"]
    assert again.rc == 0, again.failures()
    assert again.changed() == []


def test_ubuntu2204_sources_entry_and_module_options(rendered):
    result = rendered["ubuntu2204"]
    etc = result.root / "etc"
    assert result.rc == 0, result.failures()
    entry = (etc / "cuda.repo-or-list").read_text().splitlines()[-1]
    assert entry == ("deb [signed-by=" + str(etc / "keyrings" / "cuda.key") + "] file://"
                     + str(result.root / "mirror") + "/ubuntu2204/x86_64/ /")
    assert (etc / "nvidia-gpuops.conf").read_text().splitlines()[-1] == "options nvidia NVreg_EnableStreamMemOPs=1"


def test_dgx_os_is_verified_not_reinstalled(rendered):
    result = rendered["dgx_os"]
    etc = result.root / "etc"
    assert result.rc == 0, result.failures()
    # Nothing is installed or configured on DGX OS.
    assert not (etc / "cuda.repo-or-list").exists()
    assert not (etc / "blacklist-nouveau.conf").exists()
    assert result.results("Install the NVIDIA driver") == [] or all(r.get("skipped") for r in result.results("Install the NVIDIA driver"))
    [report] = result.results("Record the verification")
    report = report["ansible_facts"]["nvidia_driver_report"]
    assert report["dgx_os"] is True
    assert len(report["gpus"]) == 8 and report["nvswitch"] is True
    assert report["driver_version"] == "570.124.06"
    assert any("NVIDIA DGX Server 6.3.2" in m and "NVSwitch: yes" in m for m in result.messages())


def test_nvidia_smi_disagreeing_with_the_pci_bus_fails(rendered):
    result = rendered["nvidia_smi_short"]
    [(task, failure)] = result.failed()
    assert task == "Check the GPUs nvidia-smi sees"
    assert "the PCI bus has 8 NVIDIA GPU(s)" in failure["msg"] and "nvidia-smi lists 7" in failure["msg"]


def test_loaded_nouveau_needs_a_reboot_and_the_unset_switch_explains(rendered):
    result = rendered["nouveau_loaded"]
    [(task, failure)] = result.failed()
    assert task.startswith("Stop until the reboot is decided")
    assert "needs a reboot for nvidia_driver: nouveau is loaded" in failure["msg"]
    assert "set nvidia_driver_reboot_allowed=true" in failure["msg"]
    # The blacklist is in place before the play stops.
    assert (result.root / "etc" / "blacklist-nouveau.conf").exists()
