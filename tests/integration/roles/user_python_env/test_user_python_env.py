"""The user_python_env role through playbooks/python_env.yml on this machine, for real and without a network: a
virtualenv made with python3 -m venv and filled by pip from a local wheelhouse of stand-in wheels
(gpuops_testlib/python_env_standins.py), whose Horovod has a horovodrun that prints --check-build as the real one
does. So the stamp's idempotence (a second run changes nothing, a changed version rebuilds), check mode, conda first and pip
after (a stand-in conda on PATH), the compile of a stand-in sdist through the collection's recipe with NCCL from a
nvidia-nccl wheel's files (a stand-in nvcc), the check of the controllers, and each bad input's message all run
here. The real framework and Horovod are the lab's.
"""

import getpass
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, mode_options, run_playbook
from gpuops_testlib.role_cases import BECOME_EXPECTED, become_cases, run_task_cases, shown, write_fake_tool
from gpuops_testlib.versions import pinned
from gpuops_testlib import python_env_standins as standins

PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "python_env.yml")
ROLE = Path(REPO_ROOT) / "roles" / "user_python_env"
RECIPE = Path(REPO_ROOT) / "roles" / "benchmark_image" / "files" / "horovod_wheel.sh"
HOROVOD = pinned("horovod")
TENSORFLOW = pinned("tensorflow")
# The interpreter the environments are made from: the system's, as on the lab's Debian nodes.
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
BUILD_PACKAGES = ["cmake", "wheel", "packaging", "cloudpickle", "psutil", "pyyaml"]
PLAN_TASK = "Say what is built"
IMPORTS = "import tensorflow, horovod; print(tensorflow.__version__, horovod.__version__)"
HOST_CHECK = "Fail on what the host cannot give"


def wheelhouse(folder, horovod_built=("TensorFlow", "MPI", "Gloo"), sdist=False):
    """A wheelhouse of stand-ins: tensorflow-cpu and tensorflow at the pin and 2.15.0, and Horovod's wheel (or sdist)."""
    folder.mkdir(parents=True)
    for version in (TENSORFLOW, "2.15.0"):
        standins.write_package(str(folder), "tensorflow-cpu", version, "tensorflow")
        standins.write_package(str(folder), "tensorflow", version, "tensorflow")
    if sdist:
        standins.write_horovod_sdist(str(folder), HOROVOD)
        for name in BUILD_PACKAGES:
            standins.write_package(str(folder), name, "1.0", name + "_standin")
        standins.write_wheel(str(folder), "nvidia-nccl-cu12", "2.23.4", {
            "nvidia/nccl/include/nccl.h": "#define NCCL_MAJOR 2\n", "nvidia/nccl/lib/libnccl.so.2": ""})
    else:
        standins.write_horovod_wheel(str(folder), HOROVOD, list(horovod_built))
    return folder


def build(tmp_path, env_dir, check=False, tools=None, **role_vars):
    """playbooks/python_env.yml on this machine as the user Ansible connects as; tools: stand-ins first on PATH."""
    extra = dict({"user_python_env_hosts": "localhost", "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                  "user_python_env_dir": str(env_dir), "user_python_env_python": PYTHON,
                  "user_python_env_kind": "venv", "user_python_env_cuda_home": str(tmp_path / "no-cuda")}, **role_vars)
    bin_dir = tmp_path / "bin"
    for name, script in (tools or {}).items():
        write_fake_tool(bin_dir, name, script)
    env = ansible_env(path_prefix=bin_dir if tools else None)
    return run_playbook(PLAYBOOK, "localhost,", extra, mode_options(check=check), env=env, timeout=300)


def env_python(env_dir, code):
    return subprocess.check_output([str(env_dir / "bin" / "python"), "-c", code], text=True).strip()


@pytest.fixture(scope="module")
def venv_runs(tmp_path_factory):
    """A virtualenv built, built again with the same inputs, then with another framework version."""
    tmp_path = tmp_path_factory.mktemp("user_python_env")
    house = wheelhouse(tmp_path / "wheels")
    env_dir = tmp_path / "home" / "venvs" / "horovod"
    first = build(tmp_path, env_dir, user_python_env_wheelhouse=str(house))
    stamp_after_first = (env_dir / "gpuops-env.json").read_text() if first.rc == 0 else None
    imports_after_first = env_python(env_dir, IMPORTS) if first.rc == 0 else None
    again = build(tmp_path, env_dir, user_python_env_wheelhouse=str(house))
    changed_version = build(tmp_path, env_dir, user_python_env_wheelhouse=str(house),
                            user_python_env_framework_version="2.15.0")
    return env_dir, first, (stamp_after_first, imports_after_first), again, changed_version


def result_fact(done):
    return done.result("Publish the environment as user_python_env_result")["ansible_facts"]["user_python_env_result"]


def test_a_virtualenv_from_a_wheelhouse_holds_the_pinned_framework_and_horovods_wheel(venv_runs):
    env_dir, first, (stamp, imports), _again, _changed = venv_runs
    assert first.rc == 0, first.explain()
    result = result_fact(first)
    assert result["python"] == str(env_dir / "bin" / "python") and result["kind"] == "venv"
    assert (result["framework"], result["horovod"], result["horovod_from"]) == (
        "tensorflow-cpu==" + TENSORFLOW, HOROVOD, "wheel horovod-%s-py3-none-any.whl" % HOROVOD)
    assert result["horovod_check_build"].startswith("Horovod v%s:\n\nAvailable Frameworks:\n    [X] TensorFlow" % HOROVOD)
    assert (result["frameworks"], result["controllers"], result["gpu_operations"], result["cpu_only"]) == (
        ["TensorFlow"], ["MPI", "Gloo"], [], True)
    assert imports == TENSORFLOW + " " + HOROVOD
    # No CUDA here: the plan says the build is for CPU, and pip read only the wheelhouse.
    assert "tensorflow-cpu==%s and Horovod %s from wheel" % (TENSORFLOW, HOROVOD) in first.result(PLAN_TASK)["msg"]
    install = first.result("Install the framework")["cmd"]
    assert install[-4:] == ["--no-index", "--find-links", str(env_dir.parent.parent.parent / "wheels"),
                            "tensorflow-cpu==" + TENSORFLOW]
    recorded = json.loads(stamp)
    assert recorded["complete"] and recorded["key"] == result["key"] and recorded["inputs"]["python"] == env_python(
        env_dir, "import sys; print('%d.%d' % sys.version_info[:2])")


def test_a_second_run_with_the_same_inputs_changes_nothing(venv_runs):
    _env_dir, first, _stamp, again, _changed = venv_runs
    assert again.rc == 0, again.explain()
    assert again.changed_tasks("localhost") == []
    assert again.host_stats("localhost")["changed"] == 0
    assert result_fact(again)["built"] is False and result_fact(again)["key"] == result_fact(first)["key"]
    assert again.result(PLAN_TASK)["msg"].split(": ", 1)[1].startswith("up to date with")


def test_a_changed_framework_version_rebuilds_the_environment(venv_runs):
    env_dir, first, _stamp, _again, changed = venv_runs
    assert changed.rc == 0, changed.explain()
    assert result_fact(changed)["built"] is True and result_fact(changed)["key"] != result_fact(first)["key"]
    assert "Remove the environment built from other inputs" in changed.changed_tasks("localhost")
    assert env_python(env_dir, "import tensorflow; print(tensorflow.__version__)") == "2.15.0"


def test_check_mode_says_what_it_would_build_and_changes_nothing(tmp_path):
    house = wheelhouse(tmp_path / "wheels")
    done = build(tmp_path, tmp_path / "env", check=True, user_python_env_wheelhouse=str(house))
    assert done.rc == 0, done.explain()
    plan = done.result(PLAN_TASK)["msg"]
    assert plan.startswith("%s (venv, Python " % (tmp_path / "env")) and ": would be built (check mode) with tensorflow-cpu==" in plan
    assert plan.rstrip().endswith("pip from wheelhouse " + str(house))
    assert not (tmp_path / "env").exists()
    assert result_fact(done)["horovod_check_build"] is None


# conda create makes the environment (here a virtualenv, so that pip works in it) and records its arguments.
FAKE_CONDA = """
    import json, os, subprocess, sys
    with open(os.environ["FAKE_CONDA_CALLS"], "a") as calls:
        calls.write(json.dumps(sys.argv[1:]) + "\\n")
    prefix = sys.argv[sys.argv.index("--prefix") + 1]
    subprocess.check_call([{python!r}, "-m", "venv", prefix])
"""


def test_conda_on_the_users_path_makes_the_environment_then_pip_fills_it(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CONDA_CALLS", str(tmp_path / "conda-calls"))
    house = wheelhouse(tmp_path / "wheels")
    done = build(tmp_path, tmp_path / "env", tools={"conda": FAKE_CONDA.format(python=PYTHON)},
                 user_python_env_kind="auto", user_python_env_wheelhouse=str(house),
                 user_python_env_conda_options=["--offline"])
    assert done.rc == 0, done.explain()
    assert result_fact(done)["kind"] == "conda"
    python_version = json.loads((tmp_path / "env" / "gpuops-env.json").read_text())["inputs"]["python"]
    calls = [json.loads(line) for line in (tmp_path / "conda-calls").read_text().splitlines()]
    assert calls == [["create", "--yes", "--quiet", "--prefix", str(tmp_path / "env"), "--offline",
                      "python=" + python_version, "pip"]]
    assert done.result("Install the framework")["cmd"][0] == str(tmp_path / "env" / "bin" / "python")


def test_the_sdist_is_compiled_with_the_collections_recipe_and_nccl_from_the_nvidia_wheel(tmp_path):
    house = wheelhouse(tmp_path / "wheels", sdist=True)
    cuda = tmp_path / "cuda"
    write_fake_tool(cuda / "bin", "nvcc", "")
    done = build(tmp_path, tmp_path / "env", tools={"mpicxx": ""}, user_python_env_wheelhouse=str(house),
                 user_python_env_cuda_home=str(cuda), user_python_env_nccl_wheel="nvidia-nccl-cu12==2.23.4",
                 user_python_env_nccl="required", user_python_env_build_jobs=2)
    assert done.rc == 0, done.explain()
    result = result_fact(done)
    # A host with CUDA gets tensorflow, not tensorflow-cpu, and Horovod with NCCL for GPU operations.
    assert (result["framework"], result["horovod_from"], result["gpu_operations"], result["cpu_only"]) == (
        "tensorflow==" + TENSORFLOW, "sdist", ["NCCL"], False)
    site_packages = env_python(tmp_path / "env", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    flags = json.loads(Path(site_packages, "horovod", "build_env.json").read_text())
    nccl = os.path.join(site_packages, "nvidia", "nccl")
    compiled_with = ("HOROVOD_WITH_TENSORFLOW", "HOROVOD_WITH_GLOO", "HOROVOD_WITH_MPI", "HOROVOD_GPU_OPERATIONS",
                     "HOROVOD_CUDA_HOME", "HOROVOD_NCCL_LINK", "LDFLAGS", "MAKEFLAGS")
    assert dict((name, flags[name]) for name in compiled_with) == {
        "HOROVOD_WITH_TENSORFLOW": "1", "HOROVOD_WITH_GLOO": "1", "HOROVOD_WITH_MPI": "1",
        "HOROVOD_GPU_OPERATIONS": "NCCL", "HOROVOD_CUDA_HOME": str(cuda), "HOROVOD_NCCL_LINK": "SHARED",
        "LDFLAGS": "-Wl,-rpath," + nccl + "/lib", "MAKEFLAGS": "-j2"}
    assert not (tmp_path / "env" / "build").exists()


def test_horovod_without_a_controller_the_site_needs_fails_naming_it(tmp_path):
    house = wheelhouse(tmp_path / "wheels", horovod_built=("TensorFlow", "MPI"))
    done = build(tmp_path, tmp_path / "env", user_python_env_wheelhouse=str(house))
    assert done.rc != 0
    message = done.result("Fail when Horovod lacks the framework or a controller the site needs")["msg"]
    assert message.startswith("Horovod in %s on localhost lacks gloo (horovodrun --check-build: Horovod v%s:"
                              % (tmp_path / "env", HOROVOD))
    # Not marked as built: the next run builds again.
    assert json.loads((tmp_path / "env" / "gpuops-env.json").read_text())["complete"] is False


def test_bad_inputs_fail_before_anything_naming_the_variable(tmp_path):
    not_a_program = tmp_path / "conda"
    not_a_program.write_text("not a program")
    done = build(tmp_path, tmp_path / "env", user_python_env_wheelhouse=str(tmp_path / "no-wheels"),
                 user_python_env_conda=str(not_a_program))
    assert done.rc != 0
    assert done.result(HOST_CHECK)["msg"] == [
        "user_python_env_wheelhouse: %s is not a folder %s can read on localhost; expected a folder of wheels on the "
        "host, such as the one tools/build_horovod.sh prints" % (tmp_path / "no-wheels", getpass.getuser()),
        "user_python_env_conda: %s is not an executable file on localhost; expected the path of conda, such as "
        "~/miniforge3/bin/conda, or null for the one on the PATH" % not_a_program]
    unknown = build(tmp_path, tmp_path / "env", user_python_env_framework="mxnet", user_python_env_build_jobs=0)
    assert unknown.rc != 0
    assert "user_python_env_framework must be one of: tensorflow, pytorch, got: mxnet" in unknown.explain()
    nobody = build(tmp_path, tmp_path / "env", user_python_env_job_user="no-such-user-here")
    assert nobody.rc != 0
    assert nobody.result("Fail when the job user does not exist")["msg"] == (
        "user_python_env_job_user: no user 'no-such-user-here' on localhost; expected an existing user whose "
        "environment this is (null: the user Ansible connects as).")
    assert not (tmp_path / "env").exists()


def test_a_folder_the_role_did_not_make_is_left_alone(tmp_path):
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "notes.txt").write_text("mine")
    done = build(tmp_path, tmp_path / "env", user_python_env_wheelhouse=str(wheelhouse(tmp_path / "wheels")))
    assert done.rc != 0
    assert done.result(HOST_CHECK)["msg"] == [
        "user_python_env_dir: %s holds notes.txt but no gpuops-env.json; expected an empty or new folder, or an "
        "environment this role made" % (tmp_path / "env")]
    assert (tmp_path / "env" / "notes.txt").read_text() == "mine"


def test_the_recipe_links_the_nccl_of_a_nvidia_wheel_shared(tmp_path):
    write_fake_tool(tmp_path / "cuda" / "bin", "nvcc", "")
    (tmp_path / "nccl" / "lib").mkdir(parents=True)
    (tmp_path / "nccl" / "lib" / "libnccl.so.2").write_text("")
    flags = subprocess.check_output(["bash", str(RECIPE), "--flags", "pytorch"], text=True, env=dict(
        os.environ, CUDA_HOME=str(tmp_path / "cuda"), NCCL_HOME=str(tmp_path / "nccl"))).split()
    assert flags[-3:] == ["HOROVOD_CUDA_HOME=%s" % (tmp_path / "cuda"), "HOROVOD_NCCL_HOME=%s" % (tmp_path / "nccl"),
                          "HOROVOD_NCCL_LINK=SHARED"]
    # A tarball's NCCL (with libnccl.so) is linked as Horovod links it by default.
    (tmp_path / "nccl" / "lib" / "libnccl.so").write_text("")
    flags = subprocess.check_output(["bash", str(RECIPE), "--flags", "pytorch"], text=True, env=dict(
        os.environ, CUDA_HOME=str(tmp_path / "cuda"), NCCL_HOME=str(tmp_path / "nccl"))).split()
    assert flags[-1] == "HOROVOD_NCCL_HOME=%s" % (tmp_path / "nccl")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("user_python_env_become"), become_cases(
        [ROLE / "vars" / "main.yml"], "user_python_env_job_user", "__user_python_env_become",
        "__user_python_env_job_user"))


@pytest.mark.parametrize("case, become, user", BECOME_EXPECTED)
def test_ansible_becomes_the_job_user_only_when_it_connects_as_another(rendered, case, become, user):
    assert shown(rendered, case) == {"become": become, "user": user}
