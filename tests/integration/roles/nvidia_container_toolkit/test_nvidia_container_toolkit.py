"""The nvidia_container_toolkit role's paths the lab cannot run (CRI-O, Docker, RHEL, DGX OS, the failures), on localhost.

Real: the role, and nvidia-ctk itself, built from NVIDIA's Go module by tools/build_nvidia_container_toolkit.sh (this
module runs the script, which only prints its cache folder once built); the role runs it on a scratch copy of each
case's runtime configuration, and the tests run it on the same input to know what the role must write. Real too:
the files under each case's root, the yum_repository and get_url writes (the key comes from a file:// mirror).
Stand-ins: the runtimes' daemons and the kubelet (crio, dockerd, containerd, kubelet on PATH, which the role only
looks up), and the restart command, which logs its call; the facts say OpenRC, so no systemd unit is touched, and
packages are never installed (nvidia_container_toolkit_packages_enabled false, or check mode).
"""

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, short_name
from gpuops_testlib.role_cases import CASE_ROOT, RoleCase, render, write_fake_tool

BUILD_SCRIPT = "tools/build_nvidia_container_toolkit.sh"
ROLE = "nvidia_container_toolkit"

# The node's fixed paths, under each case's root.
PRIVATE = {
    "__nvidia_container_toolkit_runtimes": {
        "containerd": {"config": CASE_ROOT + "/etc/containerd/config.toml",
                       "drop_in": CASE_ROOT + "/etc/containerd/conf.d/99-nvidia.toml",
                       "imports_drop_ins": True, "service": "containerd", "socket": CASE_ROOT + "/run/containerd.sock"},
        "crio": {"config": CASE_ROOT + "/etc/crio/crio.conf", "drop_in": CASE_ROOT + "/etc/crio/crio.conf.d/99-nvidia.toml",
                 "imports_drop_ins": False, "service": "crio", "socket": CASE_ROOT + "/run/crio.sock"},
        "docker": {"config": CASE_ROOT + "/etc/docker/daemon.json", "drop_in": None, "imports_drop_ins": False,
                   "service": "docker", "socket": CASE_ROOT + "/run/docker.sock"},
    },
    "__nvidia_container_toolkit_restart_marker": CASE_ROOT + "/var/lib/restart-pending",
    "__nvidia_container_toolkit_dgx_release_file": CASE_ROOT + "/etc/dgx-release",
    "__nvidia_container_toolkit_gpu_device": CASE_ROOT + "/dev/nvidiactl",
    "__nvidia_container_toolkit_repo_file": CASE_ROOT + "/etc/repos/nvidia-container-toolkit.repo",
    "__nvidia_container_toolkit_keyring_file": CASE_ROOT + "/etc/keyrings/nvidia-container-toolkit.key",
}
RESTART = CASE_ROOT + "/bin/restart-runtime"
# A node that has the toolkit already and takes no packages.
NO_INSTALL = {"nvidia_container_toolkit_repository_enabled": False, "nvidia_container_toolkit_packages_enabled": False,
              "nvidia_container_toolkit_restart_command": [RESTART, "runtime"]}
RESTART_CALL = "restart-runtime runtime\n"

CRIO_CONF = '''[crio]
[crio.runtime]
default_runtime = "crun"

[crio.runtime.runtimes.crun]
runtime_path = "/usr/bin/crun"
monitor_path = "/usr/libexec/crio/conmon"
'''
DAEMON_JSON = '{\n  "log-driver": "journald",\n  "registry-mirrors": ["https://mirror.example"]\n}\n'
CONTAINERD_CRI = '''# containerd's configuration, as the node's image has it
version = 2

[plugins]
  # the CRI plugin, with runc as the default runtime
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "registry.k8s.io/pause:3.9"
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = true
'''
MULTILINE_IMPORTS = 'imports = [\n  "/etc/containerd/other.toml",\n]\n'
# The restart stand-in: logs its argv (program name first) beside it, in the case's root.
FAKE_RESTART = """
import os, sys
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "restarts.log"), "a") as log:
    log.write(" ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\\n")
"""
DAEMON = "import sys\nsys.exit(0)\n"


@pytest.fixture(scope="module")
def ctk_bin():
    """The real nvidia-ctk's folder, built (or found in the cache) by the build script."""
    built = subprocess.run(["bash", BUILD_SCRIPT], cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    folder = Path(built.stdout.strip().splitlines()[-1] if built.stdout.strip() else "missing") / "bin"
    if built.returncode != 0 or not (folder / "nvidia-ctk").is_file():
        pytest.fail("bash %s did not build nvidia-ctk (rc=%s), which these tests run:\n%s"
                    % (BUILD_SCRIPT, built.returncode, built.stderr[-2000:]))
    return folder


def node(daemons=(), files=None):
    """prepare(root): stand-in daemons and the restart command on the root's PATH, the runtimes' sockets, files."""
    def prepare(root):
        for daemon in daemons:
            write_fake_tool(root / "bin", daemon, DAEMON)
        write_fake_tool(root / "bin", "restart-runtime", FAKE_RESTART)
        for name in ("containerd", "crio", "docker"):
            (root / "run").mkdir(exist_ok=True)
            (root / "run" / (name + ".sock")).write_text("")
        # Folders every such node has (/var/lib, /etc/yum.repos.d or /etc/apt/sources.list.d, /etc/pki/rpm-gpg
        # or /etc/apt/keyrings).
        for folder in ("var/lib", "etc/repos", "etc/keyrings"):
            (root / folder).mkdir(parents=True)
        (root / "mirror").mkdir()
        (root / "mirror" / "gpgkey").write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\nnvidia\n")
        for path, text in (files or {}).items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
    return prepare


# Stands for nvidia-ctk's folder in a case's tool_dirs until the ctk_bin fixture knows it (with_ctk).
CTK_DIR = "<nvidia-ctk's folder>"


def case(name, platform, role_vars, ctk_on_path=True, **prepare):
    """One host; ctk_on_path puts the real nvidia-ctk on its PATH."""
    return RoleCase(name, ROLE, platform, role_vars, node(**prepare), tool_dirs=(CTK_DIR,) if ctk_on_path else ())


CRIO = {"daemons": ["crio"], "files": {"etc/crio/crio.conf": CRIO_CONF}}
DOCKER = {"daemons": ["dockerd"], "files": {"etc/docker/daemon.json": DAEMON_JSON}}


def containerd(main_file):
    return {"daemons": ["containerd"], "files": {"etc/containerd/config.toml": main_file}}


CASES = [
    case("crio_rhel9", "rhel9", dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=True), **CRIO),
    case("crio_class_only", "rhel9", dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=False,
                                          nvidia_container_toolkit_runtime_set_as_default=False), **CRIO),
    case("docker_ubuntu", "ubuntu2204", dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=False,
                                             nvidia_container_toolkit_runtime_cdi_enabled=True), **DOCKER),
    case("containerd_no_imports", "debian12", dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=True),
         **containerd(CONTAINERD_CRI)),
    case("containerd_one_import", "debian12", dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=False),
         **containerd('imports = ["/etc/containerd/other.toml"]\n' + CONTAINERD_CRI)),
    case("containerd_multiline", "debian12", dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=True),
         **containerd(MULTILINE_IMPORTS + CONTAINERD_CRI)),
    case("restart_unset", "rhel9", NO_INSTALL, **CRIO),
    case("docker_and_kubelet", "ubuntu2204", NO_INSTALL, daemons=["dockerd", "kubelet"],
         files={"etc/docker/daemon.json": DAEMON_JSON}),
    case("no_runtime", "ubuntu2204", NO_INSTALL),
    case("dgx_os", "ubuntu2204", {"nvidia_container_toolkit_restart_allowed": False,
                                  "nvidia_container_toolkit_repo_base_url": "file://" + CASE_ROOT + "/mirror"},
         daemons=["containerd"], files={"etc/containerd/config.toml": CONTAINERD_CRI,
                                        "etc/dgx-release": 'DGX_PRETTY_NAME="NVIDIA DGX Server"\n'}),
    case("rhel9_repository", "rhel9", {"nvidia_container_toolkit_preinstalled": False,
                                       "nvidia_container_toolkit_packages_enabled": False,
                                       "nvidia_container_toolkit_restart_allowed": False,
                                       "nvidia_container_toolkit_repo_base_url": "file://" + CASE_ROOT + "/mirror"},
         **CRIO),
    case("bad_input", "rhel9", dict(NO_INSTALL, nvidia_container_toolkit_runtime="cri-o",
                                    nvidia_container_toolkit_version="latest"), **CRIO),
]
# The second run: idempotence, and the restarts owed by the first (now allowed), with the multi-line imports
# list extended by hand as the failure asked.
ALLOWED = dict(NO_INSTALL, nvidia_container_toolkit_restart_allowed=True)
SECOND_RUN = [replace(c, role_vars=ALLOWED) for c in CASES
              if c.name in ("crio_rhel9", "docker_ubuntu", "containerd_no_imports", "containerd_multiline")]
FRESH_REPO = {"nvidia_container_toolkit_repo_base_url": "file://" + CASE_ROOT + "/mirror",
              "nvidia_container_toolkit_restart_allowed": True}
CHECK_CASES = [case("check_rhel9", "rhel9", FRESH_REPO, ctk_on_path=False, **CRIO),
               case("check_ubuntu", "ubuntu2204", FRESH_REPO, ctk_on_path=False, **DOCKER)]


def with_ctk(cases, ctk_bin):
    return [replace(c, tool_dirs=tuple(str(ctk_bin) if d == CTK_DIR else d for d in c.tool_dirs)) for c in cases]


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory):
    return tmp_path_factory.mktemp(ROLE)


@pytest.fixture(scope="module")
def rendered(work_dir, ctk_bin):
    return render(work_dir, with_ctk(CASES, ctk_bin), PRIVATE)


@pytest.fixture(scope="module")
def first_files(rendered):
    """{case: {path under its root: text}} as the first run left them; the second run changes some."""
    return dict((name, on_disk(result)) for name, result in rendered.items())


@pytest.fixture(scope="module")
def rendered_again(work_dir, ctk_bin, rendered, first_files):
    multiline = rendered["containerd_multiline"]
    main_file = multiline.root / "etc/containerd/config.toml"
    main_file.write_text(main_file.read_text().replace(
        'other.toml",\n', 'other.toml",\n  "%s/etc/containerd/conf.d/*.toml",\n' % multiline.root))
    return render(work_dir, with_ctk(SECOND_RUN, ctk_bin), PRIVATE)


@pytest.fixture(scope="module")
def check_mode(tmp_path_factory):
    return render(tmp_path_factory.mktemp(ROLE + "_check"), CHECK_CASES, PRIVATE, check=True)


def ctk_writes(ctk_bin, tmp_path, runtime, config, *flags):
    """What the real nvidia-ctk writes for this main configuration: the drop-in, or Docker's file itself."""
    (tmp_path / "config").write_text(config)
    drop_in = [] if runtime == "docker" else ["--drop-in-config=%s/drop-in" % tmp_path]
    subprocess.run([str(ctk_bin / "nvidia-ctk"), "runtime", "configure", "--runtime=" + runtime,
                    "--config=%s/config" % tmp_path] + drop_in + list(flags), check=True, capture_output=True)
    return (tmp_path / ("config" if runtime == "docker" else "drop-in")).read_text()


MARKER = "var/lib/restart-pending"


def restarts(files):
    """The restart command's calls, one line each, from a case's files."""
    return files.get("restarts.log", "")


def tree(root):
    """{path under root: its text, or None for a folder}."""
    return dict((str(path.relative_to(root)), None if path.is_dir() else path.read_text()) for path in root.rglob("*"))


def on_disk(result):
    """A case's files and folders as they are now (after the last run that touched its root)."""
    return tree(result.root)


def as_prepared(name, tmp_path):
    """A case's files and folders before any run."""
    [prepare] = [c.prepare for c in CASES + CHECK_CASES if c.name == name]
    prepare(tmp_path)
    return tree(tmp_path)


def test_crio_gets_the_drop_in_nvidia_ctk_writes_and_one_restart(rendered, first_files, rendered_again, ctk_bin,
                                                                 tmp_path):
    result, files = rendered["crio_rhel9"], first_files["crio_rhel9"]
    assert result.rc == 0, result.failures()
    assert files["etc/crio/crio.conf.d/99-nvidia.toml"] == ctk_writes(ctk_bin, tmp_path, "crio", CRIO_CONF,
                                                                      "--nvidia-set-as-default")
    assert '\n    default_runtime = "nvidia"\n' in files["etc/crio/crio.conf.d/99-nvidia.toml"]
    assert files["etc/crio/crio.conf"] == CRIO_CONF
    assert result.changed() == ["Create the drop-in directory", "Write the NVIDIA runtime's configuration",
                                "Record the owed restart on the node", "Restart the runtime with the given command",
                                "Clear the owed restart"]
    assert restarts(files) == RESTART_CALL and MARKER not in files
    again = rendered_again["crio_rhel9"]
    assert again.rc == 0, again.failures()
    assert again.changed() == []
    assert on_disk(again) == files


def test_the_nodes_of_one_play_restart_one_at_a_time_in_inventory_order(rendered):
    run = rendered["crio_rhel9"].run
    # Each run of the restart task, as the hosts that did restart in it (the others' turn skips them).
    restarted = [sorted(host for host, result in task["hosts"].items() if not result.get("skipped"))
                 for play in run.document["plays"] for task in play["tasks"]
                 if short_name(task["task"]["name"]) == "Restart the runtime with the given command"]
    assert [hosts for hosts in restarted if hosts] == [["crio_rhel9"], ["containerd_no_imports"]], restarted


def test_crio_nvidia_for_its_runtime_class_only(rendered, first_files, ctk_bin, tmp_path):
    result, files = rendered["crio_class_only"], first_files["crio_class_only"]
    assert result.rc == 0, result.failures()
    drop_in = files["etc/crio/crio.conf.d/99-nvidia.toml"]
    assert drop_in == ctk_writes(ctk_bin, tmp_path, "crio", CRIO_CONF)
    assert "default_runtime" not in drop_in
    assert files["etc/crio/crio.conf"] == CRIO_CONF


def test_docker_daemon_json_merged_and_the_restart_owed_until_allowed(rendered, first_files, rendered_again):
    result, files = rendered["docker_ubuntu"], first_files["docker_ubuntu"]
    assert result.rc == 0, result.failures()
    assert files["etc/docker/daemon.json"] == (
        '{\n    "default-runtime": "nvidia",\n    "features": {\n        "cdi": true\n    },\n    "log-driver": "journald",\n'
        '    "registry-mirrors": [\n        "https://mirror.example"\n    ],\n    "runtimes": {\n'
        '        "nvidia": {\n            "args": [],\n            "path": "nvidia-container-runtime"\n'
        '        }\n    }\n}')
    assert "restart needed: docker_ubuntu (docker): its configuration has changed. Not restarted because " \
           "nvidia_container_toolkit_restart_allowed=false." in result.messages()
    assert files[MARKER] == "docker has the NVIDIA runtime in its configuration and needs a restart\n"
    assert restarts(files) == ""
    # The next run, now allowed to, restarts Docker though nothing changes in its configuration.
    again = rendered_again["docker_ubuntu"]
    assert again.rc == 0, again.failures()
    assert again.changed() == ["Restart the runtime with the given command", "Clear the owed restart"]
    assert restarts(on_disk(again)) == RESTART_CALL and MARKER not in on_disk(again)


def test_containerd_without_imports_gets_the_line_on_top_and_nothing_else(rendered, first_files, rendered_again,
                                                                          ctk_bin, tmp_path):
    result, files = rendered["containerd_no_imports"], first_files["containerd_no_imports"]
    assert result.rc == 0, result.failures()
    assert files["etc/containerd/config.toml"] == \
        'imports = ["%s/etc/containerd/conf.d/*.toml"]\n' % result.root + CONTAINERD_CRI
    assert files["etc/containerd/conf.d/99-nvidia.toml"] == ctk_writes(ctk_bin, tmp_path, "containerd", CONTAINERD_CRI,
                                                                       "--nvidia-set-as-default")
    assert restarts(files) == RESTART_CALL and MARKER not in files
    again = rendered_again["containerd_no_imports"]
    assert again.rc == 0, again.failures()
    assert again.changed() == []
    assert on_disk(again) == files


def test_containerd_single_line_imports_is_extended(rendered, first_files):
    result, files = rendered["containerd_one_import"], first_files["containerd_one_import"]
    assert result.rc == 0, result.failures()
    assert files["etc/containerd/config.toml"] == \
        'imports = ["/etc/containerd/other.toml", "%s/etc/containerd/conf.d/*.toml"]\n' % result.root + CONTAINERD_CRI


def test_containerd_imports_over_several_lines_stop_the_run_before_any_restart(rendered, first_files, rendered_again):
    result, files = rendered["containerd_multiline"], first_files["containerd_multiline"]
    assert result.failure_messages() == [
        '%(root)s/etc/containerd/config.toml on containerd_multiline has an imports list over several lines; add '
        '"%(root)s/etc/containerd/conf.d/*.toml" to it (containerd then reads '
        '%(root)s/etc/containerd/conf.d/99-nvidia.toml) and run again.' % {"root": result.root}]
    assert files["etc/containerd/config.toml"] == MULTILINE_IMPORTS + CONTAINERD_CRI
    assert files[MARKER] == "containerd has the NVIDIA runtime in its configuration and needs a restart\n"
    assert restarts(files) == ""
    # Once the list names the drop-in's folder (by hand, as asked), the next run restarts containerd: the
    # restart has been owed since the drop-in was written.
    again = rendered_again["containerd_multiline"]
    assert again.rc == 0, again.failures()
    assert restarts(on_disk(again)) == RESTART_CALL and MARKER not in on_disk(again)


def test_unset_restart_switch_stops_after_the_change_and_keeps_it(rendered, first_files, ctk_bin, tmp_path):
    result, files = rendered["restart_unset"], first_files["restart_unset"]
    [(task, failure)] = result.failed()
    assert task == "Stop until the restart is decided by nvidia_container_toolkit_restart_allowed"
    assert failure["msg"] == (
        "restart_unset needs a restart of crio: its configuration now has the NVIDIA runtime "
        "(%(root)s/etc/crio/crio.conf.d/99-nvidia.toml), and the restart is owed until it happens "
        "(%(root)s/var/lib/restart-pending). Nothing is restarted until you decide: set "
        "nvidia_container_toolkit_restart_allowed=true to restart it (one node at a time, drained first "
        "when node_reboot_kubernetes_node_name is set), or false to leave the restart pending and only "
        "report it. The configuration written so far stays in place either way." % {"root": result.root})
    assert files["etc/crio/crio.conf.d/99-nvidia.toml"] == ctk_writes(ctk_bin, tmp_path, "crio", CRIO_CONF,
                                                                      "--nvidia-set-as-default")
    assert MARKER in files and restarts(files) == ""


def words(message):
    """A message with its whitespace as single spaces: a folded YAML message keeps the line break that follows a
    more indented line (a Jinja expression over several lines)."""
    return " ".join(message.split())


@pytest.mark.parametrize("name, why", [
    ("docker_and_kubelet", "both Docker (dockerd) and a kubelet are installed, so the runtime the kubelet uses "
     "cannot be told"),
    ("no_runtime", "no container runtime found (looked for crio, dockerd and containerd on the PATH)"),
])
def test_a_runtime_that_cannot_be_told_stops_before_any_change(rendered, first_files, tmp_path, name, why):
    result = rendered[name]
    [(task, failure)] = result.failed()
    assert task == "Check that the runtime to configure is known"
    assert words(failure["msg"]) == "%s: %s; set nvidia_container_toolkit_runtime to containerd, crio or docker. " \
                                    "Nothing was changed." % (name, why)
    assert result.changed() == []
    assert first_files[name] == as_prepared(name, tmp_path)


def test_dgx_os_toolkit_is_verified_and_nothing_installed(rendered, first_files, ctk_bin):
    result, files = rendered["dgx_os"], first_files["dgx_os"]
    assert result.rc == 0, result.failures()
    assert [path for path in files if path.startswith(("etc/repos/", "etc/keyrings/"))] == []
    installs = result.results("Install the packages at the pinned version")
    assert installs and all(install.get("skipped") for install in installs), installs
    messages = [words(message) for message in result.messages()]
    assert "dgx_os: toolkit preinstalled (DGX OS): verified, nothing installed; runtime containerd (detected)" \
        in messages
    assert "dgx_os: nvidia-ctk 1.20.1 at %s/nvidia-ctk (preinstalled)" % ctk_bin in messages


def test_rhel9_repository_definition_and_key(rendered, first_files):
    result, files = rendered["rhel9_repository"], first_files["rhel9_repository"]
    assert result.rc == 0, result.failures()
    assert files["etc/keyrings/nvidia-container-toolkit.key"] == files["mirror/gpgkey"]
    assert files["etc/repos/nvidia-container-toolkit.repo"] == (
        "[nvidia-container-toolkit]\n"
        "baseurl = file://%(root)s/mirror/stable/rpm/$basearch\n"
        "enabled = 1\n"
        "gpgcheck = 0\n"
        "gpgkey = file://%(root)s/etc/keyrings/nvidia-container-toolkit.key\n"
        "name = NVIDIA Container Toolkit (stable)\n"
        "repo_gpgcheck = 1\n"
        "sslverify = 1\n\n" % {"root": result.root})


@pytest.mark.parametrize("name, specs, runtime, written", [
    ("check_rhel9", "nvidia-container-toolkit-1.20.1-1, nvidia-container-toolkit-base-1.20.1-1, "
     "libnvidia-container-tools-1.20.1-1, libnvidia-container1-1.20.1-1", "crio", "etc/crio/crio.conf.d/99-nvidia.toml"),
    ("check_ubuntu", "nvidia-container-toolkit=1.20.1-1, nvidia-container-toolkit-base=1.20.1-1, "
     "libnvidia-container-tools=1.20.1-1, libnvidia-container1=1.20.1-1", "docker", "etc/docker/daemon.json"),
])
def test_check_mode_on_a_fresh_node_writes_nothing_and_says_what_it_cannot_preview(check_mode, tmp_path, name, specs,
                                                                                   runtime, written):
    result = check_mode[name]
    assert result.rc == 0, result.failures()
    assert on_disk(result) == as_prepared(name, tmp_path)
    messages = [words(message) for message in result.messages()]
    assert ("check mode: NVIDIA's repository is not configured yet, so %s cannot be previewed; a real run installs "
            "them." % specs) in messages
    assert ("check mode: nvidia-ctk, which computes the %s configuration, is not installed yet on %s; a real run "
            "installs it, writes %s/%s and restarts %s." % (runtime, name, result.root, written, runtime)) in messages


def test_bad_input_is_refused_before_any_change(rendered, first_files, tmp_path):
    result = rendered["bad_input"]
    [(task, failure)] = result.failed()
    assert task == "Check the variables"
    assert failure["problems"] == [
        "nvidia_container_toolkit_version: got 'latest'; expected a toolkit release such as v1.20.1, 1.20.1 or "
        "1.20.1-1, or null for the newest",
        "nvidia_container_toolkit_runtime: got 'cri-o'; expected one of containerd, crio, docker, or null to detect "
        "the node's runtime"]
    assert result.changed() == []
    assert first_files["bad_input"] == as_prepared("bad_input", tmp_path)
