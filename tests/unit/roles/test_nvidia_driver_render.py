"""The nvidia_driver role's RHEL 9, Ubuntu 22.04 and DGX OS paths, run on localhost."""

import pytest

from role_runner import run_role, write_fake_tool

FAKE_NVIDIA_SMI = """
import os
for index in range(int(os.environ["FAKE_GPU_COUNT"])):
    print("%d, 00000000:%02X:00.0, NVIDIA H100 80GB HBM3, 570.124.06, Enabled" % (index, 0x18 + index))
"""


def pci_device(root, address, vendor, pci_class):
    device = root / address
    device.mkdir(parents=True)
    (device / "vendor").write_text(vendor + "\n")
    (device / "class").write_text(pci_class + "\n")


@pytest.fixture
def node(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    for distro, key in (("rhel9", "D42D0685.pub"), ("ubuntu2204", "3bf863cc.pub")):
        (mirror / distro / "x86_64").mkdir(parents=True)
        (mirror / distro / "x86_64" / key).write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n" + distro + "\n")
    pci = tmp_path / "pci"
    pci_device(pci, "0000:00:00.0", "0x8086", "0x060000")
    modules = tmp_path / "module"
    modules.mkdir()
    etc = tmp_path / "etc"
    etc.mkdir()
    monkeypatch.setenv("FAKE_GPU_COUNT", "0")
    private = {
        "__nvidia_driver_dgx_release_file": str(etc / "dgx-release"),
        "__nvidia_driver_pci_devices_dir": str(pci),
        "__nvidia_driver_sys_module_dir": str(modules),
        "__nvidia_driver_nouveau_blacklist_file": str(etc / "blacklist-nouveau.conf"),
        "__nvidia_driver_module_options_file": str(etc / "nvidia-gpuops.conf"),
        "__nvidia_driver_repo_file": str(etc / "cuda.repo-or-list"),
        "__nvidia_driver_keyring_file": str(etc / "keyrings" / "cuda.key"),
        "__nvidia_driver_initramfs_image": str(tmp_path / "boot" / "initrd.img"),
        "__node_reboot_container_markers": [str(tmp_path / "no-container-marker")],
    }
    role_vars = {
        "nvidia_driver_cuda_repo_base_url": "file://" + str(mirror),
        "nvidia_driver_packages_enabled": False,
        "nvidia_driver_reboot_allowed": False,
    }
    return {"tmp": tmp_path, "etc": etc, "pci": pci, "modules": modules, "bin": tmp_path / "bin",
            "mirror": mirror, "private": private, "vars": role_vars}


def test_rhel9_repository_file_and_key(node):
    result = run_role(node["tmp"], "nvidia_driver", "rhel9", node["vars"], node["private"])
    assert result.rc == 0, result.failures()
    repo = (node["etc"] / "cuda.repo-or-list").read_text().splitlines()
    assert [line for line in repo if not line.startswith("#")] == [
        "[cuda-rhel9-x86_64]",
        "name=NVIDIA CUDA rhel9 x86_64",
        "baseurl=file://" + str(node["mirror"]) + "/rhel9/x86_64",
        "enabled=1",
        "gpgcheck=1",
        "gpgkey=file://" + str(node["etc"] / "keyrings" / "cuda.key"),
    ]
    assert (node["etc"] / "keyrings" / "cuda.key").read_text().endswith("rhel9\n")
    assert (node["etc"] / "blacklist-nouveau.conf").read_text().splitlines()[-2:] == [
        "blacklist nouveau", "options nouveau modeset=0"]
    # No initramfs image here: reported, not pretended.
    assert any(m.startswith("initramfs not rebuilt") for m in result.messages())
    [report] = result.results("Record the verification")
    not_verified = report["ansible_facts"]["nvidia_driver_report"]["not_verified"]
    assert not_verified[0].startswith("no NVIDIA GPU on this node")

    again = run_role(node["tmp"], "nvidia_driver", "rhel9", node["vars"], node["private"])
    assert again.rc == 0, again.failures()
    assert again.changed() == []


def test_ubuntu2204_sources_entry_and_module_options(node):
    role_vars = dict(node["vars"], nvidia_driver_module_options={"NVreg_EnableStreamMemOPs": 1})
    result = run_role(node["tmp"], "nvidia_driver", "ubuntu2204", role_vars, node["private"])
    assert result.rc == 0, result.failures()
    entry = (node["etc"] / "cuda.repo-or-list").read_text().splitlines()[-1]
    assert entry == ("deb [signed-by=" + str(node["etc"] / "keyrings" / "cuda.key") + "] file://"
                     + str(node["mirror"]) + "/ubuntu2204/x86_64/ /")
    assert (node["etc"] / "nvidia-gpuops.conf").read_text().splitlines()[-1] == "options nvidia NVreg_EnableStreamMemOPs=1"


def test_dgx_os_is_verified_not_reinstalled(node, monkeypatch):
    (node["etc"] / "dgx-release").write_text(
        'DGX_NAME="DGX Server"\nDGX_PRETTY_NAME="NVIDIA DGX Server"\nDGX_SWBUILD_VERSION="6.2.1"\nDGX_OTA_VERSION="6.3.2"\n')
    for index in range(8):
        pci_device(node["pci"], "0000:%02x:00.0" % (0x18 + index), "0x10de", "0x030200")
    for index in range(4):
        pci_device(node["pci"], "0000:%02x:00.0" % (0x05 + index), "0x10de", "0x068000")
    (node["modules"] / "nvidia").mkdir()
    write_fake_tool(node["bin"], "nvidia-smi", FAKE_NVIDIA_SMI)
    monkeypatch.setenv("FAKE_GPU_COUNT", "8")
    result = run_role(node["tmp"], "nvidia_driver", "ubuntu2204", dict(node["vars"], nvidia_driver_packages_enabled=True),
                      node["private"], fake_bin=node["bin"])
    assert result.rc == 0, result.failures()
    # Nothing is installed or configured on DGX OS.
    assert not (node["etc"] / "cuda.repo-or-list").exists()
    assert not (node["etc"] / "blacklist-nouveau.conf").exists()
    assert result.results("Install the NVIDIA driver") == [] or all(r.get("skipped") for r in result.results("Install the NVIDIA driver"))
    [report] = result.results("Record the verification")
    report = report["ansible_facts"]["nvidia_driver_report"]
    assert report["dgx_os"] is True
    assert len(report["gpus"]) == 8 and report["nvswitch"] is True
    assert report["driver_version"] == "570.124.06"
    assert any("NVIDIA DGX Server 6.3.2" in m and "NVSwitch: yes" in m for m in result.messages())


def test_nvidia_smi_disagreeing_with_the_pci_bus_fails(node, monkeypatch):
    (node["etc"] / "dgx-release").write_text('DGX_PRETTY_NAME="NVIDIA DGX Server"\n')
    for index in range(8):
        pci_device(node["pci"], "0000:%02x:00.0" % (0x18 + index), "0x10de", "0x030200")
    (node["modules"] / "nvidia").mkdir()
    write_fake_tool(node["bin"], "nvidia-smi", FAKE_NVIDIA_SMI)
    monkeypatch.setenv("FAKE_GPU_COUNT", "7")
    result = run_role(node["tmp"], "nvidia_driver", "ubuntu2204", node["vars"], node["private"], fake_bin=node["bin"])
    [(task, failure)] = result.failed()
    assert task == "Check the GPUs nvidia-smi sees"
    assert "the PCI bus has 8 NVIDIA GPU(s)" in failure["msg"] and "nvidia-smi lists 7" in failure["msg"]


def test_loaded_nouveau_needs_a_reboot_and_the_unset_switch_explains(node):
    (node["modules"] / "nouveau").mkdir()
    role_vars = dict(node["vars"])
    del role_vars["nvidia_driver_reboot_allowed"]
    result = run_role(node["tmp"], "nvidia_driver", "ubuntu2204", role_vars, node["private"])
    [(task, failure)] = result.failed()
    assert task.startswith("Stop until the reboot is decided")
    assert "needs a reboot for nvidia_driver: nouveau is loaded" in failure["msg"]
    assert "set nvidia_driver_reboot_allowed=true" in failure["msg"]
    # The blacklist is in place before the play stops.
    assert (node["etc"] / "blacklist-nouveau.conf").exists()
