# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Variables that carry a role's prefix but that neither the role nor a playbook reads: a typo (mpijob_launcher_worker) or an option
that does not exist. Ansible passes over them without a word and the role runs with its default; the input check
names them, with the nearest option the role declares."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import os
import re

# The files of a role that read its variables.
_READ_BY = (".yml", ".yaml", ".j2")


def _declared(root, load):
    """The options of every entry point of a role's argument spec."""
    path = os.path.join(root, "meta", "argument_specs.yml")
    specs = ((load(path) if os.path.exists(path) else None) or {}).get("argument_specs") or {}
    return set(name for entry in specs.values() for name in (entry or {}).get("options") or {})


def _read(roots, role):
    """The names with the role's prefix that files under roots use: the role's own (its results, its internal
    switches, its options) and the playbooks' (which hosts run it)."""
    pattern = re.compile(r"\b%s_[a-z0-9_]+" % re.escape(role))
    used = set()
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                if name.endswith(_READ_BY):
                    with open(os.path.join(folder, name), encoding="utf-8") as handle:
                        used.update(pattern.findall(handle.read()))
    return used


def unknown_variables(names, collection_root, load):
    """[(name, role, nearest declared option or None)] of the names that carry a role's prefix (the longest role name
    that prefixes it) but that the role neither declares nor reads; load(path) reads a YAML file (the controller's
    loader). The files are read only for a name the role's argument spec does not declare."""
    roles_dir = os.path.join(collection_root, "roles")
    roles = [role for role in os.listdir(roles_dir) if os.path.isdir(os.path.join(roles_dir, role))]
    declared_by, read_by = {}, {}
    unknown = []
    for name in sorted(names):
        owners = [role for role in roles if name.startswith(role + "_")]
        if name.startswith("_") or not owners:
            continue
        role = max(owners, key=len)
        root = os.path.join(roles_dir, role)
        if role not in declared_by:
            declared_by[role] = _declared(root, load)
        if name in declared_by[role]:
            continue
        if role not in read_by:
            read_by[role] = _read((root, os.path.join(collection_root, "playbooks")), role)
        if name not in read_by[role]:
            nearest = difflib.get_close_matches(name, sorted(declared_by[role]), n=1, cutoff=0.6)
            unknown.append((name, role, nearest[0] if nearest else None))
    return unknown
