#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: image_archive
short_description: Load image archives into a node's containerd or CRI-O, only where the node's image differs
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Compares each image's config digest (its image ID) in the node's runtime with the one in its archive, and
    imports only the archives whose image the node lacks or holds at another digest; then reads the digest
    back and fails where it still differs.
  - containerd - C(ctr images ls) and C(ctr content get) read the digest, C(ctr images import --all-platforms)
    imports, and C(ctr images tag) gives the image its name where the archive does not carry it.
  - CRI-O - C(podman image inspect) or C(skopeo inspect --config) reads the digest from containers-storage,
    C(podman load) or C(skopeo copy) imports.
  - Every archive is read before anything is imported, so a bad archive changes nothing.
  - The role C(gpuops.cluster.image_archive) runs it.
options:
  images:
    description: The images, each with its O(images[].name) and its O(images[].archive) or O(images[].digest).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The image reference the pods use; a name without registry is Docker Hub's, as the kubelet reads it.
        type: str
        required: true
      archive:
        description: A docker-archive or oci-archive tar on the node. Needed to import; without it the image is only compared.
        type: path
      digest:
        description: The config digest of the archive's image (sha256 then the hex digest); read from O(images[].archive) when not given.
        type: str
  runtime:
    description: The node's container runtime; null finds containerd's or CRI-O's socket.
    type: str
    choices: [containerd, crio]
  containerd_namespace:
    description: The containerd namespace the kubelet uses.
    type: str
    default: k8s.io
attributes:
  check_mode:
    support: full
    description: Reads the digests and reports which images would be imported; imports nothing.
  diff_mode:
    support: full
    description: Shows each image's config digest on the node before and after.
"""

EXAMPLES = r"""
- name: Load the benchmark image from a shared mount into the node's containerd
  gpuops.cluster.image_archive:
    images:
      - name: registry.example.com/ml/gpuops-benchmark:horovod-0.28.1
        archive: /shared/images/benchmark.tar
    runtime: containerd
"""

RETURN = r"""
runtime:
  description: The runtime used.
  type: str
  returned: always
  sample: containerd
imported:
  description: The names of the images imported (or, in check mode, that would be), as O(images[].name) gives them.
  type: list
  elements: str
  returned: always
  sample: [registry.example.com/ml/gpuops-benchmark:horovod-0.28.1]
digests:
  description: The config digest of each image on the node, after the run (before it, in check mode), null where absent.
  type: dict
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.cluster.plugins.module_utils.image_archive.archives import (
    ArchiveError, normalize_name, plan, read_archive)
from ansible_collections.gpuops.cluster.plugins.module_utils.image_archive.runtimes import ImageArchiveError, find_runtime


def wanted_images(images):
    """Each image with its normalized name, digest and the names its archive carries, every archive read first."""
    wanted = []
    for image in images:
        if not (image.get("name") or "").strip():
            raise ImageArchiveError("an image without a name")
        found = read_archive(image["archive"]) if image.get("archive") else {"names": [], "digest": None, "format": None}
        digest = image.get("digest") or found["digest"]
        if not digest:
            raise ImageArchiveError("{0}: give its archive or its digest".format(image["name"]))
        if image.get("digest") and found["digest"] and found["digest"] != image["digest"]:
            raise ImageArchiveError("{0}: {1} holds {2}, not {3}".format(image["name"], image["archive"], found["digest"], image["digest"]))
        wanted.append({"given": image["name"], "name": normalize_name(image["name"]), "digest": digest, "archive": image.get("archive"),
                       "format": found["format"], "names": [normalize_name(name) for name in found["names"]]})
    return wanted


def run(module):
    wanted = wanted_images(module.params["images"])
    runtime = find_runtime(module, module.params["runtime"], module.params["containerd_namespace"])
    names = [image["name"] for image in wanted]
    before = runtime.digests(names)
    to_import = plan(wanted, before)
    result = {"changed": bool(to_import), "runtime": runtime.name, "imported": [image["given"] for image in to_import],
              "digests": before,
              "diff": {"before": {"digests": before},
                       "after": {"digests": dict(before, **dict((image["name"], image["digest"]) for image in wanted))}}}
    if module.check_mode or not to_import:
        return result
    for image in to_import:
        if not image["archive"]:
            raise ImageArchiveError("{0}: the node holds {1}, not {2}, and no archive was given".format(
                image["name"], before[image["name"]], image["digest"]))
        runtime.load(image)
    after = runtime.digests(names)
    wrong = ["{0} is {1} after importing {2}, expected {3}".format(image["name"], after[image["name"]], image["archive"], image["digest"])
             for image in to_import if after[image["name"]] != image["digest"]]
    if wrong:
        raise ImageArchiveError("; ".join(wrong))
    result["digests"] = after
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(
            images=dict(type="list", elements="dict", required=True, options=dict(
                name=dict(type="str", required=True), archive=dict(type="path"), digest=dict(type="str"))),
            runtime=dict(type="str", choices=["containerd", "crio"]),
            containerd_namespace=dict(type="str", default="k8s.io")),
        supports_check_mode=True)
    try:
        module.exit_json(**run(module))
    except (ImageArchiveError, ArchiveError) as err:
        module.fail_json(msg=str(err))


if __name__ == "__main__":
    main()
