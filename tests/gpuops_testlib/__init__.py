# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test plumbing every tier and bench/ share, written once.

- ansible_run: run ansible-playbook or ansible with this checkout as gpuops.cluster and read the JSON
  callback's document (tests/unit, tests/integration, tests/e2e, bench/, tools/record_training_logs.py).
- role_cases: render a role for many platforms or inputs, or run many task lists, in one ansible-playbook
  run, each case a host (tests/unit/roles); their module runs fork from module_server (one Python that
  has imported ansible.module_utils.basic), and module_code_cache/ keeps the modules' compiled
  module_utils between runs and runs ansible-playbook's workers without the garbage collector.
- lab_control_plane: bring a lab control plane up and down for one test or bench run.
- lab_leftovers: the processes and listening ports of one lab run, and the "nothing of the lab is left" check.

pytest.ini puts tests/ on sys.path; scripts outside pytest (bench/, tools/) add it themselves.
"""
