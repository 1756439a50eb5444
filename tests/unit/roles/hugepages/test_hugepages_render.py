"""The hugepages role's RHEL (grubby) and Ubuntu (/etc/default/grub) paths, run on localhost.

All cases render in one ansible-playbook run (gpuops_testlib.role_cases), each under its own root; the
two that write the kernel command line run a second time to show that nothing changes.
"""

import json

from gpuops_testlib.role_cases import CASE_ROOT, RoleCase, case_fixtures, write_fake_tool

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


PRIVATE = {
    "__hugepages_sysctl_file": CASE_ROOT + "/etc/sysctl-hugepages.conf",
    "__hugepages_tmpfiles_file": CASE_ROOT + "/etc/tmpfiles-hugepages.conf",
    "__hugepages_fstab_file": CASE_ROOT + "/etc/fstab",
    "__hugepages_grub_default_file": CASE_ROOT + "/etc/default/grub",
    # Absent, so vm.nr_hugepages is never written on the machine running the tests.
    "__hugepages_proc_nr_hugepages": CASE_ROOT + "/proc/sys-vm-nr_hugepages-absent",
    "__hugepages_sysfs_dir": CASE_ROOT + "/sys",
    "__hugepages_proc_cmdline": CASE_ROOT + "/proc/cmdline",
    "__hugepages_proc_meminfo": CASE_ROOT + "/proc/meminfo",
    "__hugepages_proc_mounts": CASE_ROOT + "/proc/mounts",
    "__hugepages_proc_self_status": CASE_ROOT + "/proc/status",
    "__hugepages_dgx_release_file": CASE_ROOT + "/etc/dgx-release",
    "__node_reboot_container_markers": [CASE_ROOT + "/run/.containerenv"],
}
TOOL_STATE = {"FAKE_UPDATE_GRUB_LOG": "{root}/update-grub.log", "FAKE_GRUBBY_STATE": "{root}/grubby.json"}


def scratch_node(root):
    """Scratch copies of the files the role reads and writes (PRIVATE names them)."""
    proc = root / "proc"
    proc.mkdir()
    (proc / "cmdline").write_text("BOOT_IMAGE=/vmlinuz-5.15.0-105-generic root=/dev/sda1 ro quiet\n")
    (proc / "meminfo").write_text("MemTotal: 2113260544 kB\nHugePages_Total:    1024\nHugepagesize:       2048 kB\n")
    # No CAP_SYS_ADMIN: the role must not mount anything on the machine running the tests.
    (proc / "status").write_text("Name:\tpython3\nCapEff:\t0000000000000000\n")
    (proc / "mounts").write_text("proc /proc proc rw 0 0\n")
    for size in ("2048kB", "1048576kB"):
        (root / "sys" / ("hugepages-" + size)).mkdir(parents=True)
        (root / "sys" / ("hugepages-" + size) / "nr_hugepages").write_text("0\n")
    (root / "etc" / "default").mkdir(parents=True)
    (root / "etc" / "fstab").write_text("UUID=0d6f0c8e / ext4 defaults 0 1\n")


def ubuntu_node(*more_steps):
    """A scratch node with Ubuntu's /etc/default/grub and update-grub, then more_steps(root)."""
    def prepare(root):
        scratch_node(root)
        (root / "etc" / "default" / "grub").write_text(UBUNTU_GRUB_DEFAULT)
        write_fake_tool(root / "bin", "update-grub", FAKE_UPDATE_GRUB)
        for step in more_steps:
            step(root)
    return prepare


def write(relative_path, text):
    def step(root):
        (root / relative_path).parent.mkdir(parents=True, exist_ok=True)
        (root / relative_path).write_text(text)
    return step


def rhel9_grubby_node(root):
    scratch_node(root)
    entries = [
        {"kernel": "5.14.0-427.13.1.el9_4.x86_64", "args": "ro crashkernel=1G-4G:192M rhgb quiet hugepages=8"},
        {"kernel": "5.14.0-362.8.1.el9_3.x86_64", "args": "ro crashkernel=1G-4G:192M rhgb quiet"},
    ]
    (root / "grubby.json").write_text(json.dumps(entries))
    write_fake_tool(root / "bin", "grubby", FAKE_GRUBBY)


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


def without_reboot_switch(role_vars):
    return dict((name, value) for name, value in role_vars.items() if name != "hugepages_reboot_allowed")


ONE_GIB_BOOTED = [write("proc/cmdline", "BOOT_IMAGE=/vmlinuz ro " + ARGS_1G + "\n")]
CASES = [
    # What the kernel shows once the role has written the 2 MiB pool (a scratch file here).
    RoleCase("ubuntu2204_grub", "hugepages", "ubuntu2204", ubuntu_vars(),
             ubuntu_node(write("proc/meminfo", "HugePages_Total:    1024\nHugepagesize:       2048 kB\n")), TOOL_STATE),
    RoleCase("rhel9_grubby", "hugepages", "rhel9", ubuntu_vars(hugepages_mount_enabled=False), rhel9_grubby_node,
             TOOL_STATE),
    RoleCase("rhel9_2m_only", "hugepages", "rhel9",
             ubuntu_vars(hugepages_1g_count=0, hugepages_2m_count=512, hugepages_mount_enabled=False), scratch_node,
             TOOL_STATE),
    RoleCase("unset_reboot_switch", "hugepages", "ubuntu2204", without_reboot_switch(ubuntu_vars()), ubuntu_node(),
             TOOL_STATE),
    RoleCase("container", "hugepages", "ubuntu2204", ubuntu_vars(hugepages_reboot_allowed=True),
             ubuntu_node(write("run/.containerenv", "")), TOOL_STATE),
    RoleCase("kubernetes_node", "hugepages", "ubuntu2204",
             ubuntu_vars(hugepages_reboot_allowed=True, node_reboot_kubernetes_node_name="gpu-node-1",
                         node_reboot_kubeconfig=CASE_ROOT + "/no-such-kubeconfig"), ubuntu_node(), TOOL_STATE),
    RoleCase("booted_with_1g_pages", "hugepages", "ubuntu2204", ubuntu_vars(hugepages_mount_enabled=False),
             ubuntu_node(*ONE_GIB_BOOTED,
                         write("proc/meminfo", "HugePages_Total:      16\nHugepagesize:    1048576 kB\n"),
                         write("sys/hugepages-2048kB/nr_hugepages", "1024\n")), TOOL_STATE),
    RoleCase("booted_with_fewer_pages", "hugepages", "ubuntu2204",
             ubuntu_vars(hugepages_mount_enabled=False, hugepages_runtime_enabled=False),
             ubuntu_node(*ONE_GIB_BOOTED,
                         write("proc/meminfo", "HugePages_Total:      10\nHugepagesize:    1048576 kB\n")), TOOL_STATE),
    RoleCase("debian12_defaults", "hugepages", "debian12", {}, scratch_node, TOOL_STATE),
]
RUN_TWICE = ("ubuntu2204_grub", "rhel9_grubby")


rendered, rendered_again = case_fixtures("hugepages", CASES, PRIVATE, RUN_TWICE)


def test_ubuntu_2204_writes_grub_cmdline_and_regenerates_grub(rendered, rendered_again):
    first = rendered["ubuntu2204_grub"]
    root, etc = first.root, first.root / "etc"
    assert first.rc == 0, first.failures()

    grub = (etc / "default" / "grub").read_text().splitlines()
    assert 'GRUB_CMDLINE_LINUX="console=ttyS0,115200n8 net.ifnames=0 ' + ARGS_1G + '"' in grub
    # Everything else in the file is left as it was.
    assert [line for line in grub if not line.startswith("GRUB_CMDLINE_LINUX=")] == [
        line for line in UBUNTU_GRUB_DEFAULT.splitlines() if not line.startswith("GRUB_CMDLINE_LINUX=")]
    assert (root / "update-grub.log").read_text().splitlines() == [str(root / "bin" / "update-grub")]

    # 1 GiB becomes the default size, so vm.nr_hugepages must not be set at boot; the 2 MiB pool
    # is restored by systemd-tmpfiles instead.
    assert not (etc / "sysctl-hugepages.conf").exists() or \
        "vm.nr_hugepages" not in (etc / "sysctl-hugepages.conf").read_text()
    tmpfiles = (etc / "tmpfiles-hugepages.conf").read_text().splitlines()
    assert "w " + str(root / "sys") + "/hugepages-2048kB/nr_hugepages - - - - 1024" in tmpfiles
    # The runtime pool (a scratch file here) is written now.
    assert (root / "sys" / "hugepages-2048kB" / "nr_hugepages").read_text().strip() == "1024"

    fstab = (etc / "fstab").read_text().splitlines()
    assert "hugetlbfs /dev/hugepages1G hugetlbfs pagesize=1G 0 0" in fstab

    assert any(m.startswith("reboot needed: %s (hugepages)" % first.host) and ARGS_1G in m for m in first.messages())
    assert any("hugetlbfs cannot be mounted on /dev/hugepages1G" in m for m in first.messages())

    second = rendered_again["ubuntu2204_grub"]
    assert second.rc == 0, second.failures()
    assert second.changed() == []
    assert len((root / "update-grub.log").read_text().splitlines()) == 1


def test_rhel9_sets_args_on_every_kernel_with_grubby(rendered, rendered_again):
    first = rendered["rhel9_grubby"]
    root = first.root
    assert first.rc == 0, first.failures()
    calls = [json.loads(line) for line in (root / "grubby.json.calls").read_text().splitlines()]
    assert calls[:3] == [
        ["--info=ALL"],
        ["--update-kernel=ALL", "--remove-args=default_hugepagesz hugepagesz hugepages"],
        ["--update-kernel=ALL", "--args=" + ARGS_1G],
    ]
    final = json.loads((root / "grubby.json").read_text())
    assert [entry["args"] for entry in final] == [
        "ro crashkernel=1G-4G:192M rhgb quiet " + ARGS_1G,
        "ro crashkernel=1G-4G:192M rhgb quiet " + ARGS_1G,
    ]
    assert not (root / "etc" / "default" / "grub").exists()

    second = rendered_again["rhel9_grubby"]
    assert second.rc == 0, second.failures()
    assert second.changed() == []
    # The second run only read the entries: one more --info=ALL after the first run's three calls.
    calls = (root / "grubby.json.calls").read_text().splitlines()
    assert [json.loads(line) for line in calls[3:]] == [["--info=ALL"]]


def test_2m_only_goes_through_vm_nr_hugepages(rendered):
    result = rendered["rhel9_2m_only"]
    assert result.rc == 0, result.failures()
    assert "vm.nr_hugepages=512" in (result.root / "etc" / "sysctl-hugepages.conf").read_text().splitlines()
    assert not (result.root / "etc" / "tmpfiles-hugepages.conf").exists()
    # Nothing on the command line, so no reboot is needed or reported.
    assert not any("reboot needed" in m for m in result.messages())


def test_unset_reboot_switch_fails_and_explains(rendered):
    result = rendered["unset_reboot_switch"]
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task.startswith("Stop until the reboot is decided")
    assert "needs a reboot for hugepages" in failure["msg"]
    assert "set hugepages_reboot_allowed=true" in failure["msg"]
    assert "hugepages_reboot_allowed=false" in failure["msg"]


def test_reboot_refused_in_a_container(rendered):
    result = rendered["container"]
    [(task, failure)] = result.failed()
    assert task == "Refuse to reboot a container"
    assert "is a container" in failure["msg"] and "hugepages_reboot_allowed=false" in failure["msg"]


def test_kubernetes_node_is_drained_before_the_reboot(rendered):
    result = rendered["kubernetes_node"]
    # No cluster answers here: the drain fails, and the node is not rebooted without it.
    [(task, _failure)] = result.failed()
    assert task == "Drain the Kubernetes node"
    # The reboot task runs in every node's turn (one node at a time); it was skipped in the others' and never ran.
    assert [reboot for reboot in result.results("Reboot the node and wait") if not reboot.get("skipped")] == []


def test_verify_after_boot_reads_meminfo(rendered):
    result = rendered["booted_with_1g_pages"]
    assert result.rc == 0, result.failures()
    assert not any("reboot needed" in m for m in result.messages())
    [report] = result.results("Record the verification")
    assert report["ansible_facts"]["hugepages_report"]["verified"] == [
        "2 MiB pool",
        "Hugepagesize in /proc/meminfo (1 GiB default size)",
        "HugePages_Total in /proc/meminfo (1 GiB pool)",
    ]


def test_verify_fails_when_the_kernel_reserved_fewer_pages(rendered):
    result = rendered["booted_with_fewer_pages"]
    [(task, failure)] = result.failed()
    assert task == "Check the pools"
    assert "HugePages_Total in /proc/meminfo (1 GiB pool) is 10, asked 16" in failure["msg"]


def test_defaults_leave_the_node_alone(rendered):
    # Both counts default to 0: nothing is written, nothing is reported missing, nothing fails,
    # even on a node that could not apply anything (here /proc/sys is out of reach).
    result = rendered["debian12_defaults"]
    assert result.rc == 0, result.failures()
    assert result.changed() == []
    assert not (result.root / "etc" / "sysctl-hugepages.conf").exists()
    [report] = result.results("Record the verification")
    assert report["ansible_facts"]["hugepages_report"] == {"verified": [], "not_verified": []}
