"""The launcher roles' inputs, checked by the real gpuops.cluster.check_inputs action through ansible-playbook
on this machine, with every value given as a user types it (name=value: a string, as -e gives it; JSON typed):
the argument spec's types and choices, then each role's meta/input_rules.yml, exactly the wrong values named, one
line each, and a run with right values given as strings passes. The action runs on the controller, so no lab or
cluster is needed; the stage check (playbooks/check_inputs.yml) runs on the lab's inventory and on
inventories/examples/slurm-a100 without reaching their hosts.

ansible-playbook starts in about a second: every role case is a host of one run (connection local) with its
values as host variables, and the stage cases, each with an inventory of its own, go a few at a time.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from gpuops_testlib.ansible_run import REPO_ROOT, ansible_env, run_playbook
from gpuops_testlib.role_cases import check_inputs_cases

CHECK_TASK = "Check the role's variables"
STAGE_CHECK_TASK = "Check the variables of every role this run takes here"
LAB_INVENTORY = os.path.join(REPO_ROOT, "inventories", "lab")
SLURM_EXAMPLE = os.path.join(REPO_ROOT, "inventories", "examples", "slurm-a100")
STAGE_CHECK = os.path.join(REPO_ROOT, "playbooks", "check_inputs.yml")
VERIFY_STAGE = '{"gpuops_input_check_stages": ["verify"]}'
LAB_HOSTS = ("localhost", "node1", "node2")
# Stands for the inventory host a role case runs on, in the lines that name it.
CASE_HOST = "<the case's host>"

MPIJOB_IMAGE = ("the name of the benchmark's image, with OpenMPI, Horovod, the framework, sshd and "
                "/opt/gpuops/benchmark/gpuops_benchmark.py")
TFJOB_IMAGE = "the name of the benchmark's image, with TensorFlow and /opt/gpuops/benchmark/gpuops_benchmark.py"
POD_IMAGE = ("the name of the benchmark's image, with Horovod (horovodrun), the framework and "
             "/opt/gpuops/benchmark/gpuops_benchmark.py")
JOB_IMAGE = ("the name of the benchmark's image, with OpenMPI, sshd, Horovod, the framework and "
             "/opt/gpuops/benchmark/gpuops_benchmark.py")
SSHD_PORT = "a port from 1 to 65535 for the workers' sshd"
LOG_PATH = "an absolute path on the controller for the {0}, such as /var/log/gpuops/training.log"
SHARE = "a share above 0 and at most 1, such as 0.9"
PRESETS = "one of a100-sxm, cpu-lab, h100-sxm, v100"
PYTORCHJOB_ARGS = '["--device", "cpu", "--hierarchical-allreduce", "--mixed-precision"]'
SSH_DDP_ARGS = '["--framework", "pytorch", "--cycle-time-ms", "5", "--device", "cpu", "--mixed-precision", "fp16"]'
MPIJOB_DDP_ARGS = '["--distribution", "ddp", "--fusion-threshold-mb", "64", "--mixed-precision", "fp16"]'
TRANSPORTS = ("NCCL transports as NCCL_DEBUG=INFO names them: NET/IB, NET/Socket, P2P, SHM, or NET/ and a network "
              "plugin's name (IB and Socket are short for NET/IB and NET/Socket; NVLink traffic is P2P)")
IMAGE_TAG = ("an image name with its tag or digest, such as registry.example.com/ml/gpuops-benchmark:horovod-0.28.1 "
             "(without one, a node runs whatever :latest was when it first pulled it)")
UNKNOWN = ("an option the {0} role declares ({1} is the nearest it has): Ansible passes over other names and the role "
           "runs with its default (ansible-doc -t role gpuops.cluster.{0} lists them)")
ONE_NODE = ("transports one {0} can use, such as P2P or SHM: NET/ transports carry NCCL's traffic between nodes, and "
            "this run has one {0} ({1} cannot be seen)")
NCCL_IN_ENV = ("no NCCL_* variables (here: {0}): put them in gpuops_nccl, which gives them to every rank and to the "
               "hosts' /etc/nccl.conf alike")


def line(name, got, expected):
    return "{0}: got {1}; expected {2}".format(name, got, expected)


# (role, -e arguments as typed, the problem lines, in order: types first, then the rules' own order).
CASES = {
    # mpijob_launcher
    "mpijob: no workers": ("mpijob_launcher", ["mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_workers=0"], [
        line("mpijob_launcher_workers", "0", "a number of workers, 1 or more")]),
    "mpijob: an unknown pull policy": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "kube_job_image_pull_policy=Sometimes"], [
        line("kube_job_image_pull_policy", "'Sometimes'", "one of Always, IfNotPresent, Never")]),
    "mpijob: a port above 65535": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_ssh_port=65536"], [
        line("mpijob_launcher_ssh_port", "65536", SSHD_PORT)]),
    "mpijob: every problem at once": ("mpijob_launcher", [
        "mpijob_launcher_workers=two", "mpijob_launcher_slots_per_worker=0", "kube_job_wait_sleep=0",
        "kube_job_log_path=logs/bench.log", "mpijob_launcher_host_network=true"], [
        line("mpijob_launcher_workers", "'two'", "a whole number"),
        line("mpijob_launcher_image", "''", MPIJOB_IMAGE),
        line("mpijob_launcher_slots_per_worker", "0",
             "a number of ranks per worker, 1 or more, or null for one per GPU"),
        line("kube_job_wait_sleep", "0.0", "a number of seconds between two looks at the job, above 0"),
        line("kube_job_log_path", "'logs/bench.log'", LOG_PATH.format("job's log"))]),
    "mpijob: expected ranks other than workers x slots": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_workers=2", "mpijob_launcher_gpus_per_worker=4",
        "gpuops_training_expect_ranks=4"], [
        line("gpuops_training_expect_ranks",
             "4 (with mpijob_launcher_workers=2, mpijob_launcher_slots_per_worker=null, "
             "mpijob_launcher_gpus_per_worker=4)",
             "8, the ranks the mpijob launcher starts (2 workers x 4 slots), or leave it unset to expect that count")]),
    # gpuops_nccl is the one source of NCCL settings, for the ranks and the hosts' /etc/nccl.conf: a launcher's own
    # env may not give any, whether gpuops_nccl gives the same name or not.
    "mpijob: NCCL variables in the launcher's env, a capability with CAP_": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", '{"kube_job_capabilities": ["CAP_IPC_LOCK"]}',
        '{"gpuops_nccl": {"NCCL_IB_HCA": "mlx5_0"}, "kube_job_env": {"NCCL_IB_HCA": "mlx5_1", "NCCL_DEBUG": "INFO", '
        '"HOROVOD_CYCLE_TIME": "1"}}'],
        [line("kube_job_capabilities", '["CAP_IPC_LOCK"]',
              "Linux capabilities in capitals without their CAP_ prefix, such as [IPC_LOCK]"),
         line("kube_job_env", '{"HOROVOD_CYCLE_TIME": "1", "NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5_1"}',
              NCCL_IN_ENV.format("NCCL_DEBUG, NCCL_IB_HCA"))]),
    "mpijob: ddp with its own distribution, Horovod's options and fp16 on CPUs": ("mpijob_launcher", [
        "mpijob_launcher_image=pytorch:2.13", "mpijob_launcher_distribution=ddp", "mpijob_launcher_master_port=70000",
        '{"kube_job_benchmark_args": ["--distribution", "ddp", "--fusion-threshold-mb", "64", "--mixed-precision", "fp16"]}',
        '{"kube_job_env": {"HOROVOD_CYCLE_TIME": "1"}}'], [
        line("mpijob_launcher_master_port", "70000",
             "a port from 1 to 65535, free on the first worker, for torch.distributed's store"),
        line("kube_job_benchmark_args", MPIJOB_DDP_ARGS + " (with mpijob_launcher_gpus_per_worker=0)",
             "no --mixed-precision fp16 while the workers train on CPUs (no GPU asked for, or --device cpu): float16 "
             "mixed precision needs GPUs; use --mixed-precision bf16 on CPUs, or leave it out for fp32"),
        line("kube_job_benchmark_args", MPIJOB_DDP_ARGS, "no --distribution or --framework: with "
             "mpijob_launcher_distribution ddp the role gives --framework pytorch --distribution ddp"),
        line("kube_job_benchmark_args", MPIJOB_DDP_ARGS + " (with mpijob_launcher_distribution='ddp')",
             "none of Horovod's options (--fusion-threshold-mb), which DistributedDataParallel does not use"),
        line("kube_job_env", "{\"HOROVOD_CYCLE_TIME\": \"1\"} (with mpijob_launcher_distribution='ddp')",
             "no HOROVOD_* variables, which DistributedDataParallel does not read")]),
    "mpijob: an unknown distribution": ("mpijob_launcher", [
        "mpijob_launcher_image=pytorch:2.13", "mpijob_launcher_distribution=torchrun"], [
        line("mpijob_launcher_distribution", "'torchrun'", "one of horovod, ddp")]),
    "mpijob: ddp in the arguments of a horovod run": ("mpijob_launcher", [
        "mpijob_launcher_image=pytorch:2.13", '{"kube_job_benchmark_args": ["--distribution", "ddp"]}'], [
        line("kube_job_benchmark_args", '["--distribution", "ddp"]', "no --distribution other than horovod; set "
             "mpijob_launcher_distribution to ddp for PyTorch's DistributedDataParallel")]),
    "mpijob: ddp right values as strings": ("mpijob_launcher", [
        "mpijob_launcher_image=pytorch:2.13", "mpijob_launcher_distribution=ddp", "mpijob_launcher_master_port=29500",
        '{"kube_job_benchmark_args": ["--model", "resnet50", "--device", "cpu", "--mixed-precision", "bf16"]}'], []),
    "mpijob: a relative verify_training_log_path": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "verify_training_log_path=training.log"], [
        line("verify_training_log_path", "'training.log'", LOG_PATH.format("benchmark log"))]),
    "mpijob: right values as strings": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_workers=2", "mpijob_launcher_slots_per_worker=2",
        "mpijob_launcher_gpus_per_worker=2", "mpijob_launcher_ssh_port=2022", "mpijob_launcher_host_network=true",
        "kube_job_wait_sleep=0.5", "kube_job_cleanup_enabled=false", "gpuops_training_expect_ranks=4",
        "verify_training_log_path=/var/log/gpuops/training.log"], []),

    # tfjob_launcher
    "tfjob: no workers": ("tfjob_launcher", ["tfjob_launcher_image=tf:2.15", "tfjob_launcher_workers=0"], [
        line("tfjob_launcher_workers", "0", "a number of workers, 1 or more")]),
    "tfjob: an unknown device": ("tfjob_launcher", ["tfjob_launcher_image=tf:2.15", "tfjob_launcher_device=tpu"], [
        line("tfjob_launcher_device", "'tpu'", "gpu, cpu, or null for gpu with GPUs per worker and cpu without")]),
    "tfjob: every problem at once": ("tfjob_launcher", [
        "tfjob_launcher_gpus_per_worker=one", "tfjob_launcher_parameter_servers=-1", "kube_job_log_lines=-5",
        "tfjob_launcher_spread_workers=true"], [
        line("tfjob_launcher_gpus_per_worker", "'one'", "a whole number"),
        line("tfjob_launcher_image", "''", TFJOB_IMAGE),
        line("tfjob_launcher_parameter_servers", "-1",
             "a number of parameter servers, 0 (the workers train in step) or more"),
        line("kube_job_log_lines", "-5", "a number of log lines to keep, 0 (the whole log) or more")]),
    "tfjob: expected ranks other than the workers": ("tfjob_launcher", [
        "tfjob_launcher_image=tf:2.15", "tfjob_launcher_workers=4", "tfjob_launcher_parameter_servers=2",
        "gpuops_training_expect_ranks=6"], [
        line("gpuops_training_expect_ranks", "6 (with tfjob_launcher_workers=4)",
             "4, the ranks the tfjob launcher starts (4 workers x 1 rank), or leave it unset to expect that count")]),
    # The options every Kubernetes launcher shares are kube_job's: one given under the launcher's own name would be
    # passed over without a word.
    "tfjob: a shared option under the launcher's own name": ("tfjob_launcher", [
        "tfjob_launcher_image=tf:2.15", "tfjob_launcher_namespace=training"], [
        line("tfjob_launcher_namespace", "'training'",
             "kube_job_namespace instead: every Kubernetes launcher takes it from there (the kube_job role)")]),
    "tfjob: an NCCL variable in the launcher's env": ("tfjob_launcher", [
        "tfjob_launcher_image=tf:2.15", '{"kube_job_env": {"NCCL_DEBUG": "INFO", "TF_CPP_MIN_LOG_LEVEL": "1"}}'], [
        line("kube_job_env", '{"NCCL_DEBUG": "INFO", "TF_CPP_MIN_LOG_LEVEL": "1"}', NCCL_IN_ENV.format("NCCL_DEBUG"))]),
    "tfjob: right values as strings": ("tfjob_launcher", [
        "tfjob_launcher_image=tf:2.15", "tfjob_launcher_workers=4", "tfjob_launcher_parameter_servers=2",
        "tfjob_launcher_gpus_per_worker=1", "tfjob_launcher_device=cpu", "kube_job_rerun=yes",
        "kube_job_wait_timeout=600", "gpuops_training_expect_ranks=4"], []),

    # pytorchjob_launcher: torchrun in every pod, PyTorch only.
    "pytorchjob: every problem at once": ("pytorchjob_launcher", [
        "pytorchjob_launcher_workers=0", "pytorchjob_launcher_procs_per_worker=0", "pytorchjob_launcher_port=0",
        "pytorchjob_launcher_device=tpu", "pytorchjob_launcher_benchmark_source=image"], [
        line("pytorchjob_launcher_image", "''", "the name of an image with PyTorch (the site's, gpuops_pytorch_image, by "
             "default) and /opt/gpuops/benchmark/gpuops_benchmark.py"),
        line("pytorchjob_launcher_device", "'tpu'", "gpu, cpu, or null for gpu with GPUs per pod and cpu without"),
        line("pytorchjob_launcher_port", "0", "a port from 1 to 65535 for the master's rendezvous"),
        line("pytorchjob_launcher_workers", "0", "a number of pods, 1 or more"),
        line("pytorchjob_launcher_procs_per_worker", "0", "a number of ranks per pod, 1 or more, or null for one per GPU")]),
    "pytorchjob: Horovod's options, the role's flags, fp16 on CPUs, ranks other than pods x ranks": ("pytorchjob_launcher", [
        "gpuops_pytorch_image=pytorch:2.5.1", "pytorchjob_launcher_workers=2", "pytorchjob_launcher_gpus_per_worker=0",
        "pytorchjob_launcher_procs_per_worker=2", "gpuops_training_expect_ranks=2",
        '{"kube_job_benchmark_args": ["--device", "cpu", "--hierarchical-allreduce", "--mixed-precision"]}',
        '{"kube_job_env": {"HOROVOD_CYCLE_TIME": "1"}}'], [
        line("kube_job_benchmark_args", PYTORCHJOB_ARGS, "no --distribution, --framework or --device: the role "
             "gives --framework pytorch --distribution ddp and --device (pytorchjob_launcher_device)"),
        line("kube_job_benchmark_args", PYTORCHJOB_ARGS + " (with pytorchjob_launcher_gpus_per_worker=0, "
             "pytorchjob_launcher_device=null)",
             "no --mixed-precision fp16 while the pods train on CPUs (no GPU asked for, or the device cpu): float16 mixed "
             "precision needs GPUs; use --mixed-precision bf16 on CPUs, or leave it out for fp32"),
        line("kube_job_benchmark_args", PYTORCHJOB_ARGS, "none of Horovod's options (--hierarchical-allreduce), "
             "which DistributedDataParallel does not use"),
        line("kube_job_env", '{"HOROVOD_CYCLE_TIME": "1"}',
             "no HOROVOD_* variables, which DistributedDataParallel does not read"),
        line("gpuops_training_expect_ranks", "2 (with pytorchjob_launcher_workers=2, pytorchjob_launcher_procs_per_worker=2, "
             "pytorchjob_launcher_gpus_per_worker=0)",
             "4, the ranks the pytorchjob launcher starts (2 pods x 2 ranks), or leave it unset to expect that count")]),
    "pytorchjob: right values as strings": ("pytorchjob_launcher", [
        "gpuops_pytorch_image=pytorch:2.5.1", "pytorchjob_launcher_workers=2", "pytorchjob_launcher_gpus_per_worker=4",
        "pytorchjob_launcher_port=29500", "gpuops_training_expect_ranks=8",
        '{"kube_job_benchmark_args": ["--mixed-precision", "--channels-last"]}'], []),

    # pod_launcher
    "pod: fewer than no GPUs": ("pod_launcher", ["pod_launcher_image=horovod:0.28.1", "pod_launcher_gpus=-1"], [
        line("pod_launcher_gpus", "-1", "a number of GPUs per pod, 0 (training on CPUs) or more")]),
    "pod: a word for the ranks": ("pod_launcher", ["pod_launcher_image=horovod:0.28.1", "pod_launcher_ranks=all"], [
        line("pod_launcher_ranks", "'all'", "a whole number")]),
    "pod: every problem at once": ("pod_launcher", [
        "pod_launcher_image=", "pod_launcher_ranks=0", "kube_job_api_retries=-1", "pod_launcher_gpus=8"], [
        line("pod_launcher_image", "''", POD_IMAGE),
        line("pod_launcher_ranks", "0", "a number of ranks per pod, 1 or more, or null for one per GPU"),
        line("kube_job_api_retries", "-1", "a number of retries, 0 (none) or more")]),
    "pod: expected ranks other than one per GPU": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", "pod_launcher_gpus=8", "gpuops_training_expect_ranks=4"], [
        line("gpuops_training_expect_ranks", "4 (with pod_launcher_ranks=null, pod_launcher_gpus=8)",
             "8, the ranks the pod launcher starts (one pod x 8 ranks), or leave it unset to expect that count")]),
    "pod: an NCCL variable in the launcher's env": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", '{"kube_job_env": {"NCCL_P2P_LEVEL": "NVL"}}'], [
        line("kube_job_env", '{"NCCL_P2P_LEVEL": "NVL"}', NCCL_IN_ENV.format("NCCL_P2P_LEVEL"))]),
    # PyTorch's DDP in the pod: torchrun starts the ranks; the distribution is the role's, Horovod's options have no use.
    "pod: an unknown distribution": ("pod_launcher", ["pod_launcher_image=pytorch:2.5.1", "pod_launcher_distribution=mpi"], [
        line("pod_launcher_distribution", "'mpi'", "one of horovod, ddp")]),
    "pod: ddp with Horovod's options, fp16 without GPUs, ranks other than torchrun's": ("pod_launcher", [
        "pod_launcher_image=pytorch:2.5.1", "pod_launcher_distribution=ddp", "pod_launcher_ranks=2",
        '{"kube_job_benchmark_args": ["--distribution", "ddp", "--fp16-allreduce", "--mixed-precision"]}',
        '{"pod_launcher_horovodrun_args": ["--gloo"]}', '{"kube_job_env": {"HOROVOD_CYCLE_TIME": "1"}}',
        "gpuops_training_expect_ranks=4"], [
        line("pod_launcher_horovodrun_args", "[\"--gloo\"] (with pod_launcher_distribution='ddp')",
             "[]: torchrun starts the ranks of ddp, not horovodrun"),
        line("kube_job_benchmark_args", '["--distribution", "ddp", "--fp16-allreduce", "--mixed-precision"] (with '
             "pod_launcher_gpus=0)",
             "no --mixed-precision fp16 while the pod trains on CPUs (no GPU asked for, or --device cpu): float16 mixed "
             "precision needs GPUs; use --mixed-precision bf16 on CPUs, or leave it out for fp32"),
        line("kube_job_benchmark_args", '["--distribution", "ddp", "--fp16-allreduce", "--mixed-precision"]',
             "no --distribution or --framework: with pod_launcher_distribution ddp the role gives --framework pytorch "
             "--distribution ddp"),
        line("kube_job_benchmark_args", '["--distribution", "ddp", "--fp16-allreduce", "--mixed-precision"] (with '
             "pod_launcher_distribution='ddp')",
             "none of Horovod's options (--fp16-allreduce), which DistributedDataParallel does not use"),
        line("kube_job_env", "{\"HOROVOD_CYCLE_TIME\": \"1\"} (with pod_launcher_distribution='ddp')",
             "no HOROVOD_* variables, which DistributedDataParallel does not read"),
        line("gpuops_training_expect_ranks", "4 (with pod_launcher_ranks=2, pod_launcher_gpus=0)",
             "2, the ranks the pod launcher starts (one pod x 2 ranks), or leave it unset to expect that count")]),
    "pod: ddp asked in the program's arguments": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", '{"kube_job_benchmark_args": ["--distribution=ddp"]}'], [
        line("kube_job_benchmark_args", '["--distribution=ddp"]', "no --distribution other than horovod; set "
             "pod_launcher_distribution to ddp for PyTorch's DistributedDataParallel")]),
    "pod: ddp right values as strings": ("pod_launcher", [
        "pod_launcher_image=pytorch:2.5.1", "pod_launcher_distribution=ddp", "pod_launcher_gpus=2",
        '{"kube_job_benchmark_args": ["--mixed-precision", "--channels-last"]}', "gpuops_training_expect_ranks=2"], []),
    "pod: right values as strings": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", "pod_launcher_gpus=0", "pod_launcher_ranks=2",
        "kube_job_report_enabled=false", "kube_job_privileged=no", "kube_job_wait_sleep=2",
        "gpuops_training_expect_ranks=2"], []),

    # job_launcher
    "job: a port above 65535": ("job_launcher", ["job_launcher_image=horovod:0.28.1", "job_launcher_ssh_port=70000"], [
        line("job_launcher_ssh_port", "70000", SSHD_PORT)]),
    "job: a boolean that is not one": ("job_launcher", [
        "job_launcher_image=horovod:0.28.1", "job_launcher_host_network=sometimes"], [
        line("job_launcher_host_network", "'sometimes'", "true or false")]),
    "job: every problem at once": ("job_launcher", [
        "job_launcher_image=horovod:0.28.1", "job_launcher_workers=0", "job_launcher_gpus_per_worker=-8",
        "job_launcher_ssh_port=0", "kube_job_wait_timeout=0", "job_launcher_drop_page_cache=true"], [
        line("job_launcher_ssh_port", "0", SSHD_PORT),
        line("job_launcher_workers", "0", "a number of workers, 1 or more"),
        line("job_launcher_gpus_per_worker", "-8", "a number of GPUs per worker, 0 (training on CPUs) or more"),
        line("kube_job_wait_timeout", "0",
             "a number of seconds to wait for the job, 1 or more")]),
    "job: expected ranks other than workers x slots": ("job_launcher", [
        "job_launcher_image=horovod:0.28.1", "job_launcher_workers=2", "job_launcher_slots_per_worker=8",
        "job_launcher_gpus_per_worker=8", "gpuops_training_expect_ranks=8"], [
        line("gpuops_training_expect_ranks", "8 (with job_launcher_workers=2, job_launcher_slots_per_worker=8, "
             "job_launcher_gpus_per_worker=8)",
             "16, the ranks the job launcher starts (2 workers x 8 slots), or leave it unset to expect that count")]),
    "job: an NCCL variable in the launcher's env": ("job_launcher", [
        "job_launcher_image=horovod:0.28.1", '{"kube_job_env": {"NCCL_SOCKET_IFNAME": "bond0"}}'], [
        line("kube_job_env", '{"NCCL_SOCKET_IFNAME": "bond0"}', NCCL_IN_ENV.format("NCCL_SOCKET_IFNAME"))]),
    "job: right values as strings": ("job_launcher", [
        "job_launcher_image=horovod:0.28.1", "job_launcher_workers=2", "job_launcher_gpus_per_worker=8",
        "job_launcher_ssh_port=22122", "job_launcher_host_network=true", "job_launcher_drop_page_cache=false",
        "job_launcher_cleanup_workers=false", "gpuops_training_expect_ranks=16",
        "kube_job_log_path=/var/log/gpuops/job.log"], []),

    # ssh_launcher: the check runs on each host with its own host variables: here the case's host's.
    "ssh: no ranks per host": ("ssh_launcher", ["ssh_launcher_slots_per_host=0"], [
        line("ssh_launcher_slots_per_host", "0", "a number of ranks per host, 1 or more")]),
    "ssh: an unknown controller": ("ssh_launcher", ["ssh_launcher_controller=mpich"], [
        line("ssh_launcher_controller", "'mpich'", "one of mpi, gloo")]),
    "ssh: every problem at once": ("ssh_launcher", [
        "ssh_launcher_ssh_port=0", "ssh_launcher_python=python3", "ssh_launcher_timeout=soon",
        '{"ssh_launcher_env": {"HOROVOD_CYCLE_TIME": "1", "NCCL-ALGO": "Ring"}}', "ssh_launcher_keys_enabled=false"], [
        line("ssh_launcher_timeout", "'soon'", "a whole number"),
        line("ssh_launcher_python", "'python3'",
             "the absolute path of the Python that has Horovod, the same on every host"),
        line("ssh_launcher_env", '{"HOROVOD_CYCLE_TIME": "1", "NCCL-ALGO": "Ring"}',
             "a mapping of environment variable names (letters, digits and _, not starting with a digit) to values; "
             "not names: NCCL-ALGO"),
        line("ssh_launcher_ssh_port", "0", "a port from 1 to 65535, the hosts' SSH port")]),
    "ssh: a host's own ranks below one": ("ssh_launcher", ["ssh_launcher_slots_per_host=4", "ssh_launcher_slots=0"], [
        line("ssh_launcher_slots", "0",
             "a number of ranks on %s, 1 or more, or unset for ssh_launcher_slots_per_host (4)" % CASE_HOST)]),
    "ssh: an NCCL variable in the launcher's env": ("ssh_launcher", [
        '{"ssh_launcher_env": {"NCCL_IB_DISABLE": "1"}}'], [
        line("ssh_launcher_env", '{"NCCL_IB_DISABLE": "1"}', NCCL_IN_ENV.format("NCCL_IB_DISABLE"))]),
    "ssh: ddp with horovodrun, Horovod's options and fp16 on CPUs": ("ssh_launcher", [
        "ssh_launcher_distribution=ddp", "ssh_launcher_controller=gloo", "ssh_launcher_rdzv_port=0",
        '{"ssh_launcher_program_args": ["--framework", "pytorch", "--cycle-time-ms", "5", "--device", "cpu", '
        '"--mixed-precision", "fp16"]}', '{"ssh_launcher_env": {"HOROVOD_FUSION_THRESHOLD": "0"}}'], [
        line("ssh_launcher_rdzv_port", "0", "a port from 1 to 65535, free on the first host, for torchrun's rendezvous"),
        line("ssh_launcher_controller", "'gloo' (with ssh_launcher_distribution='ddp')",
             "mpi, which starts torchrun on each host (gloo is horovodrun's, for Horovod only)"),
        line("ssh_launcher_program_args", SSH_DDP_ARGS, "no --mixed-precision fp16 with --device cpu: float16 mixed "
             "precision needs GPUs; use --mixed-precision bf16 on CPUs, or leave it out for fp32"),
        line("ssh_launcher_program_args", SSH_DDP_ARGS, "no --distribution or --framework: with ssh_launcher_distribution "
             "ddp the role gives --framework pytorch --distribution ddp"),
        line("ssh_launcher_program_args", SSH_DDP_ARGS + " (with ssh_launcher_distribution='ddp')",
             "none of Horovod's options (--cycle-time-ms), which DistributedDataParallel does not use"),
        line("ssh_launcher_env", "{\"HOROVOD_FUSION_THRESHOLD\": \"0\"} (with ssh_launcher_distribution='ddp')",
             "no HOROVOD_* variables, which DistributedDataParallel does not read")]),
    "ssh: an unknown distribution": ("ssh_launcher", ["ssh_launcher_distribution=nccl"], [
        line("ssh_launcher_distribution", "'nccl'", "one of horovod, ddp")]),
    "ssh: ddp right values as strings": ("ssh_launcher", [
        "ssh_launcher_distribution=ddp", "ssh_launcher_rdzv_port=29500",
        '{"ssh_launcher_program_args": ["--model", "small_cnn", "--device", "cpu", "--mixed-precision", "bf16"]}'], []),
    "ssh: right values as strings": ("ssh_launcher", [
        "ssh_launcher_slots_per_host=2", "ssh_launcher_slots=1", "ssh_launcher_ssh_port=2222",
        "ssh_launcher_keys_enabled=false", "ssh_launcher_key_cleanup=no", "ssh_launcher_report_enabled=true",
        "ssh_launcher_timeout=1800", "ssh_launcher_start_timeout=600", "gpuops_training_expect_ranks=2"], []),

    # slurm_launcher: the check runs on the training hosts, the login host first among them: here the case's host.
    "slurm: no node": ("slurm_launcher", ["slurm_launcher_nodes=0"], [
        line("slurm_launcher_nodes", "0", "a number of nodes, 1 or more")]),
    "slurm: an unknown launch method": ("slurm_launcher", ["slurm_launcher_launch=horovodrun"], [
        line("slurm_launcher_launch", "'horovodrun'", "one of srun, mpirun")]),
    "slurm: an NCCL variable in the launcher's env": ("slurm_launcher", [
        '{"slurm_launcher_env": {"NCCL_IB_HCA": "mlx5_0", "OMP_NUM_THREADS": "4"}}'], [
        line("slurm_launcher_env", '{"NCCL_IB_HCA": "mlx5_0", "OMP_NUM_THREADS": "4"}', NCCL_IN_ENV.format("NCCL_IB_HCA"))]),
    "slurm: every problem at once": ("slurm_launcher", [
        "slurm_launcher_work_dir=gpuops", "slurm_launcher_tasks_per_node=0", "slurm_launcher_gpus_per_node=-1",
        "slurm_launcher_time_limit=2h", '{"slurm_launcher_sbatch_options": ["exclusive"]}',
        '{"slurm_launcher_env": {"NCCL-ALGO": "Ring"}}', "slurm_launcher_python=venv/bin/python",
        "slurm_launcher_poll_interval=0", "slurm_launcher_wait_on_existing=perhaps"], [
        line("slurm_launcher_wait_on_existing", "'perhaps'", "true or false"),
        line("slurm_launcher_work_dir", "'gpuops'", "the absolute path (or ~/ in the job user's home) of a folder on "
             "the login host that the compute nodes share, such as ~/gpuops-training"),
        line("slurm_launcher_tasks_per_node", "0", "a number of tasks (ranks) per node, 1 or more, or null for one per GPU"),
        line("slurm_launcher_gpus_per_node", "-1", "a number of GPUs per node, 0 (no --gres) or more"),
        line("slurm_launcher_time_limit", "'2h'", "a time limit in one of sbatch's forms, minutes, minutes:seconds, "
             "hours:minutes:seconds, days-hours, days-hours:minutes or days-hours:minutes:seconds (such as 30, 01:30:00 "
             "or 1-12), or \"\" for the partition's default"),
        line("slurm_launcher_sbatch_options", '["exclusive"]', "sbatch options, each starting with '-', such as "
             "--exclusive or --mem=0"),
        line("slurm_launcher_env", '{"NCCL-ALGO": "Ring"}', "a mapping of environment variable names (letters, digits "
             "and _, not starting with a digit) to values; not names: NCCL-ALGO"),
        line("slurm_launcher_python", "'venv/bin/python'", "the absolute path of the Python that has Horovod, as the "
             "compute nodes see it, or a command on the job's PATH once the modules are loaded, such as python3"),
        line("slurm_launcher_poll_interval", "0.0", "a number of seconds between two looks at the job, above 0")]),
    "slurm: a GPU type without GPUs, a partition with a blank": ("slurm_launcher", [
        "slurm_launcher_gpu_type=a100", '{"slurm_launcher_partition": "gpu debug"}'], [
        line("slurm_launcher_gpu_type", "'a100' (with slurm_launcher_gpus_per_node=0)",
             '"" while the job asks for no GPU (slurm_launcher_gpus_per_node 0)'),
        line("slurm_launcher_partition", "'gpu debug'", "a partition name (or several, comma-separated) without "
             "blanks, or \"\" for the cluster's default")]),
    "slurm: expected ranks other than nodes x tasks": ("slurm_launcher", [
        "slurm_launcher_nodes=2", "slurm_launcher_gpus_per_node=4", "gpuops_training_expect_ranks=4"], [
        line("gpuops_training_expect_ranks", "4 (with slurm_launcher_nodes=2, slurm_launcher_tasks_per_node=null, "
             "slurm_launcher_gpus_per_node=4)",
             "8, the ranks the job starts (2 nodes x 4 tasks), or leave it unset to expect that count")]),
    "slurm: right values as strings": ("slurm_launcher", [
        "slurm_launcher_nodes=2", "slurm_launcher_tasks_per_node=2", "slurm_launcher_gpus_per_node=2",
        "slurm_launcher_gpu_type=a100", "slurm_launcher_time_limit=30", "slurm_launcher_poll_interval=0.5",
        "slurm_launcher_timeout=600", "slurm_launcher_wait_on_existing=no", "slurm_launcher_launch=mpirun",
        "slurm_launcher_python=python3", "slurm_launcher_job_user=alice", "slurm_launcher_partition=gpu,debug",
        '{"slurm_launcher_modules": ["cuda/12.2"]}', "gpuops_training_expect_ranks=4"], []),

    # training_benchmark
    "benchmark: a relative Python": ("training_benchmark", ["training_benchmark_python=venv/bin/python3"], [
        line("training_benchmark_python", "'venv/bin/python3'",
             "the absolute path of the Python that has Horovod, the same on every node")]),
    "benchmark: an unknown framework": ("training_benchmark", ["training_benchmark_framework=jax"], [
        line("training_benchmark_framework", "'jax'", "one of tensorflow, pytorch")]),
    "benchmark: every problem at once": ("training_benchmark", [
        "training_benchmark_check_enabled=perhaps", "training_benchmark_wheel_dir=wheels",
        '{"training_benchmark_required_controllers": ["gloo", "tcp"]}', "training_benchmark_dir=/opt/gpuops/benchmark"], [
        line("training_benchmark_check_enabled", "'perhaps'", "true or false"),
        line("training_benchmark_required_controllers", '["gloo", "tcp"]',
             "a list of Horovod controllers among gloo, mpi and nccl ([] for none)"),
        line("training_benchmark_wheel_dir", "'wheels'", "the absolute path, on the controller, of a wheelhouse made "
             "by tools/build_horovod.sh, or \"\" for none")]),
    "benchmark: right values as strings": ("training_benchmark", [
        "training_benchmark_install_enabled=false", "training_benchmark_check_enabled=true",
        '{"training_benchmark_required_controllers": ["gloo", "nccl"]}', "training_benchmark_wheel_dir=/srv/wheels"], []),

    # training_verdict: the launchers pass its log and ranks; the thresholds are the user's.
    "verdict: no ranks": ("training_verdict", ["training_verdict_log=/tmp/bench.log", "training_verdict_ranks=0"], [
        line("training_verdict_ranks", "0", "the number of ranks the launcher started, 1 or more")]),
    "verdict: a boolean that is not one": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", "training_verdict_fail_enabled=maybe"], [
        line("training_verdict_fail_enabled", "'maybe'", "true or false")]),
    "verdict: every problem at once": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", "gpuops_training_min_scaling_efficiency=90",
        "gpuops_training_baseline_img_per_sec=-1", "gpuops_training_expect_ranks=4"], [
        line("gpuops_training_min_scaling_efficiency", "90.0", SHARE),
        line("gpuops_training_baseline_img_per_sec", "-1.0", "images per second above 0")]),
    "verdict: a scaling minimum without a baseline": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", "gpuops_training_min_scaling_efficiency=0.8"], [
        line("gpuops_training_baseline_img_per_sec", "null (with gpuops_training_min_scaling_efficiency=0.8)",
             "the images per second of one device with the same model and batch size, which the scaling efficiency "
             "is measured against, or gpuops_training_baseline_report, the report of a run that measured it (or leave "
             "gpuops_training_min_scaling_efficiency unset)")]),
    "verdict: a baseline given twice": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", "gpuops_training_baseline_img_per_sec=700",
        "gpuops_training_baseline_report=/tmp/gpuops-baseline.json"], [
        line("gpuops_training_baseline_report", "'/tmp/gpuops-baseline.json' (with gpuops_training_baseline_img_per_sec=700.0)",
             "one baseline: gpuops_training_baseline_report reads its figure from the report, and "
             "gpuops_training_baseline_img_per_sec gives another")]),
    "verdict: an unknown preset and precision": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", "gpuops_training_threshold_preset=h200", "gpuops_training_precision=bf16"], [
        line("gpuops_training_precision", "'bf16'", "one of amp, fp32"),
        line("gpuops_training_threshold_preset", "'h200'", PRESETS)]),
    # The verdict would refuse these names after the whole run; the check refuses them before it starts.
    "verdict: transports NCCL never names, one both required and forbidden": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", '{"gpuops_training_require_transport": ["IB", "NVLink", "p2p"]}',
        '{"gpuops_training_forbid_transport": ["net/ib", "IBext", "Socket"]}'], [
        line("gpuops_training_require_transport", '["IB", "NVLink", "p2p"]', TRANSPORTS),
        line("gpuops_training_forbid_transport", '["net/ib", "IBext", "Socket"]', TRANSPORTS),
        line("gpuops_training_forbid_transport", '["net/ib", "IBext", "Socket"] (with gpuops_training_require_transport='
             '["IB", "NVLink", "p2p"])', "each transport either required or forbidden, not both (NET/IB is in both)")]),
    # NET/ transports are NCCL's traffic between nodes: a run on one node never shows them.
    "mpijob: NET/IB required of one worker": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_workers=1",
        '{"gpuops_training_require_transport": ["P2P", "ib"]}'], [
        line("gpuops_training_require_transport", '["P2P", "ib"] (with mpijob_launcher_workers=1)',
             ONE_NODE.format("worker", "NET/IB"))]),
    # A registry's port is not a tag: the name after the last slash carries it.
    "mpijob: an image without a tag": ("mpijob_launcher", [
        "mpijob_launcher_image=registry.example.com:5000/ml/gpuops-benchmark"], [
        line("mpijob_launcher_image", "'registry.example.com:5000/ml/gpuops-benchmark'", IMAGE_TAG)]),
    "tfjob: an image by its digest": ("tfjob_launcher", [
        "tfjob_launcher_image=registry.example.com/ml/gpuops-benchmark@sha256:" + "0123456789abcdef" * 4], []),
    # A typo of an option: Ansible would pass over it and run two workers, the default.
    "mpijob: an option that does not exist": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_worker=8", "kube_job_namespce=gpu-benchmark"], [
        line("kube_job_namespce", "a value (hidden: no_log)", UNKNOWN.format("kube_job", "kube_job_namespace")),
        line("mpijob_launcher_worker", "a value (hidden: no_log)", UNKNOWN.format("mpijob_launcher", "mpijob_launcher_workers"))]),
    # The job modules would refuse these names after the node stage, naming their own argument.
    "mpijob: a name Kubernetes refuses": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_name=GPU_Bench"], [
        line("mpijob_launcher_name", "'GPU_Bench'", "a name Kubernetes takes for the mpijob launcher's objects (name "
             "'GPU_Bench' must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and "
             "ending with a letter or digit)")]),
    "job: a name whose last worker's hostname is too long": ("job_launcher", [
        "job_launcher_image=horovod:0.28.1", "job_launcher_workers=12", "job_launcher_name=" + "n" * 53], [
        line("job_launcher_name", "'%s'" % ("n" * 53), "a name Kubernetes takes for the job launcher's objects (name "
             "'{0}' is too long: the last worker's hostname '{0}-workers-11' must be at most 63 characters)".format(
                 "n" * 53))]),
    "pod: a long name of one pod's Job": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", "pod_launcher_name=" + "p" * 63], []),
    "pod: GPUDirect RDMA required of the one pod": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", "gpuops_training_require_gpudirect_rdma=true"], [
        line("gpuops_training_require_gpudirect_rdma", "true", "false for a run on one pod: GPUDirect RDMA is counted on "
             "the RDMA connections between nodes, and this run makes none")]),
    "mpijob: GPUDirect RDMA required of two workers": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_workers=2", "gpuops_training_require_gpudirect_rdma=yes"],
        []),
    "mpijob: NET/IB required of two workers": ("mpijob_launcher", [
        "mpijob_launcher_image=horovod:0.28.1", "mpijob_launcher_workers=2",
        '{"gpuops_training_require_transport": ["NET/IB"]}'], []),
    "pod: NET/Socket required of the one pod": ("pod_launcher", [
        "pod_launcher_image=horovod:0.28.1", '{"gpuops_training_require_transport": ["Socket"]}'], [
        line("gpuops_training_require_transport", '["Socket"]', ONE_NODE.format("pod", "NET/Socket"))]),
    "ssh: NET/Socket required of one host": ("ssh_launcher", [
        '{"ssh_launcher_hosts": ["node1"], "gpuops_training_require_transport": ["NET/Socket"]}'], [
        line("gpuops_training_require_transport", '["NET/Socket"] (with ssh_launcher_hosts=["node1"])',
             ONE_NODE.format("host", "NET/Socket"))]),
    "verdict: right values as strings": ("training_verdict", [
        "training_verdict_log=/tmp/bench.log", "training_verdict_ranks=4", "training_verdict_fail_enabled=false",
        "gpuops_training_expect_ranks=4", "gpuops_training_min_scaling_efficiency=0.9",
        "gpuops_training_baseline_img_per_sec=2470", "gpuops_training_chart_enabled=no",
        "gpuops_training_threshold_preset=a100-sxm", "gpuops_training_precision=amp"], []),
}

NCCL_NUMBERS_GIVEN = ('{"NCCL_DEBUG": "INFO\\nNCCL_ALGO=Ring", "NCCL_IB_GID_INDEX": "three", "NCCL_NSOCKS_PERTHREAD": "8", '
                      '"NCCL_SOCKET_NTHREADS": 16}')

# (inventory, stage check arguments, {host: its problem lines}); every host the verify stage targets is checked, and
# the run fails when any host has a problem.
STAGE_CASES = {
    "an unknown launcher": (LAB_INVENTORY, ["gpuops_launcher=bogus"], dict(
        (host, [line("gpuops_launcher", "'bogus'", "one of mpijob, tfjob, pytorchjob, pod, job, ssh, slurm")]) for host in LAB_HOSTS)),
    # The Slurm launcher runs on the training hosts (the first submits): they check its variables, localhost does not.
    "the Slurm launcher's nodes": (LAB_INVENTORY, ["gpuops_launcher=slurm", "slurm_launcher_nodes=0"], {
        "localhost": [], "node1": [line("slurm_launcher_nodes", "0", "a number of nodes, 1 or more")],
        "node2": [line("slurm_launcher_nodes", "0", "a number of nodes, 1 or more")]}),
    # The Slurm example, run as its hosts.yml says: its login host is checked and its values pass; one size changed
    # on the command line shows that they are the ones checked.
    "the Slurm example": (SLURM_EXAMPLE, ["gpuops_training_hosts=slurm_login"], {"localhost": [], "login01": []}),
    "the Slurm example with a third node": (SLURM_EXAMPLE, ["gpuops_training_hosts=slurm_login", "slurm_launcher_nodes=3"], {
        "localhost": [], "login01": [line(
            "gpuops_training_expect_ranks", "16 (with slurm_launcher_nodes=3, slurm_launcher_tasks_per_node=null, "
            "slurm_launcher_gpus_per_node=8)", "24, the ranks the job starts (3 nodes x 8 tasks), or leave it unset to "
            "expect that count")]}),
    # The pod runs from the controller: only localhost checks its rules; the nodes have nothing to say.
    "the chosen launcher's ranks": (LAB_INVENTORY, [
        "gpuops_launcher=pod", "pod_launcher_image=horovod:0.28.1", "pod_launcher_gpus=8",
        "gpuops_training_expect_ranks=4"], {
        "localhost": [line("gpuops_training_expect_ranks", "4 (with pod_launcher_ranks=null, pod_launcher_gpus=8)",
                           "8, the ranks the pod launcher starts (one pod x 8 ranks), or leave it unset to expect "
                           "that count")],
        "node1": [], "node2": []}),
    # A preset that does not exist stops the run before the launcher starts, whichever launcher it is.
    "an unknown preset": ("localhost,", ["gpuops_launcher=ssh", "gpuops_training_threshold_preset=t4"], {
        "localhost": [line("gpuops_training_threshold_preset", "'t4'", PRESETS)]}),
    "NCCL settings that are not NCCL's": ("localhost,", [
        "gpuops_launcher=ssh", '{"gpuops_nccl": {"IB_HCA": "mlx5_0", "NCCL_ALGO": ["Ring"]}}'], {
        "localhost": [line("gpuops_nccl", '{"IB_HCA": "mlx5_0", "NCCL_ALGO": ["Ring"]}',
                           "a mapping of NCCL variables to single-line values, such as {NCCL_IB_HCA: 'mlx5_0,mlx5_1', "
                           "NCCL_IB_GID_INDEX: 3}")]}),
    # NCCL's own bounds on its numbers, as the network role's variables had them.
    "NCCL numbers out of NCCL's ranges": ("localhost,", [
        "gpuops_launcher=ssh", '{"gpuops_nccl": {"NCCL_IB_GID_INDEX": "three", "NCCL_SOCKET_NTHREADS": 16, '
        '"NCCL_NSOCKS_PERTHREAD": "8", "NCCL_DEBUG": "INFO\\nNCCL_ALGO=Ring"}}'], {
        "localhost": [line("gpuops_nccl", NCCL_NUMBERS_GIVEN, expected) for expected in (
            "a mapping of NCCL variables to single-line values, such as {NCCL_IB_HCA: 'mlx5_0,mlx5_1', NCCL_IB_GID_INDEX: 3}",
            "NCCL_IB_GID_INDEX from 0 to 255 (3 is usual for RoCE v2)",
            "NCCL_NSOCKS_PERTHREAD at most 4, so that its product with NCCL_SOCKET_NTHREADS is at most 64")]}),
    # The chosen launcher's shape says how many nodes its run spans: one worker cannot show NCCL's traffic between nodes.
    "NET/IB required of one MPIJob worker": (LAB_INVENTORY, [
        "mpijob_launcher_workers=1", "gpuops_training_expect_ranks=2", '{"gpuops_training_require_transport": ["NET/IB"]}'], {
        "localhost": [line("gpuops_training_require_transport", '["NET/IB"] (with mpijob_launcher_workers=1)',
                           ONE_NODE.format("worker", "NET/IB"))],
        "node1": [], "node2": []}),
    # The playbooks' own variables, on localhost alone (the SSH launcher's roles run on the GPU nodes, none here).
    "a scaling minimum without a baseline": ("localhost,", [
        "gpuops_launcher=ssh", "gpuops_training_min_scaling_efficiency=0.8"], {
        "localhost": [line("gpuops_training_baseline_img_per_sec",
                           "null (with gpuops_training_min_scaling_efficiency=0.8)",
                           "the images per second of one device with the same model and batch size, which the scaling "
                           "efficiency is measured against, or gpuops_training_baseline_report, the report of a run "
                           "that measured it (or leave gpuops_training_min_scaling_efficiency unset)")]}),
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """{case id: (whether the check failed, its problem lines, its host)} for every role case, from one run whose
    hosts are the cases, and {case id: run} for the stage cases."""
    ran = check_inputs_cases(tmp_path_factory.mktemp("input_rules"),
                             dict((case, (role, arguments)) for case, (role, arguments, _lines) in CASES.items()),
                             CHECK_TASK)
    roles = dict((case, (bool(result.get("failed")), result.get("problems"), host))
                 for case, (_run, result, host) in ran.items())
    env = ansible_env()

    def check_stage(case):
        inventory, arguments, _lines = STAGE_CASES[case]
        return case, run_playbook(STAGE_CHECK, inventory, [VERIFY_STAGE] + arguments, env=env, timeout=120)

    with ThreadPoolExecutor(max_workers=4) as pool:
        stages = dict(pool.map(check_stage, STAGE_CASES))
    return roles, stages


@pytest.mark.parametrize("case", list(CASES))
def test_a_role_check_names_exactly_the_wrong_values_given_as_strings(checked, case):
    failed, problems, host = checked[0][case]
    expected = [line.replace(CASE_HOST, host) for line in CASES[case][2]]
    assert problems == expected
    assert failed == bool(expected)


@pytest.mark.parametrize("case", list(STAGE_CASES))
def test_the_verify_stage_check_names_the_wrong_values_on_each_host(checked, case):
    done = checked[1][case]
    expected = STAGE_CASES[case][2]
    found = dict((host, done.result(STAGE_CHECK_TASK, host).get("problems")) for host in expected)
    assert found == expected, done.explain()
    assert (done.rc != 0) == any(expected.values())
