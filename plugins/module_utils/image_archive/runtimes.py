# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container runtimes of a node that image_archive loads images into: containerd through ctr, CRI-O through
skopeo or podman. Each reads the config digest (image ID) of images by name and loads an archive, running its
commands through the module's run_command."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import platform
import re

from ansible_collections.gpuops.cluster.plugins.module_utils.image_archive.archives import config_digest

CONTAINERD_SOCKET = "/run/containerd/containerd.sock"
CRIO_SOCKET = "/var/run/crio/crio.sock"
ARCHES = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}
UNPACKED = re.compile(r"^unpacking (\S+) \(sha256:[0-9a-f]+\)")


class ImageArchiveError(Exception):
    """The failures of image_archive other than an archive it cannot read (archives.ArchiveError)."""


class Runtime(object):

    def __init__(self, module):
        self.module = module

    def run(self, argv, what):
        rc, out, err = self.module.run_command(argv)
        if rc != 0:
            raise ImageArchiveError("{0} failed ({1}): {2}".format(what, " ".join(argv), (err or out).strip()))
        return out


class Containerd(Runtime):
    name = "containerd"

    def __init__(self, module, namespace):
        super(Containerd, self).__init__(module)
        self.ctr = [module.get_bin_path("ctr", required=True), "--namespace=" + namespace]

    def digests(self, names):
        manifests = {}
        for row in self.run(self.ctr + ["images", "ls"], "listing the images").splitlines()[1:]:
            fields = row.split()
            if len(fields) >= 3 and fields[0] in names:
                manifests[fields[0]] = fields[2]
        return dict((name, self._config(manifests[name]) if name in manifests else None) for name in names)

    def _config(self, digest):
        arch = ARCHES.get(platform.machine(), platform.machine())
        while digest:
            manifest = json.loads(self.run(self.ctr + ["content", "get", digest], "reading manifest " + digest))
            config, digest = config_digest(manifest, arch)
            if config:
                return config
        return None

    def load(self, image):
        name, archive = image["name"], image["archive"]
        out = self.run(self.ctr + ["images", "import", "--all-platforms"] + ([] if image["names"] else ["--digests"]) + [archive],
                       "importing " + archive)
        refs = [found.group(1) for found in map(UNPACKED.match, out.splitlines()) if found]
        if name not in refs and refs:
            self.run(self.ctr + ["images", "tag", "--force", refs[0], name], "naming the image " + name)


class Crio(Runtime):
    name = "crio"

    def __init__(self, module):
        super(Crio, self).__init__(module)
        self.podman = module.get_bin_path("podman")
        self.skopeo = module.get_bin_path("skopeo")
        if not (self.podman or self.skopeo):
            raise ImageArchiveError("CRI-O needs podman or skopeo on the node to load images")

    def digests(self, names):
        return dict((name, self._digest(name)) for name in names)

    def _digest(self, name):
        if self.podman:
            rc, out, dummy = self.module.run_command([self.podman, "image", "inspect", "--format", "{{.Id}}", name])
            return "sha256:" + out.strip().rpartition(":")[2] if rc == 0 and out.strip() else None
        rc, out, dummy = self.module.run_command([self.skopeo, "inspect", "--config", "--raw", "containers-storage:" + name],
                                                 binary_data=True, encoding=None)
        return "sha256:" + hashlib.sha256(out).hexdigest() if rc == 0 and out else None

    def load(self, image):
        name, archive = image["name"], image["archive"]
        if self.skopeo:
            self.run([self.skopeo, "copy", image["format"] + ":" + archive, "containers-storage:" + name], "copying " + archive)
            return
        self.run([self.podman, "load", "-i", archive], "loading " + archive)
        if name not in image["names"]:
            self.run([self.podman, "tag", image["digest"].partition(":")[2], name], "naming the image " + name)


def find_runtime(module, wanted, namespace):
    if wanted == "containerd" or (wanted is None and os.path.exists(CONTAINERD_SOCKET) and module.get_bin_path("ctr")):
        return Containerd(module, namespace)
    if wanted == "crio" or (wanted is None and os.path.exists(CRIO_SOCKET)):
        return Crio(module)
    raise ImageArchiveError("no container runtime found: neither {0} with ctr nor {1}; set the runtime".format(
        CONTAINERD_SOCKET, CRIO_SOCKET))
