# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The training_benchmark role's program, imported as a module by the tests of its flags and its output."""

from __future__ import annotations

import importlib.util
import os

PROGRAM = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "training_benchmark", "files", "gpuops_benchmark.py")


def load_benchmark():
    spec = importlib.util.spec_from_file_location("gpuops_benchmark", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
