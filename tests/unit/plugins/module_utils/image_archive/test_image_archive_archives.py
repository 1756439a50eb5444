# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image archives read with tarfile: the config digest of tiny docker-archive and oci-archive tars
(gpuops_testlib.image_archives), what is neither, and the comparison that decides which images a node imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.image_archive.archives import (
    ArchiveError, config_digest, normalize_name, plan, read_archive)
from gpuops_testlib.image_archives import CONFIG_DIGEST, docker_archive, oci_archive, write_tar


def test_a_docker_archive_gives_its_config_digest_and_tags(tmp_path):
    assert read_archive(docker_archive(tmp_path / "a.tar")) == {
        "format": "docker-archive", "digest": CONFIG_DIGEST, "names": ["localhost/tiny:1"]}


def test_a_compressed_docker_archive_without_tags_is_read_too(tmp_path):
    assert read_archive(docker_archive(tmp_path / "a.tar.gz", tags=(), mode="w:gz"))["names"] == []


def test_an_oci_archive_gives_its_manifests_config_digest(tmp_path):
    assert read_archive(oci_archive(tmp_path / "o.tar")) == {
        "format": "oci-archive", "digest": CONFIG_DIGEST, "names": ["localhost/tiny:1"]}


def test_an_oci_archives_bare_tag_annotation_is_no_name(tmp_path):
    assert read_archive(oci_archive(tmp_path / "o.tar", name="1"))["names"] == []


@pytest.mark.parametrize("files, message", [
    ({"hello.txt": b"hi"}, "neither a docker-archive (manifest.json) nor an oci-archive"),
    ({"manifest.json": b"[]"}, "manifest.json should list exactly one image"),
    ({"manifest.json": b'[{"Config": "gone.json"}]'}, "manifest.json names a Config the archive lacks"),
    ({"manifest.json": b"{not json"}, "manifest.json is not JSON"),
    ({"oci-layout": b"{}", "index.json": b'{"manifests": [{"digest": "sha256:00"}]}'}, "lacks blob sha256:00"),
])
def test_what_is_not_an_image_archive_is_named(tmp_path, files, message):
    path = write_tar(tmp_path / "bad.tar", files)
    with pytest.raises(ArchiveError) as raised:
        read_archive(path)
    assert str(raised.value).startswith(path + ": ") and message in str(raised.value)


def test_a_multi_platform_oci_archive_is_refused(tmp_path):
    with pytest.raises(ArchiveError, match="multi-platform"):
        read_archive(oci_archive(tmp_path / "o.tar", index_type="application/vnd.oci.image.index.v1+json"))


def test_a_missing_file_or_one_that_is_no_tar_is_named(tmp_path):
    with pytest.raises(ArchiveError, match="cannot be read as a tar archive"):
        read_archive(str(tmp_path / "gone.tar"))
    (tmp_path / "text.tar").write_text("not a tar")
    with pytest.raises(ArchiveError, match="cannot be read as a tar archive"):
        read_archive(str(tmp_path / "text.tar"))


@pytest.mark.parametrize("given, stored", [
    ("busybox", "docker.io/library/busybox:latest"),
    ("nvidia/cuda:12.4", "docker.io/nvidia/cuda:12.4"),
    ("localhost/gpuops-pause:8fcbd42ffa18", "localhost/gpuops-pause:8fcbd42ffa18"),
    ("registry:5000/ml/bench", "registry:5000/ml/bench:latest"),
    ("quay.io/a/b@sha256:00", "quay.io/a/b@sha256:00"),
])
def test_names_are_compared_as_containerd_stores_them(given, stored):
    assert normalize_name(given) == stored


def test_a_manifest_gives_its_config_and_an_index_the_manifest_for_the_nodes_platform():
    assert config_digest({"config": {"digest": CONFIG_DIGEST}}, "amd64") == (CONFIG_DIGEST, None)
    index = {"manifests": [{"digest": "sha256:arm", "platform": {"os": "linux", "architecture": "arm64"}},
                           {"digest": "sha256:x86", "platform": {"os": "linux", "architecture": "amd64"}}]}
    assert config_digest(index, "amd64") == (None, "sha256:x86")
    assert config_digest(index, "s390x") == (None, None)


def test_only_images_whose_digest_differs_or_that_are_absent_are_imported():
    wanted = [{"name": "a", "digest": "sha256:1"}, {"name": "b", "digest": "sha256:2"}, {"name": "c", "digest": "sha256:3"}]
    assert plan(wanted, {"a": "sha256:1", "b": "sha256:9", "c": None}) == wanted[1:]
    assert plan(wanted, {"a": "sha256:1", "b": "sha256:2", "c": "sha256:3"}) == []
