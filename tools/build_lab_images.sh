#!/usr/bin/env bash
# Every build make lab runs on (its stage 1), in the order the lab needs them, each a no-op when its cache holds
# it: the Kubernetes binaries, the container toolkit, the lab node image, the pod sandbox image, the MPI and
# Training Operator images, the device plugin image and the workload image (Horovod, OpenMPI). The last line
# printed is the workload image's name. tools/test.sh runs it beside the tiers that build nothing.
set -euo pipefail

tools_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$tools_dir/build_kube_binaries.sh"
bash "$tools_dir/build_nvidia_container_toolkit.sh"
bash "$tools_dir/build_node_image.sh"
bash "$tools_dir/build_pause_image.sh"
bash "$tools_dir/build_mpi_operator_image.sh"
bash "$tools_dir/build_training_operator_image.sh"
bash "$tools_dir/build_nvidia_device_plugin_image.sh"
bash "$tools_dir/build_workload_image.sh"
