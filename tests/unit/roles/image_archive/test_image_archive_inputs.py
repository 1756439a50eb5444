"""The image_archive role's inputs, checked before anything changes: an empty name, a missing archive and a file
that is neither a docker-archive nor an oci-archive are named, through the real check_inputs action on localhost
(the action runs on the controller, so no node is reached)."""

import json
import os
import sys

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook

PLAYBOOK = os.path.join(REPO_ROOT, "playbooks", "image_archive.yml")
CHECK_TASK = "Check the variables before anything changes"
NAME = "registry.example.com/ml/gpuops-benchmark:horovod-0.28.1"


def _problems(**variables):
    done = run_playbook(PLAYBOOK, "localhost,", dict({
        "gpuops_gpu_hosts": "localhost", "ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        **variables), env=ansible_env(), timeout=120)
    assert done.rc != 0, done.explain()
    return done.result(CHECK_TASK)["problems"]


def test_no_images_is_named():
    assert _problems() == ["image_archive_images: got []; expected a list of images to load, each {name, archive}"]


def _got(images):
    return "image_archive_images: got {0}; expected ".format(json.dumps(images, sort_keys=True))


def test_an_empty_name_a_relative_path_and_an_unknown_runtime_are_named():
    images = [{"name": "", "archive": "images/bench.tar"}]
    assert _problems(image_archive_images=images, image_archive_remote_src=True, image_archive_runtime="docker") == [
        _got(images) + "each image's name the reference the pods use, such as " + NAME,
        _got(images) + "each image's archive an absolute path",
        "image_archive_runtime: got 'docker'; expected containerd or crio, or null to find the runtime's socket on each node"]


def test_a_missing_archive_and_one_that_is_no_image_are_named_on_the_controller(tmp_path):
    (tmp_path / "notes.tar").write_text("not a tar")
    images = [{"name": NAME, "archive": str(tmp_path / "gone.tar")}, {"name": NAME, "archive": str(tmp_path / "notes.tar")}]
    assert _problems(image_archive_images=images) == [
        _got(images) + "each image's archive a docker-archive or oci-archive tar on the controller"]
