"""The benchmark_image role without building: check mode on a site's framework image shows the Containerfile it
would build (sshd, OpenMPI where the base has none, Horovod compiled with the collection's recipe, the benchmark at
the launchers' path) and writes nothing; bad inputs stop it before anything, named. The lab builds its workload
image with this role for real (tools/build_workload_image.sh), and tests/e2e/test_benchmark_image.py runs it again
there to show that a second run builds nothing."""

import os
import sys

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, mode_options, run_playbook
from gpuops_testlib.versions import pinned

PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "benchmark_image.yml")
# A site's own framework image, pinned by digest.
NGC = "nvcr.io/nvidia/pytorch@sha256:" + "0123456789abcdef" * 4
NAME = "registry.example.com/ml/gpuops-benchmark:horovod-0.28.1"
PLAN_TASK = "Say what was built"
CHECK_TASK = "Check the variables before anything changes"


def _run(tmp_path, check=False, **variables):
    extra = dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                  "benchmark_image_work_dir": str(tmp_path), "benchmark_image_builder": "podman"}, **variables)
    return run_playbook(PLAYBOOK, "localhost,", extra, mode_options(check=check, diff=check), env=ansible_env(), timeout=300)


def test_check_mode_on_a_framework_image_shows_the_containerfile_and_writes_nothing(tmp_path):
    done = _run(tmp_path, check=True, benchmark_image_base=NGC, benchmark_image_name=NAME, benchmark_image_framework="pytorch")
    assert done.rc == 0, done.explain()
    assert done.result(PLAN_TASK)["msg"].startswith(NAME + " from " + NGC + ": would be built (check mode) (recipe ")
    containerfile = done.result("Write the Containerfile")["diff"][0]["after"]
    assert containerfile.splitlines()[0] == "FROM " + NGC
    # The base's own Python (NGC's framework is there): no virtualenv; Horovod compiled in the image for PyTorch.
    assert "venv" not in containerfile
    assert "bash /tmp/horovod_wheel.sh /tmp/horovod/horovod-0.28.1.tar.gz \\\n            pytorch /tmp/horovod/dist python3 -m pip" \
        in containerfile
    assert "RUN python3 /tmp/horovod_image_check.py horovod.torch && rm /tmp/horovod_image_check.py" in containerfile
    assert 'need="openssh-server openssh-client g++ make python3-dev"' in containerfile
    assert "openmpi-bin libopenmpi-dev" in containerfile
    assert "printf 'StrictModes no\\n' > /etc/ssh/sshd_config.d/gpuops-mpi-operator.conf" in containerfile
    assert containerfile.rstrip().endswith("COPY gpuops_benchmark.py /opt/gpuops/benchmark/gpuops_benchmark.py")
    assert not list(tmp_path.iterdir())


def test_without_horovod_the_image_has_the_framework_and_the_benchmark_and_compiles_nothing(tmp_path):
    """benchmark_image_horovod false: an image for torchrun and the PyTorchJob launcher, from the base's PyTorch."""
    done = _run(tmp_path, check=True, benchmark_image_base=NGC, benchmark_image_name=NAME, benchmark_image_framework="pytorch",
                benchmark_image_horovod=False)
    assert done.rc == 0, done.explain()
    containerfile = done.result("Write the Containerfile")["diff"][0]["after"]
    assert "horovod_wheel.sh" not in containerfile and "import horovod" not in containerfile
    assert "g++" not in containerfile and "libopenmpi-dev" not in containerfile
    assert 'RUN python3 -c "import torch as framework; \\\nprint(\'torch\', framework.__version__, \'without horovod\')"' \
        in containerfile
    assert containerfile.rstrip().endswith("COPY gpuops_benchmark.py /opt/gpuops/benchmark/gpuops_benchmark.py")
    assert not list(tmp_path.iterdir())


def test_without_a_base_the_recipe_builds_from_the_pinned_framework_image(tmp_path):
    """The default base is versions.yml's NGC TensorFlow image (which cannot be pulled here: check mode only)."""
    done = _run(tmp_path, check=True, benchmark_image_name=NAME)
    assert done.rc == 0, done.explain()
    base = pinned("benchmark_image_base")
    assert base.startswith("nvcr.io/nvidia/tensorflow:") and base.endswith("-tf2-py3")
    assert done.result("Write the Containerfile")["diff"][0]["after"].splitlines()[0] == "FROM " + base


@pytest.mark.parametrize("base", ["nvcr.io/nvidia/tensorflow", "nvcr.io/nvidia/tensorflow:latest",
                                  "registry.example.com:5000/ml/tensorflow"])
def test_a_base_that_is_not_pinned_is_refused_naming_it(tmp_path, base):
    done = _run(tmp_path, benchmark_image_base=base, benchmark_image_name=NAME)
    assert done.rc != 0
    assert done.result(CHECK_TASK)["problems"] == [
        "benchmark_image_base: got '%s'; expected a framework image pinned by a tag other than latest or by a digest, "
        "such as nvcr.io/nvidia/tensorflow:24.03-tf2-py3 or nvcr.io/nvidia/tensorflow@sha256:<digest>" % base]
    assert not list(tmp_path.iterdir())


def test_bad_inputs_are_named_before_anything(tmp_path):
    done = _run(tmp_path, benchmark_image_base=None, benchmark_image_name="Registry/Bench",
                benchmark_image_builder="kaniko", benchmark_image_build_jobs=0)
    assert done.rc != 0
    assert done.result(CHECK_TASK)["problems"] == [
        "benchmark_image_base: got null; expected the framework image to build from, such as "
        "nvcr.io/nvidia/tensorflow:24.03-tf2-py3",
        "benchmark_image_name: got 'Registry/Bench'; expected an image name in lower case with its tag, such as "
        "registry.example.com/ml/gpuops-benchmark:horovod-0.28.1",
        "benchmark_image_build_jobs: got 0; expected a number of compile jobs, 1 or more",
        "benchmark_image_builder: got 'kaniko'; expected podman, buildah or docker, or null for the first of them on "
        "the build host's PATH"]
    assert not list(tmp_path.iterdir())
