# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: image_archive_digests
short_description: The config digest (image ID) of each image archive on the controller
version_added: 0.1.0
author:
  - gpuops maintainers (@gpuops)
description:
  - Reads each docker-archive (C(manifest.json) and its C(Config)) or oci-archive (C(index.json), its manifest
    and the manifest's C(config)) with Python's tarfile, and returns the images with their C(digest),
    C(format) and the C(names) the archive carries.
  - An archive that is missing or neither format fails the template, naming it; with O(on_error=report) the image
    gets C(error) (that message) and a null C(digest) instead, for input checks.
  - The role C(gpuops.cluster.image_archive) uses them.
options:
  _input:
    description: The images, each a dict with C(name) and C(archive) (a path on the controller).
    type: list
    elements: dict
    required: true
  on_error:
    description: V(fail) the template on a bad archive, or V(report) it in the image's C(error).
    type: str
    choices: [fail, report]
    default: fail
"""

EXAMPLES = r"""
- name: The config digest of the benchmark image's archive
  ansible.builtin.debug:
    msg: "{{ [{'name': 'gpuops-benchmark:1', 'archive': '/srv/images/benchmark.tar'}] | gpuops.cluster.image_archive_digests }}"
"""

RETURN = r"""
_value:
  description: The images, each with C(digest) (sha256 then the hex digest), C(format), C(names) and C(error) added.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.module_utils.image_archive.archives import ArchiveError, read_archive


def _read(image):
    try:
        return dict(image, error=None, **read_archive(image.get("archive") or ""))
    except ArchiveError as err:
        return dict(image, error=str(err), digest=None, format=None, names=[])


def image_archive_digests(images, on_error="fail"):
    found = [_read(image) for image in images]
    errors = [image["error"] for image in found if image["error"]]
    if errors and on_error != "report":
        raise AnsibleFilterError("; ".join(errors))
    return found


class FilterModule(object):

    def filters(self):
        return {"image_archive_digests": image_archive_digests}
