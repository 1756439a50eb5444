# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tiny image archives built with tarfile, as podman save writes them (docker-archive, oci-archive), for the unit
tests of plugins/module_utils/image_archive/archives.py and the image_archive module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import io
import json
import tarfile

CONFIG = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}).encode()
CONFIG_DIGEST = "sha256:" + hashlib.sha256(CONFIG).hexdigest()


def _digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def write_tar(path, files, mode="w"):
    with tarfile.open(str(path), mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def docker_archive(path, tags=("localhost/tiny:1",), mode="w"):
    """As podman save --format docker-archive writes it: the config named after its digest, manifest.json last."""
    config = CONFIG_DIGEST.partition(":")[2] + ".json"
    manifest = [{"Config": config, "RepoTags": list(tags), "Layers": []}]
    return write_tar(path, {config: CONFIG, "manifest.json": json.dumps(manifest).encode()}, mode)


def oci_archive(path, name="localhost/tiny:1", index_type=None):
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": CONFIG_DIGEST,
                                      "size": len(CONFIG)}, "layers": []}).encode()
    entry = {"mediaType": index_type or "application/vnd.oci.image.manifest.v1+json", "digest": _digest(manifest),
             "size": len(manifest), "annotations": {"org.opencontainers.image.ref.name": name}}
    return write_tar(path, {
        "oci-layout": b'{"imageLayoutVersion": "1.0.0"}',
        "index.json": json.dumps({"schemaVersion": 2, "manifests": [entry]}).encode(),
        "blobs/sha256/" + _digest(manifest).partition(":")[2]: manifest,
        "blobs/sha256/" + CONFIG_DIGEST.partition(":")[2]: CONFIG})
