"""The hugepages role's RHEL (grubby) and Ubuntu (/etc/default/grub) paths, run on localhost."""

import json

import pytest

from role_runner import run_role, write_fake_tool

ARGS_1G = "default_hugepagesz=1G hugepagesz=1G hugepages=16"

UBUNTU_GRUB_DEFAULT = """\
GRUB_DEFAULT=0
GRUB_TIMEOUT_STYLE=hidden
GRUB_TIMEOUT=0
GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`
GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"
GRUB_CMDLINE_LINUX="console=ttyS0,115200n8 hugepages=8 net.ifnames=0"
"""

# grubby --info=ALL prints one block per boot entry; this stand-in keeps the entries' arguments in
# a JSON file, applies --remove-args/--args to all of them and logs every call.
FAKE_GRUBBY = """
import json, os, sys
state_file = os.environ["FAKE_GRUBBY_STATE"]
state = json.load(open(state_file))
args = sys.argv[1:]
with open(state_file + ".calls", "a") as log:
    log.write(json.dumps(args) + "\\n")
if args == ["--info=ALL"]:
    for index, entry in enumerate(state):
        print("index=%d" % index)
        print('kernel="/boot/vmlinuz-%s"' % entry["kernel"])
        print('args="%s"' % entry["args"])
        print('root="UUID=0d6f0c8e"')
    sys.exit(0)
assert args[0] == "--update-kernel=ALL", args
for entry in state:
    words = entry["args"].split()
    if args[1].startswith("--remove-args="):
        keys = args[1].split("=", 1)[1].split()
        words = [w for w in words if w.split("=", 1)[0] not in keys]
    elif args[1].startswith("--args="):
        new = args[1].split("=", 1)[1].split()
        new_keys = [w.split("=", 1)[0] for w in new]
        words = [w for w in words if w.split("=", 1)[0] not in new_keys] + new
    entry["args"] = " ".join(words)
json.dump(state, open(state_file, "w"))
"""

FAKE_UPDATE_GRUB = """
import os, sys
with open(os.environ["FAKE_UPDATE_GRUB_LOG"], "a") as log:
    log.write(" ".join(sys.argv) + "\\n")
"""


@pytest.fixture
def node(tmp_path, monkeypatch):
    """Scratch copies of the files the role reads and writes, and the private variables naming them."""
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cmdline").write_text("BOOT_IMAGE=/vmlinuz-5.15.0-105-generic root=/dev/sda1 ro quiet\n")
    (proc / "meminfo").write_text("MemTotal: 2113260544 kB\nHugePages_Total:    1024\nHugepagesize:       2048 kB\n")
    # No CAP_SYS_ADMIN: the role must not mount anything on the machine running the tests.
    (proc / "status").write_text("Name:\tpython3\nCapEff:\t0000000000000000\n")
    (proc / "mounts").write_text("proc /proc proc rw 0 0\n")
    sysfs = tmp_path / "sys"
    for size in ("2048kB", "1048576kB"):
        (sysfs / ("hugepages-" + size)).mkdir(parents=True)
        (sysfs / ("hugepages-" + size) / "nr_hugepages").write_text("0\n")
    etc = tmp_path / "etc"
    (etc / "default").mkdir(parents=True)
    (etc / "fstab").write_text("UUID=0d6f0c8e / ext4 defaults 0 1\n")
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("FAKE_UPDATE_GRUB_LOG", str(tmp_path / "update-grub.log"))
    monkeypatch.setenv("FAKE_GRUBBY_STATE", str(tmp_path / "grubby.json"))
    private = {
        "__hugepages_sysctl_file": str(etc / "sysctl-hugepages.conf"),
        "__hugepages_tmpfiles_file": str(etc / "tmpfiles-hugepages.conf"),
        "__hugepages_fstab_file": str(etc / "fstab"),
        "__hugepages_grub_default_file": str(etc / "default" / "grub"),
        # Absent, so vm.nr_hugepages is never written on the machine running the tests.
        "__hugepages_proc_nr_hugepages": str(proc / "sys-vm-nr_hugepages-absent"),
        "__hugepages_sysfs_dir": str(sysfs),
        "__hugepages_proc_cmdline": str(proc / "cmdline"),
        "__hugepages_proc_meminfo": str(proc / "meminfo"),
        "__hugepages_proc_mounts": str(proc / "mounts"),
        "__hugepages_proc_self_status": str(proc / "status"),
        "__hugepages_dgx_release_file": str(etc / "dgx-release"),
        "__node_reboot_container_markers": [str(tmp_path / "run" / ".containerenv")],
    }
    return {"tmp": tmp_path, "etc": etc, "proc": proc, "sysfs": sysfs, "bin": bin_dir, "private": private}


def ubuntu_vars(**overrides):
    role_vars = {
        "hugepages_2m_count": 1024,
        "hugepages_1g_count": 16,
        "hugepages_mount_enabled": True,
        "hugepages_reboot_allowed": False,
        # This machine's /proc/sys is not touched (see the fixture), which the role reports.
        "hugepages_unsupported_action": "warn",
    }
    role_vars.update(overrides)
    return role_vars


def test_ubuntu_2204_writes_grub_cmdline_and_regenerates_grub(node):
    (node["etc"] / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
    # What the kernel shows once the role has written the 2 MiB pool (a scratch file here).
    (node["proc"] / "meminfo").write_text("HugePages_Total:    1024\nHugepagesize:       2048 kB\n")
    write_fake_tool(node["bin"], "update-grub", FAKE_UPDATE_GRUB)

    first = run_role(node["tmp"], "hugepages", "ubuntu2204", ubuntu_vars(), node["private"], fake_bin=node["bin"])
    assert first.rc == 0, first.failures()

    grub = (node["etc"] / "default" / "grub").read_text().splitlines()
    assert 'GRUB_CMDLINE_LINUX="console=ttyS0,115200n8 net.ifnames=0 ' + ARGS_1G + '"' in grub
    # Everything else in the file is left as it was.
    assert [line for line in grub if not line.startswith("GRUB_CMDLINE_LINUX=")] == [
        line for line in UBUNTU_GRUB_DEFAULT.splitlines() if not line.startswith("GRUB_CMDLINE_LINUX=")]
    assert (node["tmp"] / "update-grub.log").read_text().splitlines() == [str(node["bin"] / "update-grub")]

    # 1 GiB becomes the default size, so vm.nr_hugepages must not be set at boot; the 2 MiB pool
    # is restored by systemd-tmpfiles instead.
    assert not (node["etc"] / "sysctl-hugepages.conf").exists() or \
        "vm.nr_hugepages" not in (node["etc"] / "sysctl-hugepages.conf").read_text()
    tmpfiles = (node["etc"] / "tmpfiles-hugepages.conf").read_text().splitlines()
    assert "w " + str(node["sysfs"]) + "/hugepages-2048kB/nr_hugepages - - - - 1024" in tmpfiles
    # The runtime pool (a scratch file here) is written now.
    assert (node["sysfs"] / "hugepages-2048kB" / "nr_hugepages").read_text().strip() == "1024"

    fstab = (node["etc"] / "fstab").read_text().splitlines()
    assert "hugetlbfs /dev/hugepages1G hugetlbfs pagesize=1G 0 0" in fstab

    assert any(m.startswith("reboot needed: localhost (hugepages)") and ARGS_1G in m for m in first.messages())
    assert any("hugetlbfs cannot be mounted on /dev/hugepages1G" in m for m in first.messages())

    second = run_role(node["tmp"], "hugepages", "ubuntu2204", ubuntu_vars(), node["private"], fake_bin=node["bin"])
    assert second.rc == 0, second.failures()
    assert second.changed() == []
    assert len((node["tmp"] / "update-grub.log").read_text().splitlines()) == 1


def test_rhel9_sets_args_on_every_kernel_with_grubby(node):
    entries = [
        {"kernel": "5.14.0-427.13.1.el9_4.x86_64", "args": "ro crashkernel=1G-4G:192M rhgb quiet hugepages=8"},
        {"kernel": "5.14.0-362.8.1.el9_3.x86_64", "args": "ro crashkernel=1G-4G:192M rhgb quiet"},
    ]
    (node["tmp"] / "grubby.json").write_text(json.dumps(entries))
    write_fake_tool(node["bin"], "grubby", FAKE_GRUBBY)
    role_vars = ubuntu_vars(hugepages_mount_enabled=False)

    first = run_role(node["tmp"], "hugepages", "rhel9", role_vars, node["private"], fake_bin=node["bin"])
    assert first.rc == 0, first.failures()
    calls = [json.loads(line) for line in (node["tmp"] / "grubby.json.calls").read_text().splitlines()]
    assert calls == [
        ["--info=ALL"],
        ["--update-kernel=ALL", "--remove-args=default_hugepagesz hugepagesz hugepages"],
        ["--update-kernel=ALL", "--args=" + ARGS_1G],
    ]
    final = json.loads((node["tmp"] / "grubby.json").read_text())
    assert [entry["args"] for entry in final] == [
        "ro crashkernel=1G-4G:192M rhgb quiet " + ARGS_1G,
        "ro crashkernel=1G-4G:192M rhgb quiet " + ARGS_1G,
    ]
    assert not (node["etc"] / "default" / "grub").exists()

    second = run_role(node["tmp"], "hugepages", "rhel9", role_vars, node["private"], fake_bin=node["bin"])
    assert second.rc == 0, second.failures()
    assert second.changed() == []
    calls = (node["tmp"] / "grubby.json.calls").read_text().splitlines()
    assert [json.loads(line) for line in calls[3:]] == [["--info=ALL"]]


def test_2m_only_goes_through_vm_nr_hugepages(node):
    role_vars = ubuntu_vars(hugepages_1g_count=0, hugepages_2m_count=512, hugepages_mount_enabled=False)
    result = run_role(node["tmp"], "hugepages", "rhel9", role_vars, node["private"], fake_bin=node["bin"])
    assert result.rc == 0, result.failures()
    assert "vm.nr_hugepages=512" in (node["etc"] / "sysctl-hugepages.conf").read_text().splitlines()
    assert not (node["etc"] / "tmpfiles-hugepages.conf").exists()
    # Nothing on the command line, so no reboot is needed or reported.
    assert not any("reboot needed" in m for m in result.messages())


def test_unset_reboot_switch_fails_and_explains(node):
    (node["etc"] / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
    write_fake_tool(node["bin"], "update-grub", FAKE_UPDATE_GRUB)
    role_vars = ubuntu_vars()
    del role_vars["hugepages_reboot_allowed"]
    result = run_role(node["tmp"], "hugepages", "ubuntu2204", role_vars, node["private"], fake_bin=node["bin"])
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task.startswith("Stop until the reboot is decided")
    assert "needs a reboot for hugepages" in failure["msg"]
    assert "set hugepages_reboot_allowed=true" in failure["msg"]
    assert "hugepages_reboot_allowed=false" in failure["msg"]


def test_reboot_refused_in_a_container(node):
    (node["etc"] / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
    write_fake_tool(node["bin"], "update-grub", FAKE_UPDATE_GRUB)
    (node["tmp"] / "run").mkdir()
    (node["tmp"] / "run" / ".containerenv").write_text("")
    result = run_role(node["tmp"], "hugepages", "ubuntu2204", ubuntu_vars(hugepages_reboot_allowed=True),
                      node["private"], fake_bin=node["bin"])
    [(task, failure)] = result.failed()
    assert task == "Refuse to reboot a container"
    assert "is a container" in failure["msg"] and "hugepages_reboot_allowed=false" in failure["msg"]


def test_kubernetes_node_is_drained_before_the_reboot(node):
    (node["etc"] / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
    write_fake_tool(node["bin"], "update-grub", FAKE_UPDATE_GRUB)
    role_vars = ubuntu_vars(hugepages_reboot_allowed=True, node_reboot_kubernetes_node_name="gpu-node-1",
                            node_reboot_kubeconfig=str(node["tmp"] / "no-such-kubeconfig"))
    result = run_role(node["tmp"], "hugepages", "ubuntu2204", role_vars, node["private"], fake_bin=node["bin"])
    # No cluster answers here: the drain fails, and the node is not rebooted without it.
    [(task, _failure)] = result.failed()
    assert task == "Drain the Kubernetes node before its reboot"
    assert result.results("Reboot the node and wait") == []


def test_verify_after_boot_reads_meminfo(node):
    (node["etc"] / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
    write_fake_tool(node["bin"], "update-grub", FAKE_UPDATE_GRUB)
    (node["proc"] / "cmdline").write_text("BOOT_IMAGE=/vmlinuz ro " + ARGS_1G + "\n")
    (node["proc"] / "meminfo").write_text("HugePages_Total:      16\nHugepagesize:    1048576 kB\n")
    (node["sysfs"] / "hugepages-2048kB" / "nr_hugepages").write_text("1024\n")
    role_vars = ubuntu_vars(hugepages_mount_enabled=False)
    result = run_role(node["tmp"], "hugepages", "ubuntu2204", role_vars, node["private"], fake_bin=node["bin"])
    assert result.rc == 0, result.failures()
    assert not any("reboot needed" in m for m in result.messages())
    [report] = result.results("Record the verification")
    assert report["ansible_facts"]["hugepages_report"]["verified"] == [
        "2 MiB pool",
        "Hugepagesize in /proc/meminfo (1 GiB default size)",
        "HugePages_Total in /proc/meminfo (1 GiB pool)",
    ]


def test_verify_fails_when_the_kernel_reserved_fewer_pages(node):
    (node["etc"] / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
    write_fake_tool(node["bin"], "update-grub", FAKE_UPDATE_GRUB)
    (node["proc"] / "cmdline").write_text("BOOT_IMAGE=/vmlinuz ro " + ARGS_1G + "\n")
    (node["proc"] / "meminfo").write_text("HugePages_Total:      10\nHugepagesize:    1048576 kB\n")
    role_vars = ubuntu_vars(hugepages_mount_enabled=False, hugepages_runtime_enabled=False)
    result = run_role(node["tmp"], "hugepages", "ubuntu2204", role_vars, node["private"], fake_bin=node["bin"])
    [(task, failure)] = result.failed()
    assert task == "Check the pools"
    assert "HugePages_Total in /proc/meminfo (1 GiB pool) is 10, asked 16" in failure["msg"]


def test_defaults_leave_the_node_alone(node):
    # Both counts default to 0: nothing is written, nothing is reported missing, nothing fails,
    # even on a node that could not apply anything (here /proc/sys is out of reach).
    result = run_role(node["tmp"], "hugepages", "debian12", {}, node["private"], fake_bin=node["bin"])
    assert result.rc == 0, result.failures()
    assert result.changed() == []
    assert not (node["etc"] / "sysctl-hugepages.conf").exists()
    [report] = result.results("Record the verification")
    assert report["ansible_facts"]["hugepages_report"] == {"verified": [], "not_verified": []}
