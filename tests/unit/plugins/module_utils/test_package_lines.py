# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lines between the packages of plugins/module_utils, read from the imports of their files with ast.

``common`` is neutral: what several concerns use (the waiter, atomic files, values and problems) and nothing of
theirs. Slurm is no Kubernetes concern, the input check and the training verdict import nothing of each other,
the versions report owes nothing to the training verdict, and no two packages import each other, directly or
through others. A package's own module of the same name (plugins/modules/<package>.py) counts as part of it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins")
MODULE_UTILS = os.path.join(ROOT, "module_utils")
PREFIX = "ansible_collections.gpuops.cluster.plugins.module_utils"
KUBERNETES = ("k8s", "jobs", "node_labels")

FORBIDDEN = [
    ("slurm", KUBERNETES),
    ("training", ("inputs",)),
    ("inputs", ("training",)),
    ("versions_report", ("training",)),
]


def _packages():
    """Each package of module_utils (a folder, or a file of its own) with its files, and its module if any."""
    packages = {}
    for entry in sorted(os.listdir(MODULE_UTILS)):
        path = os.path.join(MODULE_UTILS, entry)
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "__init__.py")):
            packages[entry] = [os.path.join(folder, name) for folder, dummy, names in os.walk(path)
                               for name in names if name.endswith(".py")]
        elif entry.endswith(".py") and entry != "__init__.py":
            packages[entry[:-3]] = [path]
    for name, files in packages.items():
        module = os.path.join(ROOT, "modules", name + ".py")
        if os.path.exists(module):
            files.append(module)
    return packages


def _imported(node, path):
    """The dotted names an import node brings in, relative imports made absolute."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = os.path.relpath(os.path.dirname(path), MODULE_UTILS).replace(os.sep, ".")
        parts = [PREFIX] + ([] if package == "." else package.split("."))
        base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base] + [base + "." + alias.name for alias in node.names]


def imports_of(files):
    """The packages of module_utils that files import."""
    found = set()
    for path in files:
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported(node, path):
                    if name.startswith(PREFIX + "."):
                        found.add(name[len(PREFIX) + 1:].split(".")[0])
    return found


PACKAGES = _packages()
GRAPH = dict((name, imports_of(files) - {name}) for name, files in PACKAGES.items())


def test_the_imports_are_read():
    # Lines that exist, so that a reader that finds nothing cannot pass the tests below.
    assert {"k8s", "common"} <= GRAPH["jobs"]
    assert "common" in GRAPH["slurm"]
    assert "k8s" in GRAPH["versions_report"]


def test_common_imports_no_other_package():
    assert GRAPH["common"] == set()


@pytest.mark.parametrize("package, others", FORBIDDEN)
def test_a_package_imports_nothing_across_its_line(package, others):
    assert sorted(GRAPH[package] & set(others)) == []


def test_no_two_packages_import_each_other_even_through_others():
    def reaches(start):
        seen, todo = set(), list(GRAPH[start])
        while todo:
            name = todo.pop()
            if name not in seen and name in GRAPH:
                seen.add(name)
                todo.extend(GRAPH[name])
        return seen

    assert sorted(name for name in GRAPH if name in reaches(name)) == []
