# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image archives (docker-archive, oci-archive) and the digests that say whether a node already holds their image.

The identity compared is the image's config digest (its image ID): the manifest of one image differs between
registries, archives and runtimes (containerd converts, CRI-O recompresses), its config blob does not.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import tarfile

OCI_INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
                   "application/vnd.docker.distribution.manifest.list.v2+json")


class ArchiveError(Exception):
    """An archive that cannot be read, or is neither a docker-archive nor an oci-archive."""


def _sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _read_json(tar, member, path):
    found = tar.extractfile(member)
    if found is None:
        raise ArchiveError("{0}: {1} is not a file".format(path, member.name))
    try:
        return json.loads(found.read().decode("utf-8"))
    except ValueError as err:
        raise ArchiveError("{0}: {1} is not JSON ({2})".format(path, member.name, err))


def _blob(members, digest, path):
    algorithm, dummy, hexdigest = (digest or "").partition(":")
    member = members.get("blobs/{0}/{1}".format(algorithm, hexdigest))
    if member is None:
        raise ArchiveError("{0}: the oci-archive lacks blob {1}".format(path, digest))
    return member


def _docker_archive(tar, members, path):
    manifest = _read_json(tar, members["manifest.json"], path)
    if not isinstance(manifest, list) or len(manifest) != 1 or not isinstance(manifest[0], dict):
        raise ArchiveError("{0}: manifest.json should list exactly one image".format(path))
    config = members.get(str(manifest[0].get("Config", "")).lstrip("./"))
    if config is None:
        raise ArchiveError("{0}: manifest.json names a Config the archive lacks".format(path))
    found = tar.extractfile(config)
    return {"format": "docker-archive", "digest": _sha256(found.read()), "names": list(manifest[0].get("RepoTags") or [])}


def _oci_archive(tar, members, path):
    index = _read_json(tar, members["index.json"], path)
    entries = index.get("manifests") or []
    if len(entries) != 1:
        raise ArchiveError("{0}: index.json should list exactly one image, it lists {1}".format(path, len(entries)))
    entry = entries[0]
    if entry.get("mediaType") in OCI_INDEX_TYPES:
        raise ArchiveError("{0}: a multi-platform image; save one platform (podman save --format oci-archive)".format(path))
    manifest = _read_json(tar, _blob(members, entry.get("digest"), path), path)
    digest = (manifest.get("config") or {}).get("digest")
    _blob(members, digest, path)
    annotations = entry.get("annotations") or {}
    names = [annotations[key] for key in ("io.containerd.image.name", "org.opencontainers.image.ref.name")
             if key in annotations and (":" in annotations[key] or "/" in annotations[key])]
    return {"format": "oci-archive", "digest": digest, "names": names[:1]}


def read_archive(path):
    """The archive's format, its image's config digest (sha256:...) and the names it carries."""
    try:
        with tarfile.open(path, "r:*") as tar:
            members = dict((member.name.lstrip("./"), member) for member in tar.getmembers())
            if "index.json" in members and "oci-layout" in members:
                return _oci_archive(tar, members, path)
            if "manifest.json" in members:
                return _docker_archive(tar, members, path)
    except (IOError, OSError, tarfile.TarError) as err:
        raise ArchiveError("{0}: cannot be read as a tar archive ({1})".format(path, err))
    raise ArchiveError("{0}: neither a docker-archive (manifest.json) nor an oci-archive (oci-layout, index.json)".format(path))


def normalize_name(name):
    """The name as containerd and the kubelet store it: docker.io/library/busybox:latest for busybox."""
    name = name.strip()
    first, slash, rest = name.partition("/")
    if not slash or ("." not in first and ":" not in first and first != "localhost"):
        first, rest = "docker.io", name
        if "/" not in rest:
            rest = "library/" + rest
    if "@" not in rest and ":" not in rest.rpartition("/")[2]:
        rest += ":latest"
    return first + "/" + rest


def config_digest(manifest, arch):
    """The config digest of a manifest, or for an index the digest of the manifest for linux/arch (to read next)."""
    if "manifests" in manifest:
        for entry in manifest["manifests"]:
            platform = entry.get("platform") or {}
            if platform.get("os", "linux") == "linux" and platform.get("architecture", arch) == arch:
                return None, entry.get("digest")
        return None, None
    return (manifest.get("config") or {}).get("digest"), None


def plan(wanted, held):
    """The images to import: those whose config digest on the node (held, by name) differs from the archive's."""
    return [image for image in wanted if held.get(image["name"]) != image["digest"]]
