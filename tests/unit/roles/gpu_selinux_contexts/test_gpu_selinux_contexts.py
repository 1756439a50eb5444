"""The gpu_selinux_contexts role on RHEL 9 facts, run on localhost: no SELinux on this machine (nor in the lab).

The real community.general.sefcontext runs. It needs SELinux's Python bindings (``selinux``, ``seobject``), which
this machine lacks, so this file writes test-only stand-ins for them and puts them on the path of the Python that
runs the modules (the module server imports what PYTHONPATH names when it starts): they keep the node's file
context rules in a JSON file per case. A stand-in restorecon on PATH labels the case's scratch files from the same
JSON file (policy rules, then the local ones, the last match winning) and prints what the real one prints with -v.
The role ships none of these.
"""

import json

import pytest

from gpuops_testlib.role_cases import CASE_ROOT, RoleCase, render, write_fake_tool

STATE = "selinux.json"
TOOL_ENV = {"FAKE_SELINUX_STATE": "{root}/" + STATE, "FAKE_SELINUX_ROOT": "{root}"}

# What seobject and selinux offer community.general.sefcontext, no more: the rules of the policy and the local
# ones (those semanage adds), keyed by (target, file type as semanage prints it).
FAKE_SEOBJECT = '''\
import json
import os

SEMANAGE_FCONTEXT_ALL, SEMANAGE_FCONTEXT_REG, SEMANAGE_FCONTEXT_DIR, SEMANAGE_FCONTEXT_CHAR = 0, 1, 2, 3
SEMANAGE_FCONTEXT_BLOCK, SEMANAGE_FCONTEXT_SOCK, SEMANAGE_FCONTEXT_LINK, SEMANAGE_FCONTEXT_PIPE = 4, 5, 6, 7
file_types = {}
FTYPES = {"a": "all files", "b": "block device", "c": "character device", "d": "directory", "f": "regular file",
          "l": "symbolic link", "p": "named pipe", "s": "socket"}


class fcontextRecords:
    def __init__(self, store=""):
        self.path = os.environ["FAKE_SELINUX_STATE"]
        with open(self.path) as handle:
            self.state = json.load(handle)
        self.equiv = {}
        self.equiv_dist = {}

    def set_reload(self, status):
        self.reload = status

    def get_all(self, locallist=False):
        rules = {} if locallist else dict(self.state["policy"])
        rules.update(self.state["local"])
        return dict((tuple(key.split("\\t")), tuple(context)) for key, context in rules.items())

    def _save(self, call, target, setype, ftype, serange, seuser):
        self.state["local"][target + "\\t" + FTYPES[ftype]] = [seuser, "object_r", setype, serange]
        with open(self.path, "w") as handle:
            json.dump(self.state, handle)
        with open(self.path + ".calls", "a") as log:
            log.write(json.dumps(["semanage", call, target, setype, ftype]) + "\\n")

    def add(self, target, setype, ftype, serange, seuser):
        self._save("add", target, setype, ftype, serange, seuser)

    def modify(self, target, setype, ftype, serange, seuser):
        self._save("modify", target, setype, ftype, serange, seuser)
'''

FAKE_SELINUX = '''\
def is_selinux_enabled():
    return 1
'''

# restorecon [-R] [-n] [-v] -- PATH...: each path (and, with -R, everything under it) gets the type of the last
# rule matching its node path (the path under the case root), local rules after the policy's.
FAKE_RESTORECON = """
import json, os, re, sys
state_file, root = os.environ["FAKE_SELINUX_STATE"], os.environ["FAKE_SELINUX_ROOT"]
state = json.load(open(state_file))
with open(state_file + ".calls", "a") as log:
    log.write(json.dumps(["restorecon"] + sys.argv[1:]) + "\\n")
flags = sys.argv[1:sys.argv.index("--")]
paths = []
for path in sys.argv[sys.argv.index("--") + 1:]:
    paths.append(path)
    if "-R" in flags and os.path.isdir(path) and not os.path.islink(path):
        for top, dirs, files in os.walk(path):
            dirs.sort()
            paths += sorted(os.path.join(top, name) for name in dirs + files)
rules = [(key.split("\\t")[0], context[2])
         for part in ("policy", "local") for key, context in state[part].items()]
for path in paths:
    node_path = path[len(root):]
    wanted = [setype for target, setype in rules if re.fullmatch(target, node_path)]
    now = state["labels"].get(node_path, "unlabeled_t")
    if wanted and wanted[-1] != now:
        if "-n" not in flags:
            state["labels"][node_path] = wanted[-1]
        if "-v" in flags:
            print("%s %s from system_u:object_r:%s:s0 to system_u:object_r:%s:s0"
                  % ("Would relabel" if "-n" in flags else "Relabeled", path, now, wanted[-1]))
json.dump(state, open(state_file, "w"))
"""

# The RHEL policy's own rules for these trees, as far as the cases need them.
POLICY = {"/dev(/.*)?\tall files": ["system_u", "object_r", "device_t", "s0"],
          "/usr/bin(/.*)?\tall files": ["system_u", "object_r", "bin_t", "s0"],
          "/var/lib(/.*)?\tall files": ["system_u", "object_r", "var_lib_t", "s0"]}
LOCAL = {"/dev/nvidia.*\tall files": ["system_u", "object_r", "xserver_misc_device_t", "s0"],
         "/usr/bin/nvidia-.*\tall files": ["system_u", "object_r", "xserver_exec_t", "s0"],
         "/var/lib/kubelet(/.*)?\tall files": ["system_u", "object_r", "container_file_t", "s0"]}

# A GPU node's files (regular files standing in for the device nodes) with the labels the policy gives them.
FILES = {"/dev/nvidia0": "device_t", "/dev/nvidiactl": "device_t", "/dev/nvidia-uvm": "device_t",
         "/dev/nvidia-caps": "device_t", "/dev/nvidia-caps/nvidia-cap1": "device_t", "/dev/null": "device_t",
         "/usr/bin/nvidia-smi": "bin_t", "/usr/bin/nvidia-persistenced": "bin_t", "/usr/bin/ls": "bin_t",
         "/var/lib/kubelet": "var_lib_t", "/var/lib/kubelet/pods": "var_lib_t",
         "/var/lib/kubelet/pods/4b1d": "var_lib_t",
         "/var/lib/kubelet/pods/4b1d/volumes": "var_lib_t", "/var/lib/kubelet/device-plugins": "var_lib_t",
         "/var/lib/kubelet/device-plugins/kubelet.sock": "var_lib_t", "/var/lib/rpm": "var_lib_t"}
DIRECTORIES = {"/dev/nvidia-caps", "/var/lib/kubelet", "/var/lib/kubelet/pods", "/var/lib/kubelet/pods/4b1d",
               "/var/lib/kubelet/pods/4b1d/volumes", "/var/lib/kubelet/device-plugins"}
# What the default rules give the files under the restore paths; /dev/null, ls and rpm are outside them.
RELABELED = {"/dev/nvidia0": "xserver_misc_device_t", "/dev/nvidiactl": "xserver_misc_device_t",
             "/dev/nvidia-uvm": "xserver_misc_device_t", "/dev/nvidia-caps": "xserver_misc_device_t",
             "/dev/nvidia-caps/nvidia-cap1": "xserver_misc_device_t", "/usr/bin/nvidia-smi": "xserver_exec_t",
             "/usr/bin/nvidia-persistenced": "xserver_exec_t", "/var/lib/kubelet": "container_file_t",
             "/var/lib/kubelet/pods": "container_file_t", "/var/lib/kubelet/pods/4b1d": "container_file_t",
             "/var/lib/kubelet/pods/4b1d/volumes": "container_file_t",
             "/var/lib/kubelet/device-plugins": "container_file_t",
             "/var/lib/kubelet/device-plugins/kubelet.sock": "container_file_t"}

# The restore paths of the defaults, under the case's root.
SCRATCH_PATHS = {"gpu_selinux_contexts_restore_paths": [
    CASE_ROOT + "/dev/nvidia*", CASE_ROOT + "/usr/bin/nvidia-*", CASE_ROOT + "/var/lib/kubelet"]}


def node(local=None, labels=None):
    """prepare(root): the node's files, the policy with these local rules, the files with these labels."""
    def prepare(root):
        for path in FILES:
            if path in DIRECTORIES:
                (root / path[1:]).mkdir(parents=True, exist_ok=True)
            else:
                (root / path[1:]).parent.mkdir(parents=True, exist_ok=True)
                (root / path[1:]).write_text("")
        state = {"policy": POLICY, "local": local or {}, "labels": dict(FILES, **(labels or {}))}
        (root / STATE).write_text(json.dumps(state))
        write_fake_tool(root / "bin", "restorecon", FAKE_RESTORECON)
    return prepare


def selinux(status, mode=None):
    facts = {"status": status, "policyvers": 33, "config_mode": mode, "mode": mode, "type": "targeted"}
    return {"selinux": facts if status == "enabled" else {"status": status}}


ENFORCING = selinux("enabled", "enforcing")


def case(name, facts=None, role_vars=None, **prepare):
    """One host of the run: enforcing with the scratch paths unless told otherwise."""
    return RoleCase(name, "gpu_selinux_contexts", "rhel9", dict(SCRATCH_PATHS if role_vars is None else role_vars),
                    node(**prepare), TOOL_ENV, facts=ENFORCING if facts is None else facts)


def rules(*pairs):
    return {"gpu_selinux_contexts_rules": [{"target": target, "setype": setype} for target, setype in pairs]}


# The rules are set, the files still carry the policy's labels (a node where the driver was just loaded).
STALE = {"local": LOCAL, "labels": {}}
CASES = [
    case("enforcing", role_vars=dict(SCRATCH_PATHS, gpu_selinux_contexts_enabled="yes")),
    case("rules_set_files_stale", **STALE),
    case("permissive", selinux("enabled", "permissive")),
    case("disabled", selinux("disabled")),
    case("switched_off", role_vars=dict(SCRATCH_PATHS, gpu_selinux_contexts_enabled="false")),
    case("type_without_t", role_vars=dict(SCRATCH_PATHS, **rules(("/dev/nvidia.*", "xserver_misc_device_t"),
                                                                 ("/usr/bin/nvidia-.*", "xserver_exec")))),
    case("empty_target", role_vars=dict(SCRATCH_PATHS, **rules(("", "container_file_t")))),
    case("glob_in_a_directory", role_vars={"gpu_selinux_contexts_restore_paths": ["/var/lib/kubelet/*/volumes"]}),
]
RUN_TWICE = ("enforcing", "rules_set_files_stale")
CHECK_CASES = [case("check_fresh"), case("check_stale", **STALE)]

BAD_INPUT = {
    "type_without_t": 'gpu_selinux_contexts_rules: got '
                      '[{"setype": "xserver_misc_device_t", "target": "/dev/nvidia.*"}, '
                      '{"setype": "xserver_exec", "target": "/usr/bin/nvidia-.*"}]; expected an SELinux type as the '
                      'setype of every rule, lowercase letters, digits and _ ending in _t, such as xserver_exec_t; '
                      "not 'xserver_exec' in rule 2 (target /usr/bin/nvidia-.*)",
    "empty_target": 'gpu_selinux_contexts_rules: got [{"setype": "container_file_t", "target": ""}]; expected a target '
                    'in every rule, a regular expression of a whole absolute path without spaces as semanage fcontext '
                    "takes it, such as /dev/nvidia.*; not '' in rule 1 (setype container_file_t)",
    "glob_in_a_directory": 'gpu_selinux_contexts_restore_paths: got ["/var/lib/kubelet/*/volumes"]; expected absolute '
                           "paths without spaces whose last part alone may be a glob, such as /dev/nvidia* or "
                           "/var/lib/kubelet",
}


@pytest.fixture(scope="module")
def bindings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("selinux_bindings")
    (folder / "seobject.py").write_text(FAKE_SEOBJECT)
    (folder / "selinux.py").write_text(FAKE_SELINUX)
    return folder


def render_with_bindings(bindings, work_dir, cases, check=False):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(bindings), prepend=":")
        return render(work_dir, cases, check=check)


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gpu_selinux_contexts")


@pytest.fixture(scope="module")
def rendered(bindings, work_dir):
    return render_with_bindings(bindings, work_dir, CASES)


@pytest.fixture(scope="module")
def rendered_again(bindings, work_dir, rendered):
    return render_with_bindings(bindings, work_dir, [c for c in CASES if c.name in RUN_TWICE])


@pytest.fixture(scope="module")
def check_mode(bindings, tmp_path_factory):
    work_dir = tmp_path_factory.mktemp("gpu_selinux_contexts_check")
    return render_with_bindings(bindings, work_dir, CHECK_CASES, check=True)


def state(result):
    return json.loads((result.root / STATE).read_text())


def calls(result):
    log = result.root / (STATE + ".calls")
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def scratch(result, *node_paths):
    return [str(result.root) + path for path in node_paths]


DRY_RUN = ["restorecon", "-R", "-n", "-v", "--"]
RELABEL = ["restorecon", "-R", "-v", "--"]
# What find gives restorecon: the matches of each restore path, sorted.
FOUND = ("/dev/nvidia-caps", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidiactl", "/usr/bin/nvidia-persistenced",
         "/usr/bin/nvidia-smi", "/var/lib/kubelet")


def test_enforcing_sets_the_rules_and_relabels_the_matching_files_only(rendered):
    result = rendered["enforcing"]
    assert result.rc == 0, result.failures()
    assert state(result)["local"] == LOCAL
    # The first run's calls (the log also holds the second run's once that fixture has run).
    assert calls(result)[:5] == [
        ["semanage", "add", "/dev/nvidia.*", "xserver_misc_device_t", "a"],
        ["semanage", "add", "/usr/bin/nvidia-.*", "xserver_exec_t", "a"],
        ["semanage", "add", "/var/lib/kubelet(/.*)?", "container_file_t", "a"],
        DRY_RUN + scratch(result, *FOUND),
        RELABEL + scratch(result, *FOUND),
    ]
    labels = state(result)["labels"]
    assert dict((path, labels[path]) for path in RELABELED) == RELABELED
    assert (labels["/dev/null"], labels["/usr/bin/ls"], labels["/var/lib/rpm"]) == ("device_t", "bin_t", "var_lib_t")
    assert result.changed() == ["Set the file context rules", "Relabel the files"]
    [relabel] = result.results("Relabel the files")
    assert len(relabel["stdout_lines"]) == len(RELABELED)
    assert all(line.startswith("Relabeled " + str(result.root)) for line in relabel["stdout_lines"])


def test_enforcing_second_run_changes_nothing(rendered, rendered_again):
    result = rendered_again["enforcing"]
    assert result.rc == 0, result.failures()
    assert result.changed() == []
    # Only the dry run, which found nothing to relabel.
    assert calls(result)[5:] == [DRY_RUN + scratch(result, *FOUND)]
    assert result.results("Relabel the files")[0]["skipped"]


def test_rules_in_place_and_files_mislabeled_relabels_without_touching_the_rules(rendered, rendered_again):
    result = rendered["rules_set_files_stale"]
    assert result.rc == 0, result.failures()
    assert result.changed() == ["Relabel the files"]
    # The first run's calls (the log also holds the second run's).
    assert calls(result)[:2] == [DRY_RUN + scratch(result, *FOUND), RELABEL + scratch(result, *FOUND)]
    labels = state(result)["labels"]
    assert dict((path, labels[path]) for path in RELABELED) == RELABELED
    again = rendered_again["rules_set_files_stale"]
    assert again.changed() == []
    assert calls(again)[2:] == [DRY_RUN + scratch(again, *FOUND)]


@pytest.mark.parametrize("name, reason", [
    ("permissive", "SELinux is enabled in permissive mode (the GPU file contexts are set only where it is enforcing)"),
    ("disabled", "SELinux is disabled (the GPU file contexts are set only where it is enforcing)"),
    ("switched_off", "gpu_selinux_contexts_enabled is false"),
])
def test_nothing_is_done_where_selinux_is_not_enforcing_and_the_line_says_why(rendered, name, reason):
    result = rendered[name]
    assert result.rc == 0, result.failures()
    assert result.changed() == []
    assert calls(result) == []
    assert state(result)["local"] == {}
    [line] = [said["msg"] for said in result.results("Say why the file contexts are left as they are")]
    assert line == name + ": nothing done, " + reason


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_is_refused_before_any_change_naming_the_variable_and_the_entry(rendered, name):
    result = rendered[name]
    [(task, failure)] = result.failed()
    assert task == "Check the variables"
    assert failure["problems"] == [BAD_INPUT[name]]
    assert failure["msg"] == "1 input to fix before anything changes on %s:\n%s" % (name, BAD_INPUT[name])
    assert result.changed() == [] and calls(result) == []


def test_check_mode_changes_nothing_and_reports_the_rules_and_the_relabelling(check_mode):
    result = check_mode["check_fresh"]
    assert result.rc == 0, result.failures()
    assert state(result)["local"] == {} and state(result)["labels"] == FILES
    # Only the dry run ran, with the rules the node has now: nothing to relabel yet.
    assert calls(result) == [DRY_RUN + scratch(result, *FOUND)]
    [rules_set] = result.results("Set the file context rules")
    assert rules_set["changed"] and [item["diff"]["prepared"] for item in rules_set["results"]] == [
        "# Addition to semanage file context mappings\n+%s      a      system_u:object_r:%s:s0\n" % (target, setype)
        for target, setype in [("/dev/nvidia.*", "xserver_misc_device_t"), ("/usr/bin/nvidia-.*", "xserver_exec_t"),
                               ("/var/lib/kubelet(/.*)?", "container_file_t")]]
    [shown] = result.results("Show what restorecon would relabel")
    assert shown["changed"]
    assert shown["msg"] == ["with the new rules for /dev/nvidia.*, /usr/bin/nvidia-.*, /var/lib/kubelet(/.*)?, "
                            "restorecon -R -v would then run on " + " ".join(scratch(result, *FOUND))]
    assert result.results("Relabel the files")[0]["skipped"]


def test_check_mode_lists_the_files_the_rules_in_place_would_relabel(check_mode):
    result = check_mode["check_stale"]
    assert result.rc == 0, result.failures()
    assert state(result)["labels"] == FILES
    assert result.changed() == ["Show what restorecon would relabel"]
    [shown] = result.results("Show what restorecon would relabel")
    assert shown["msg"] == [
        "Would relabel %s%s from system_u:object_r:%s:s0 to system_u:object_r:%s:s0"
        % (result.root, path, FILES[path], RELABELED[path])
        for path in ["/dev/nvidia-caps", "/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-uvm", "/dev/nvidia0",
                     "/dev/nvidiactl", "/usr/bin/nvidia-persistenced", "/usr/bin/nvidia-smi", "/var/lib/kubelet",
                     "/var/lib/kubelet/device-plugins", "/var/lib/kubelet/pods",
                     "/var/lib/kubelet/device-plugins/kubelet.sock", "/var/lib/kubelet/pods/4b1d",
                     "/var/lib/kubelet/pods/4b1d/volumes"]]
