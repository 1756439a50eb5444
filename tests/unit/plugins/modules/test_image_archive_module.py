# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.cluster.image_archive against a fake ctr (and a fake podman): only the images whose config digest differs
are imported, check mode imports nothing, the digest is read back, and a bad archive stops it before any import.
tests/e2e/test_image_archive.py runs it on the lab's real containerd."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.cluster.plugins.modules import image_archive
from gpuops_testlib.image_archives import CONFIG_DIGEST, docker_archive, write_tar
from gpuops_testlib.module_exit import Exited, catch_exits

NAME = "localhost/tiny:1"
OLD = "sha256:" + "0" * 64


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    catch_exits(monkeypatch)


class FakeCtr(object):
    """containerd's images by name (their config digest), as ctr lists them and reads their manifests."""

    def __init__(self, images, imports_as=NAME, imports_digest=CONFIG_DIGEST):
        self.images = dict(images)
        self.imports_as = imports_as
        self.imports_digest = imports_digest
        self.calls = []

    def run(self, argv):
        self.calls.append(argv[2:])
        verb = argv[2:4]
        if verb == ["images", "ls"]:
            rows = ["{0} application/vnd.docker.distribution.manifest.v2+json manifest-{1} 1 MiB linux/amd64 -".format(
                name, digest) for name, digest in self.images.items()]
            return 0, "\n".join(["REF TYPE DIGEST SIZE PLATFORMS LABELS"] + rows), ""
        if verb == ["content", "get"]:
            return 0, json.dumps({"config": {"digest": argv[4].partition("manifest-")[2]}}), ""
        if verb == ["images", "import"]:
            self.images[self.imports_as] = self.imports_digest
            return 0, "unpacking {0} (sha256:abc)...done\n".format(self.imports_as), ""
        if verb == ["images", "tag"]:
            self.images[argv[-1]] = self.images[argv[-2]]
            return 0, argv[-1] + "\n", ""
        raise AssertionError(argv)


def run(monkeypatch, ctr, images, check_mode=False):
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda module, argv, **options: ctr.run(argv))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False: "/usr/bin/" + name)
    args = {"images": images, "runtime": "containerd", "_ansible_check_mode": check_mode, "_ansible_diff": True}
    with patch_module_args(args):
        with pytest.raises(Exited) as exited:
            image_archive.main()
    return exited.value


def test_an_image_held_at_the_archives_digest_is_left_alone(monkeypatch, tmp_path):
    ctr = FakeCtr({NAME: CONFIG_DIGEST})
    done = run(monkeypatch, ctr, [{"name": NAME, "archive": docker_archive(tmp_path / "a.tar")}])
    assert not done.failed and not done.result["changed"] and done.result["imported"] == []
    assert ["images", "import"] not in [call[:2] for call in ctr.calls]


def test_an_absent_image_is_imported_and_read_back(monkeypatch, tmp_path):
    ctr = FakeCtr({})
    done = run(monkeypatch, ctr, [{"name": NAME, "archive": docker_archive(tmp_path / "a.tar")}])
    assert not done.failed and done.result["changed"] and done.result["imported"] == [NAME]
    assert done.result["digests"] == {NAME: CONFIG_DIGEST}
    assert done.result["diff"] == {"before": {"digests": {NAME: None}}, "after": {"digests": {NAME: CONFIG_DIGEST}}}
    assert ["images", "import", "--all-platforms", str(tmp_path / "a.tar")] in ctr.calls


def test_check_mode_says_what_would_be_imported_and_imports_nothing(monkeypatch, tmp_path):
    ctr = FakeCtr({NAME: OLD})
    done = run(monkeypatch, ctr, [{"name": NAME, "archive": docker_archive(tmp_path / "a.tar")}], check_mode=True)
    assert done.result["changed"] and done.result["imported"] == [NAME]
    assert done.result["diff"]["before"]["digests"] == {NAME: OLD}
    assert ctr.images == {NAME: OLD}


def test_an_archive_that_does_not_carry_the_name_is_tagged_with_it(monkeypatch, tmp_path):
    ctr = FakeCtr({}, imports_as="localhost/other:2")
    done = run(monkeypatch, ctr, [{"name": "tiny", "archive": docker_archive(tmp_path / "a.tar", tags=("localhost/other:2",))}])
    assert done.result["changed"] and ctr.images["docker.io/library/tiny:latest"] == CONFIG_DIGEST
    assert ["images", "tag", "--force", "localhost/other:2", "docker.io/library/tiny:latest"] in ctr.calls


def test_a_digest_that_still_differs_after_the_import_fails_naming_both(monkeypatch, tmp_path):
    done = run(monkeypatch, FakeCtr({}, imports_digest=OLD), [{"name": NAME, "archive": docker_archive(tmp_path / "a.tar")}])
    assert done.failed
    assert done.result["msg"] == "{0} is {1} after importing {2}, expected {3}".format(NAME, OLD, tmp_path / "a.tar", CONFIG_DIGEST)


def test_a_bad_archive_stops_it_before_any_import(monkeypatch, tmp_path):
    ctr = FakeCtr({})
    done = run(monkeypatch, ctr, [{"name": NAME, "archive": docker_archive(tmp_path / "a.tar")},
                                  {"name": "localhost/bad:1", "archive": write_tar(tmp_path / "bad.tar", {"x": b""})}])
    assert done.failed and "neither a docker-archive" in done.result["msg"]
    assert ctr.calls == []


def test_crio_reads_the_image_id_with_podman(monkeypatch, tmp_path):
    def podman(module, argv, **dummy):
        assert argv[1:3] == ["image", "inspect"]
        return 0, CONFIG_DIGEST.partition(":")[2] + "\n", ""
    monkeypatch.setattr(basic.AnsibleModule, "run_command", podman)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False: "/usr/bin/podman" if name == "podman" else None)
    with patch_module_args({"images": [{"name": NAME, "digest": CONFIG_DIGEST}], "runtime": "crio"}):
        with pytest.raises(Exited) as exited:
            image_archive.main()
    assert not exited.value.failed and not exited.value.result["changed"] and exited.value.result["runtime"] == "crio"
