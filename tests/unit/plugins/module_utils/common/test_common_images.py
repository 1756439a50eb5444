# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What pins an image name (common.images), as the input check's image rules and the image_pin filter read it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.filter.image_pin import FilterModule
from ansible_collections.gpuops.cluster.plugins.module_utils.common.images import image_pin

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize("name, pin", [
    ("nvcr.io/nvidia/tensorflow:24.03-tf2-py3", "tag"),
    ("registry.example.com:5000/ml/gpuops-benchmark:horovod-0.28.1", "tag"),
    ("localhost/gpuops-benchmark:latest", "latest"),
    ("nvcr.io/nvidia/tensorflow@" + DIGEST, "digest"),
    ("nvcr.io/nvidia/tensorflow:24.03-tf2-py3@" + DIGEST, "digest"),
    # A registry's port is not a tag, nor is a short or malformed digest.
    ("registry.example.com:5000/ml/gpuops-benchmark", None),
    ("gpuops-benchmark", None),
    ("gpuops-benchmark@sha256:abc", None),
    ("gpuops-benchmark:", None),
    ("", None),
    (None, None),
])
def test_an_image_name_is_pinned_by_its_digest_or_tag_and_latest_is_told_apart(name, pin):
    assert image_pin(name) == pin


def test_the_filter_is_the_same_function():
    assert FilterModule().filters()["image_pin"] is image_pin
