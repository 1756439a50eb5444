# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What pins an image name to one image: a digest, a tag, or nothing (a node then pulls whatever :latest is)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# A digest is @algorithm:hex; a tag is what follows the last ':' of the last path part (a registry's port is in the
# first), in the characters the distribution spec allows.
_DIGEST = re.compile(r"@[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$")
_TAG = re.compile(r":([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$")


def image_pin(name):
    """'digest', 'tag', or 'latest' (a tag that moves), or None where the name has neither tag nor digest."""
    text = str(name or "").strip()
    if "@" in text:
        return "digest" if _DIGEST.search(text) else None
    tag = _TAG.search(text.rsplit("/", 1)[-1])
    if not tag:
        return None
    return "latest" if tag.group(1) == "latest" else "tag"
