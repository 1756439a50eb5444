# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Image archives loaded into a node's container runtime, one concern per file:

* ``archives``: docker-archive and oci-archive tars read with tarfile, their config digest, and which images a node
  must import (also read on the controller by the image_archive_digests filter);
* ``runtimes``: containerd (ctr) and CRI-O (skopeo or podman), each reading digests by name and loading archives.
"""
