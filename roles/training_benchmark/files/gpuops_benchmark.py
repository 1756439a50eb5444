# -*- coding: utf-8 -*-
# Copyright: (c) 2025, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Horovod synthetic training benchmark (PyTorch or TensorFlow), run on every rank.

Trains a model on random images and labels and reports throughput in two ways:

* Horovod's usual synthetic-benchmark lines, printed by rank 0 only (``Model:``, ``Batch size:``,
  ``Number of GPUs:``, ``Iter #N: X img/sec per GPU``, ``Img/sec per GPU: X +-Y``,
  ``Total img/sec on N GPU(s): X +-Y``). Horovod's total is rank 0's figure times the world size.
* Every rank's own figures, prefixed ``Rank R on HOST:`` (``Iter #N``, ``Img/sec per GPU`` and
  ``Compute img/sec per GPU``, the last timing only the forward and backward passes, without waiting
  for the other ranks), so that a slow rank or host shows.

Launch it with mpirun or horovodrun, one process per device:
    mpirun -np 4 -H node1:2,node2:2 python3 gpuops_benchmark.py --framework tensorflow
    horovodrun --gloo -np 2 -H node1:1,node2:1 python3 gpuops_benchmark.py --model small_cnn

Or without Horovod, with PyTorch's own distribution (``--distribution ddp``: DistributedDataParallel over NCCL
on GPUs, Gloo on CPUs), started by torchrun or by mpirun, which then passes the first rank's host and a free port:
    torchrun --nnodes 2 --nproc_per_node 4 --rdzv-backend c10d --rdzv-endpoint node1:29500 \
        gpuops_benchmark.py --framework pytorch --distribution ddp
    mpirun -np 2 -H node1:1,node2:1 -x MASTER_ADDR=node1 -x MASTER_PORT=29500 \
        python3 gpuops_benchmark.py --framework pytorch --distribution ddp
NCCL writes its NCCL_DEBUG=INFO lines to the ranks' own output, which the launcher's log keeps.

Or with TensorFlow's own distribution (``--distribution tf_config``), in every pod of a
Kubeflow TFJob, which sets ``TF_CONFIG``:

* a cluster of workers (and an optional chief) trains synchronously with MultiWorkerMirroredStrategy, each
  rank printing its own lines as above (the chief, or worker 0, is rank 0);
* a cluster with parameter servers trains with ParameterServerStrategy: the chief coordinates, the
  workers run the steps it sends them against variables held by the parameter servers, and the chief
  prints every worker's figures, counting the steps each worker ran.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import math
import os
import socket
import sys
import timeit

FRAMEWORKS = ("tensorflow", "pytorch")
DISTRIBUTIONS = ("horovod", "tf_config", "ddp")
# --mixed-precision alone is fp16, as before it took a value.
MIXED_PRECISIONS = ("fp16", "bf16")
# Where each launcher of --distribution ddp puts this process's rank: (launcher, rank, world size, local rank,
# local world size), looked for in this order.
RANK_ENVIRONMENTS = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    ("mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
)
# Models both frameworks know under these names; other names are looked up in torchvision.models
# (PyTorch) or tf.keras.applications (TensorFlow).
SMALL_CNN = "small_cnn"
GPU_DEFAULT_MODEL = "resnet50"
# A few convolutions: a CPU-only lab run of a few ranks takes seconds, not minutes.
CPU_DEFAULT_MODEL = SMALL_CNN


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description="Horovod synthetic benchmark: random data, real training steps, per-rank throughput."
    )
    parser.add_argument("--framework", choices=FRAMEWORKS + ("auto",), default="auto",
                        help="auto: TensorFlow when horovod.tensorflow imports, else PyTorch")
    parser.add_argument("--distribution", choices=DISTRIBUTIONS, default="horovod",
                        help="horovod (mpirun or horovodrun); tf_config: TensorFlow's own multi-worker "
                             "or parameter-server training across the cluster TF_CONFIG describes; ddp: PyTorch's "
                             "DistributedDataParallel (torchrun, or mpirun with MASTER_ADDR and MASTER_PORT)")
    parser.add_argument("--device", choices=("auto", "gpu", "cpu"), default="auto",
                        help="auto: one GPU per local rank when the framework sees GPUs, else CPU")
    parser.add_argument("--model", default=None,
                        help="%s (GPU default), resnet18 (PyTorch), %s (CPU default), or any "
                             "torchvision / tf.keras.applications model name"
                             % (GPU_DEFAULT_MODEL, SMALL_CNN))
    parser.add_argument("--batch-size", type=int, default=None,
                        help="images per rank and step (default: 32 on GPUs, 16 on CPUs)")
    parser.add_argument("--image-size", type=int, default=None,
                        help="side of the square input images (default: 224, or 64 for %s)" % SMALL_CNN)
    parser.add_argument("--num-classes", type=int, default=1000)
    parser.add_argument("--num-warmup-batches", type=int, default=5,
                        help="steps before timing starts")
    parser.add_argument("--num-batches-per-iter", type=int, default=5,
                        help="steps timed together as one iteration")
    parser.add_argument("--num-iters", type=int, default=10, help="timed iterations")
    parser.add_argument("--mixed-precision", nargs="?", const="fp16", choices=MIXED_PRECISIONS, default=None,
                        help="autocast (PyTorch, with a gradient scaler for fp16) or a Keras mixed policy: fp16 "
                             "(the default when given alone; GPUs only) or bf16 (GPUs, and CPUs)")
    parser.add_argument("--channels-last", action="store_true",
                        help="PyTorch: the model and images in channels-last memory format (TensorFlow's images "
                             "always are)")
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads per rank (0: the host's cores divided among its local ranks)")
    knobs = parser.add_argument_group(
        "Horovod knobs", "Each flag, when given, sets the HOROVOD_* variable named in brackets before "
        "hvd.init(); otherwise the variable from the environment (mpirun -x) applies.")
    knobs.add_argument("--fp16-allreduce", action="store_true",
                       help="compress gradients to float16 for the allreduce")
    knobs.add_argument("--fusion-threshold-mb", type=float, default=None,
                       help="tensor fusion buffer in MiB [HOROVOD_FUSION_THRESHOLD, bytes]")
    knobs.add_argument("--cycle-time-ms", type=float, default=None,
                       help="milliseconds between fusion cycles [HOROVOD_CYCLE_TIME]")
    knobs.add_argument("--hierarchical-allreduce", action="store_true",
                       help="allreduce within each host first, then across hosts "
                            "[HOROVOD_HIERARCHICAL_ALLREDUCE=1]")
    args = parser.parse_args(argv)
    for name in ("batch_size", "image_size", "num_classes", "num_batches_per_iter", "num_iters"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error("--%s must be at least 1, got %s" % (name.replace("_", "-"), value))
    if args.num_warmup_batches < 0 or args.threads < 0:
        parser.error("--num-warmup-batches and --threads cannot be negative")
    problem = flag_combination_problem(args)
    if problem:
        parser.error(problem)
    return args


def flag_combination_problem(args):
    """What makes these flags unable to run together, before any framework is imported."""
    if args.distribution == "tf_config" and args.framework == "pytorch":
        return "--distribution tf_config is TensorFlow's: it needs --framework tensorflow (or auto)"
    if args.distribution == "ddp" and args.framework == "tensorflow":
        return "--distribution ddp is PyTorch's DistributedDataParallel: it needs --framework pytorch (or auto)"
    if args.channels_last and (args.framework == "tensorflow" or args.distribution == "tf_config"):
        return "--channels-last is PyTorch's memory format; TensorFlow's images are channels-last already"
    knobs = [flag for flag, value in (("--fp16-allreduce", args.fp16_allreduce),
                                      ("--fusion-threshold-mb", args.fusion_threshold_mb is not None),
                                      ("--cycle-time-ms", args.cycle_time_ms is not None),
                                      ("--hierarchical-allreduce", args.hierarchical_allreduce)) if value]
    if knobs and args.distribution == "ddp":
        return "%s: Horovod's knobs, which --distribution ddp does not use" % ", ".join(knobs)
    if args.device == "cpu":
        return cpu_precision_problem(args)
    return None


def cpu_precision_problem(args):
    if args.mixed_precision == "fp16":
        return ("--mixed-precision fp16 needs GPUs: float16 mixed precision is a GPU measurement (tensor cores); "
                "on CPUs use --mixed-precision bf16, or leave the flag out for fp32")
    return None


def refuse_cpu_precision(args, use_gpu):
    """Stops a rank whose device turned out to be the CPU (--device auto) before it does any work."""
    problem = None if use_gpu else cpu_precision_problem(args)
    if problem:
        sys.exit("gpuops_benchmark: " + problem)


def precision_name(args):
    return (args.mixed_precision or "fp32") + (", channels-last" if args.channels_last else "")


def horovod_environment(args):
    """The HOROVOD_* variables the knob flags ask for (read by hvd.init())."""
    env = {}
    if args.fusion_threshold_mb is not None:
        env["HOROVOD_FUSION_THRESHOLD"] = str(int(args.fusion_threshold_mb * 1024 * 1024))
    if args.cycle_time_ms is not None:
        env["HOROVOD_CYCLE_TIME"] = str(args.cycle_time_ms)
    if args.hierarchical_allreduce:
        env["HOROVOD_HIERARCHICAL_ALLREDUCE"] = "1"
    return env


def pick_framework(requested):
    if requested != "auto":
        return requested
    for framework, module in (("tensorflow", "horovod.tensorflow"), ("pytorch", "horovod.torch")):
        try:
            __import__(module)
            return framework
        except ImportError:
            continue
    sys.exit("gpuops_benchmark: neither horovod.tensorflow nor horovod.torch imports; "
             "install a Horovod wheel built for TensorFlow or PyTorch")


def mean_and_confidence(values):
    """Mean and the half-width of a 95 % interval (1.96 standard deviations), as Horovod prints."""
    mean = sum(values) / len(values)
    variance = sum((value - mean) ** 2 for value in values) / len(values)
    return mean, 1.96 * math.sqrt(variance)


def cpu_threads(args, local_size):
    if args.threads:
        return args.threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, local_size))


def emit(line):
    """One line in one write: ranks that share a pipe (torchrun's children) would otherwise glue one rank's line
    to another's before its newline."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Reporter(object):
    """Prints Horovod's rank-0 lines (when it leads) and one rank's own lines, in the formats log parsers
    expect. The rank's host is this one unless given (a coordinator reports for its workers)."""

    def __init__(self, rank, size, device_kind, host=None, leads=None):
        self.rank = rank
        self.size = size
        self.device = device_kind.upper()
        self.prefix = "Rank %d on %s: " % (rank, (host or socket.gethostname()).split(".")[0])
        self.leads = rank == 0 if leads is None else leads

    def leader(self, text):
        if self.leads:
            emit(text)

    def header(self, model, batch_size, framework, args):
        self.leader("Model: %s" % model)
        self.leader("Batch size: %d" % batch_size)
        self.leader("Number of %ss: %d" % (self.device, self.size))
        if args.distribution != "horovod":
            self.leader("Framework: %s; precision: %s" % (framework, precision_name(args)))
            return
        knobs = ", ".join("%s=%s" % item for item in sorted(os.environ.items())
                          if item[0].startswith("HOROVOD_") and item[0] in KNOB_VARIABLES)
        self.leader("Framework: %s; precision: %s; fp16 allreduce: %s; Horovod knobs: %s"
                    % (framework, precision_name(args), "yes" if args.fp16_allreduce else "no", knobs or "defaults"))

    def rank_iteration(self, number, img_per_sec):
        emit("%sIter #%d: %.1f img/sec per %s" % (self.prefix, number, img_per_sec, self.device))

    def iteration(self, number, img_per_sec):
        self.rank_iteration(number, img_per_sec)
        self.leader("Iter #%d: %.1f img/sec per %s" % (number, img_per_sec, self.device))

    def rank_summary(self, wall, compute=None):
        mean, confidence = mean_and_confidence(wall)
        emit("%sImg/sec per %s: %.1f +-%.1f" % (self.prefix, self.device, mean, confidence))
        if compute:
            compute_mean, compute_confidence = mean_and_confidence(compute)
            emit("%sCompute img/sec per %s: %.1f +-%.1f" % (self.prefix, self.device, compute_mean, compute_confidence))

    def totals(self, per_device):
        """Horovod's closing lines from the per-device figure of each iteration."""
        mean, confidence = mean_and_confidence(per_device)
        self.leader("Img/sec per %s: %.1f +-%.1f" % (self.device, mean, confidence))
        self.leader("Total img/sec on %d %s(s): %.1f +-%.1f"
                    % (self.size, self.device, self.size * mean, self.size * confidence))

    def summary(self, wall, compute):
        self.rank_summary(wall, compute)
        self.totals(wall)


KNOB_VARIABLES = ("HOROVOD_FUSION_THRESHOLD", "HOROVOD_CYCLE_TIME", "HOROVOD_HIERARCHICAL_ALLREDUCE")


def run_timed(reporter, args, batch_size, train_step):
    """Warm up, then time num_iters iterations. train_step() returns the seconds spent computing."""
    reporter.leader("Running warmup...")
    for _warmup_batch in range(args.num_warmup_batches):
        train_step()
    reporter.leader("Running benchmark...")
    wall, compute = [], []
    for number in range(args.num_iters):
        started = timeit.default_timer()
        computing = sum(train_step() for _batch in range(args.num_batches_per_iter))
        elapsed = timeit.default_timer() - started
        images = batch_size * args.num_batches_per_iter
        wall.append(images / elapsed)
        compute.append(images / max(computing, 1e-9))
        reporter.iteration(number, wall[-1])
    reporter.summary(wall, compute)


# --- PyTorch -------------------------------------------------------------------------------------

def torch_model(torch, name, num_classes):
    if name == SMALL_CNN:
        nn = torch.nn
        return nn.Sequential(
            nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, num_classes),
        )
    try:
        from torchvision import models
    except ImportError:
        sys.exit("gpuops_benchmark: model %r needs torchvision; only %s is built in" % (name, SMALL_CNN))
    if not hasattr(models, name):
        sys.exit("gpuops_benchmark: torchvision has no model %r" % name)
    return getattr(models, name)(weights=None, num_classes=num_classes)


def torch_uses_gpu(torch, args):
    use_gpu = args.device == "gpu" or (args.device == "auto" and torch.cuda.is_available())
    if use_gpu and not torch.cuda.is_available():
        sys.exit("gpuops_benchmark: --device gpu but PyTorch sees no CUDA device")
    refuse_cpu_precision(args, use_gpu)
    return use_gpu


class TorchTraining(object):
    """One rank's model, synthetic batch and precision: what the Horovod and DDP steps share."""

    def __init__(self, torch, args, use_gpu, local_rank, local_size):
        self.torch = torch
        self.use_gpu = use_gpu
        if use_gpu:
            if torch.cuda.device_count() <= local_rank:
                sys.exit("gpuops_benchmark: local rank %d needs GPU %d, and PyTorch sees %d GPU(s)"
                         % (local_rank, local_rank, torch.cuda.device_count()))
            torch.cuda.set_device(local_rank)
            self.device = torch.device("cuda", local_rank)
        else:
            torch.set_num_threads(cpu_threads(args, local_size))
            self.device = torch.device("cpu")
        self.model_name, self.batch_size, image_size = resolve_sizes(args, use_gpu)
        self.model = torch_model(torch, self.model_name, args.num_classes).to(self.device)
        self.images = torch.randn(self.batch_size, 3, image_size, image_size, device=self.device)
        if args.channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
            self.images = self.images.contiguous(memory_format=torch.channels_last)
        self.labels = torch.randint(0, args.num_classes, (self.batch_size,), device=self.device)
        self.dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.mixed_precision)
        # bf16 keeps float32's exponent range: only fp16 gradients need scaling to stay above zero.
        self.scaler = torch_grad_scaler(torch, self.device.type) if args.mixed_precision == "fp16" else None

    def loss(self, model):
        with self.torch.autocast(device_type=self.device.type, dtype=self.dtype, enabled=self.dtype is not None):
            return self.torch.nn.functional.cross_entropy(model(self.images), self.labels)

    def backward(self, loss):
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def synchronize(self):
        if self.use_gpu:
            self.torch.cuda.synchronize()

    def finish_computing(self):
        """Waits for this rank's own kernels only: the all-reduces run on the communication stream."""
        if self.use_gpu:
            self.torch.cuda.current_stream().synchronize()


def torch_grad_scaler(torch, device_type):
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler(device_type)
    return torch.cuda.amp.GradScaler()


def run_pytorch(args):
    import torch
    import horovod.torch as hvd

    use_gpu = torch_uses_gpu(torch, args)
    hvd.init()
    training = TorchTraining(torch, args, use_gpu, hvd.local_rank(), hvd.local_size())
    model, scaler = training.model, training.scaler
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * hvd.size())
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         compression=compression)
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    def train_step():
        optimizer.zero_grad()
        started = timeit.default_timer()
        training.backward(training.loss(model))
        training.synchronize()
        # Backward hooks have queued the allreduces; step() waits for the other ranks.
        computing = timeit.default_timer() - started
        if scaler:
            optimizer.synchronize()
            scaler.unscale_(optimizer)
            with optimizer.skip_synchronize():
                scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        training.synchronize()
        return computing

    reporter = Reporter(hvd.rank(), hvd.size(), "gpu" if use_gpu else "cpu")
    reporter.header(training.model_name, training.batch_size, "PyTorch %s" % torch.__version__, args)
    run_timed(reporter, args, training.batch_size, train_step)


# --- PyTorch's own distribution (DDP) ------------------------------------------------------------

def ddp_ranks(environ=None):
    """(launcher, rank, world size, local rank, local world size) from the variables torchrun or mpirun set,
    refused before any work when neither did or the rendezvous address is missing."""
    environ = os.environ if environ is None else environ
    for launcher, rank_name, size_name, local_name, local_size_name in RANK_ENVIRONMENTS:
        if rank_name not in environ:
            continue
        try:
            rank, size, local_rank = (int(environ[name]) for name in (rank_name, size_name, local_name))
            local_size = int(environ.get(local_size_name, 1))
        except (KeyError, ValueError) as error:
            sys.exit("gpuops_benchmark: --distribution ddp under %s needs whole numbers in %s, %s and %s: %s"
                     % (launcher, rank_name, size_name, local_name, error))
        if not 0 <= rank < size or not 0 <= local_rank < max(local_size, 1):
            sys.exit("gpuops_benchmark: --distribution ddp under %s: rank %d of world size %d (local rank %d of %d) "
                     "is not a rank of the run" % (launcher, rank, size, local_rank, local_size))
        missing = [name for name in ("MASTER_ADDR", "MASTER_PORT") if not environ.get(name)]
        if missing:
            sys.exit("gpuops_benchmark: --distribution ddp under %s needs MASTER_ADDR (the first rank's host) and "
                     "MASTER_PORT (a free port there), and %s not set: torchrun sets them; give them to mpirun with "
                     "-x MASTER_ADDR=host -x MASTER_PORT=29500" % (launcher, " and ".join(missing) + (" is" if len(missing) == 1 else " are")))
        return launcher, rank, size, local_rank, local_size
    sys.exit("gpuops_benchmark: --distribution ddp needs the rank variables of torchrun (RANK, WORLD_SIZE, LOCAL_RANK) "
             "or of mpirun (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK), and neither is "
             "set: start it with torchrun, or with mpirun -x MASTER_ADDR -x MASTER_PORT")


def last_bucket_clock(synchronize, allreduce):
    """A DDP communication hook that all-reduces as DDP's default does, and notes when this rank's last gradient
    bucket was ready: its own forward and backward passes, without the wait for other ranks that backward() ends
    with under DDP."""
    def hook(times, bucket):
        if bucket.is_last():
            synchronize()
            times["ready"] = timeit.default_timer()
        return allreduce(None, bucket)
    return hook


def run_pytorch_ddp(args):
    launcher, rank, size, local_rank, local_size = ddp_ranks()
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    use_gpu = torch_uses_gpu(torch, args)
    training = TorchTraining(torch, args, use_gpu, local_rank, local_size)
    backend = "nccl" if use_gpu else "gloo"
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=size)
    try:
        model = torch.nn.parallel.DistributedDataParallel(training.model, device_ids=[local_rank] if use_gpu else None)
        times = {}
        model.register_comm_hook(times, last_bucket_clock(training.finish_computing, allreduce_hook))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01 * size)

        def train_step():
            optimizer.zero_grad()
            started = timeit.default_timer()
            training.backward(training.loss(model))
            computing = times.pop("ready", timeit.default_timer()) - started
            if training.scaler:
                training.scaler.step(optimizer)
                training.scaler.update()
            else:
                optimizer.step()
            training.synchronize()
            return computing

        reporter = Reporter(rank, size, "gpu" if use_gpu else "cpu")
        reporter.header(training.model_name, training.batch_size, "PyTorch %s, DistributedDataParallel over %s (%s)"
                        % (torch.__version__, backend, launcher), args)
        run_timed(reporter, args, training.batch_size, train_step)
        # Every rank has printed its own lines before any exits: a PyTorchJob succeeds, and its logs are read, as
        # soon as rank 0's pod completes.
        dist.barrier()
    finally:
        dist.destroy_process_group()
    leave_without_native_teardown()


def leave_without_native_teardown():
    """Ends a DDP rank whose run is done without the C++ destructors that run at exit: there PyTorch's native
    teardown sometimes aborts the rank ('terminate called without an active exception', SIGABRT, no Python frame
    left) after its work is done and its lines are printed. Seen in about one run in 20 to 50 of two Gloo ranks on
    a loaded 2-core machine; it failed PyTorchJobs whose training had passed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# --- TensorFlow ----------------------------------------------------------------------------------

def tensorflow_model(tf, name, num_classes, image_size):
    layers = tf.keras.layers
    if name == SMALL_CNN:
        return tf.keras.Sequential([
            layers.Input((image_size, image_size, 3)),
            layers.Conv2D(32, 3, strides=2, padding="same"), layers.BatchNormalization(), layers.ReLU(),
            layers.Conv2D(64, 3, strides=2, padding="same"), layers.BatchNormalization(), layers.ReLU(),
            layers.Conv2D(128, 3, strides=2, padding="same"), layers.BatchNormalization(), layers.ReLU(),
            layers.GlobalAveragePooling2D(), layers.Dense(num_classes, dtype="float32"),
        ])
    applications = {"resnet50": "ResNet50", "resnet101": "ResNet101", "resnet152": "ResNet152",
                    "mobilenet_v2": "MobileNetV2", "vgg16": "VGG16", "inception_v3": "InceptionV3"}
    constructor = getattr(tf.keras.applications, applications.get(name, name), None)
    if constructor is None:
        sys.exit("gpuops_benchmark: tf.keras.applications has no model %r" % name)
    return constructor(weights=None, classes=num_classes, input_shape=(image_size, image_size, 3))


def tensorflow_device(tf, args, gpu_index, local_processes):
    """Gives this process one GPU (gpu_index), or its share of the CPU threads. Returns whether it uses a GPU."""
    gpus = tf.config.list_physical_devices("GPU")
    use_gpu = args.device == "gpu" or (args.device == "auto" and bool(gpus))
    if use_gpu:
        if len(gpus) <= gpu_index:
            sys.exit("gpuops_benchmark: --device gpu but TensorFlow sees %d GPU(s), and this process needs GPU %d"
                     % (len(gpus), gpu_index))
        tf.config.set_visible_devices(gpus[gpu_index], "GPU")
        tf.config.experimental.set_memory_growth(gpus[gpu_index], True)
    else:
        tf.config.threading.set_intra_op_parallelism_threads(cpu_threads(args, local_processes))
        tf.config.threading.set_inter_op_parallelism_threads(1)
    refuse_cpu_precision(args, use_gpu)
    if args.mixed_precision:
        tf.keras.mixed_precision.set_global_policy("mixed_float16" if args.mixed_precision == "fp16" else "mixed_bfloat16")
    return use_gpu


def run_tensorflow(args):
    import tensorflow as tf
    import horovod.tensorflow as hvd

    hvd.init()
    use_gpu = tensorflow_device(tf, args, hvd.local_rank(), hvd.local_size())
    model_name, batch_size, image_size = resolve_sizes(args, use_gpu)

    model = tensorflow_model(tf, model_name, args.num_classes, image_size)
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01 * hvd.size())
    loss_function = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    images = tf.random.uniform((batch_size, image_size, image_size, 3))
    labels = tf.random.uniform((batch_size,), maxval=args.num_classes, dtype=tf.int64)

    # Two compiled functions, so that the local forward and backward passes can be timed apart
    # from the allreduce that waits for the other ranks.
    @tf.function
    def compute_gradients():
        with tf.GradientTape() as tape:
            loss = loss_function(labels, model(images, training=True))
        return tape.gradient(loss, model.trainable_variables)

    @tf.function
    def apply_gradients(gradients):
        reduced = hvd.grouped_allreduce(gradients, op=hvd.Average, compression=compression)
        optimizer.apply_gradients(zip(reduced, model.trainable_variables))

    state = {"first": True}

    def train_step():
        started = timeit.default_timer()
        gradients = compute_gradients()
        # .numpy() waits for the device, so the time is the computation's, not its dispatch.
        gradients[0].numpy()
        computing = timeit.default_timer() - started
        apply_gradients(gradients)
        if state["first"]:
            # Every rank starts from rank 0's weights (after the first step created the optimizer's slots).
            hvd.broadcast_variables(model.variables, root_rank=0)
            hvd.broadcast_variables(optimizer.variables(), root_rank=0)
            state["first"] = False
        model.trainable_variables[0].numpy()
        return computing

    reporter = Reporter(hvd.rank(), hvd.size(), "gpu" if use_gpu else "cpu")
    reporter.header(model_name, batch_size, "TensorFlow %s" % tf.__version__, args)
    run_timed(reporter, args, batch_size, train_step)


# --- TensorFlow's own distribution (TF_CONFIG) ------------------------------------------------------

# Read by an op that runs on the worker executing a step: which worker ran it.
HOSTNAME_FILE = "/proc/sys/kernel/hostname"


def tf_config_cluster(environ=None):
    """(cluster, task type, task index) from TF_CONFIG, as a TFJob's pods get it from the Training Operator."""
    raw = (os.environ if environ is None else environ).get("TF_CONFIG")
    if not raw:
        sys.exit("gpuops_benchmark: --distribution tf_config needs TF_CONFIG, which the Training Operator sets "
                 "in a TFJob's pods")
    try:
        config = json.loads(raw)
        cluster, task_type, index = config["cluster"], config["task"]["type"], int(config["task"]["index"])
        tasks = len(cluster.get(task_type) or [])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        sys.exit("gpuops_benchmark: TF_CONFIG must be {\"cluster\": {...}, \"task\": {\"type\", \"index\"}}: %s: %r"
                 % (error, raw[:200]))
    if not cluster.get("worker"):
        sys.exit("gpuops_benchmark: TF_CONFIG's cluster has no worker: %r" % raw[:200])
    if not 0 <= index < tasks:
        sys.exit("gpuops_benchmark: TF_CONFIG's task %s %d is not in its cluster (%d %s task(s))"
                 % (task_type, index, tasks, task_type))
    return cluster, task_type, index


def short_host(address):
    """node-a from node-a.ns.svc:2222."""
    return address.rsplit(":", 1)[0].split(".")[0]


def per_example_cross_entropy(tf):
    """The loss per image: under a tf.distribute strategy the step says how to average it."""
    return tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)


def training_ranks(cluster):
    """Synchronous training's ranks, in order: the chief, then the workers."""
    return [("chief", index) for index in range(len(cluster.get("chief") or []))] + [
        ("worker", index) for index in range(len(cluster["worker"]))]


def run_tensorflow_multi_worker(tf, args, cluster, task_type, index):
    """Every chief and worker trains with MultiWorkerMirroredStrategy: an all-reduce of the gradients per step."""
    ranks = training_ranks(cluster)
    if (task_type, index) not in ranks:
        sys.exit("gpuops_benchmark: a %s task has no part in multi-worker training" % task_type)
    rank, size = ranks.index((task_type, index)), len(ranks)
    use_gpu = tensorflow_device(tf, args, 0, 1)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    model_name, batch_size, image_size = resolve_sizes(args, use_gpu)
    with strategy.scope():
        model = tensorflow_model(tf, model_name, args.num_classes, image_size)
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.01 * size)
    per_example_loss = per_example_cross_entropy(tf)
    images = tf.random.uniform((batch_size, image_size, image_size, 3))
    labels = tf.random.uniform((batch_size,), maxval=args.num_classes, dtype=tf.int64)

    @tf.function
    def compute_gradients():
        def replica_step():
            with tf.GradientTape() as tape:
                loss = tf.nn.compute_average_loss(per_example_loss(labels, model(images, training=True)),
                                                  global_batch_size=batch_size * size)
            return tape.gradient(loss, model.trainable_variables)
        return strategy.run(replica_step)

    @tf.function
    def apply_gradients(gradients):
        # In a replica, apply_gradients first sums every worker's gradients: the all-reduce.
        strategy.run(lambda grads: optimizer.apply_gradients(zip(grads, model.trainable_variables)),
                     args=(gradients,))

    def train_step():
        started = timeit.default_timer()
        gradients = compute_gradients()
        strategy.experimental_local_results(gradients[0])[0].numpy()
        computing = timeit.default_timer() - started
        apply_gradients(gradients)
        model.trainable_variables[0].numpy()
        return computing

    reporter = Reporter(rank, size, "gpu" if use_gpu else "cpu")
    reporter.header(model_name, batch_size, "TensorFlow %s, MultiWorkerMirroredStrategy" % tf.__version__, args)
    run_timed(reporter, args, batch_size, train_step)


def run_tensorflow_parameter_servers(tf, args, cluster, task_type, index):
    """ParameterServerStrategy: the chief sends steps to whichever worker is free; the variables live on the
    parameter servers. Workers and parameter servers serve until the job ends; the chief reports."""
    if not cluster.get("chief"):
        sys.exit("gpuops_benchmark: parameter-server training needs a chief to coordinate it (a Chief replica)")
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if task_type in ("worker", "ps"):
        if task_type == "worker":
            tensorflow_device(tf, args, 0, 1)
        server = tf.distribute.Server(resolver.cluster_spec(), job_name=task_type, task_index=index,
                                      protocol=resolver.rpc_layer or "grpc", start=True)
        print("gpuops_benchmark: %s %d serves the chief's steps until the job ends" % (task_type, index), flush=True)
        server.join()
        return
    strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    workers = [short_host(address) for address in cluster["worker"]]
    # The workers compute; the chief cannot see their devices, so only --device says which they use.
    use_gpu = args.device == "gpu"
    model_name, batch_size, image_size = resolve_sizes(args, use_gpu)
    with strategy.scope():
        model = tensorflow_model(tf, model_name, args.num_classes, image_size)
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
    per_example_loss = per_example_cross_entropy(tf)

    def dataset_fn(_context):
        images = tf.random.uniform((batch_size, image_size, image_size, 3))
        labels = tf.random.uniform((batch_size,), maxval=args.num_classes, dtype=tf.int64)
        return tf.data.Dataset.from_tensors((images, labels)).repeat()

    @tf.function
    def per_worker_dataset():
        return strategy.distribute_datasets_from_function(dataset_fn)

    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset))

    @tf.function
    def step(batches):
        def replica_step(batch):
            images, labels = batch
            with tf.GradientTape() as tape:
                # Each step is one worker's alone: the mean over its own batch.
                loss = tf.reduce_mean(per_example_loss(labels, model(images, training=True)))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return tf.io.read_file(HOSTNAME_FILE)
        return strategy.run(replica_step, args=(next(batches),))

    def steps_by_worker(count):
        scheduled = [coordinator.schedule(step, args=(iterator,)) for _step in range(count)]
        coordinator.join()
        ran = [short_host(value.fetch().decode().strip()) for value in scheduled]
        return dict((rank, ran.count(host)) for rank, host in enumerate(workers))

    device = "gpu" if use_gpu else "cpu"
    leader = Reporter(0, len(workers), device, leads=True)
    reporters = [Reporter(rank, len(workers), device, host=host, leads=False) for rank, host in enumerate(workers)]
    leader.header(model_name, batch_size, "TensorFlow %s, ParameterServerStrategy with %d parameter server(s)"
                  % (tf.__version__, len(cluster.get("ps") or [])), args)
    leader.leader("Running warmup...")
    steps_by_worker(args.num_warmup_batches * len(workers))
    leader.leader("Running benchmark...")
    per_rank, per_device = [[] for _rank in workers], []
    for number in range(args.num_iters):
        started = timeit.default_timer()
        counts = steps_by_worker(args.num_batches_per_iter * len(workers))
        elapsed = timeit.default_timer() - started
        for rank, reporter in enumerate(reporters):
            per_rank[rank].append(counts[rank] * batch_size / elapsed)
            reporter.rank_iteration(number, per_rank[rank][-1])
        per_device.append(sum(counts.values()) * batch_size / elapsed / len(workers))
        leader.leader("Iter #%d: %.1f img/sec per %s" % (number, per_device[-1], leader.device))
    for rank, reporter in enumerate(reporters):
        reporter.rank_summary(per_rank[rank])
    leader.totals(per_device)


def run_tensorflow_tf_config(args):
    import tensorflow as tf

    cluster, task_type, index = tf_config_cluster()
    if cluster.get("ps"):
        run_tensorflow_parameter_servers(tf, args, cluster, task_type, index)
    else:
        run_tensorflow_multi_worker(tf, args, cluster, task_type, index)


def resolve_sizes(args, use_gpu):
    model_name = args.model or (GPU_DEFAULT_MODEL if use_gpu else CPU_DEFAULT_MODEL)
    batch_size = args.batch_size or (32 if use_gpu else 16)
    image_size = args.image_size or (64 if model_name == SMALL_CNN else 224)
    return model_name, batch_size, image_size


def main(argv=None):
    args = parse_args(argv)
    if args.distribution == "tf_config":
        run_tensorflow_tf_config(args)
        return
    if args.distribution == "ddp":
        run_pytorch_ddp(args)
        return
    os.environ.update(horovod_environment(args))
    framework = pick_framework(args.framework)
    if framework == "tensorflow":
        run_tensorflow(args)
    else:
        run_pytorch(args)


if __name__ == "__main__":
    main()
