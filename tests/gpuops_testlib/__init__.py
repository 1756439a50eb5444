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
- The unit tests' shared stand-ins and cases, which no test file imports from another: module_exit (a module's
  exit_json and fail_json caught in the test process), fake_job_api, mpijob_objects, tfjob_pods and pytorchjob_pods
  (a job cluster in memory, and the jobs and pods it serves), fake_node_api and fake_api_client (the node API and
  the kubernetes ApiClient), image_archives, versions_report_cases, benchmark_program (the training benchmark
  imported as a module), python_env_standins (user_python_env's wheels), gpu_network_cases and
  gpu_network_validators.

pytest.ini puts tests/ on sys.path; scripts outside pytest (bench/, tools/) add it themselves.
"""
