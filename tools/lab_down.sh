#!/usr/bin/env bash
# Removes everything the lab created (make lab-down), then checks that nothing of it is left:
#   - the control plane: the MPI Operator process, the kwokctl cluster (etcd, kube-apiserver,
#     kube-controller-manager, kube-scheduler, kwok) and its run directory with the kubeconfig and keys;
#   - the podman containers of the lab nodes and the lab network;
#   - the lab's SSH key pair, training logs, reports, charts and recordings, and the stage logs.
# The cached builds stay under ~/.cache/gpuops (GPUOPS_CACHE): node and workload images, Horovod wheels,
# Kubernetes binaries, Go modules. The next make lab reuses them; delete that folder to rebuild from scratch.
# Exits non-zero, naming what is left, when anything of the lab survives.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
cache_root=${GPUOPS_CACHE:-$HOME/.cache/gpuops}
lab_dir=$cache_root/lab
run_dir=$lab_dir/control-plane
network=gpuops-lab
container_prefix=gpuops-lab-

say() { printf '[lab-down] %s\n' "$*"; }

bash tools/bootstrap.sh >/dev/null
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_CONFIG=$repo_root/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0
unset KUBECONFIG K8S_AUTH_KUBECONFIG K8S_AUTH_CONTEXT

# Wait for a make lab that is still running, then hold the lock while removing.
if [ -d "$lab_dir" ]; then
    exec 9>"$lab_dir/.lock"
    flock 9
fi

# The lab's processes are those whose command line names its run directory (the integration tests'
# control planes live in run directories of their own and are left alone).
lab_pids() { pgrep -f -- "$run_dir/" || true; }
# Ports the lab's processes listen on, noted before they stop, checked after.
lab_ports=()
for pid in $(lab_pids); do
    while read -r address; do
        lab_ports+=("${address##*:}")
    done < <(ss -Hltnp 2>/dev/null | grep -F "pid=$pid," | awk '{print $4}')
done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
down() {
    say "$1"
    shift
    if ! "$@" >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        say "FAILED: $*"
        exit 1
    fi
}
down "stopping cluster DNS, removing the routes to the pods and putting back the kernel settings" \
    ansible-playbook -i inventories/lab playbooks/lab_kube_nodes.yml -e lab_state=absent
down "stopping the control plane (MPI Operator, kwokctl cluster) and removing its run directory" \
    ansible-playbook -i inventories/lab playbooks/lab.yml -e lab_state=absent
down "removing the lab nodes, the lab network and the SSH key pair" \
    ansible-playbook -i inventories/lab playbooks/lab_nodes.yml -e lab_state=absent
say "removing training logs, reports, charts, recordings, stage logs, the munge key and the API discovery cache"
rm -rf "$lab_dir/training" "$lab_dir/logs" "$lab_dir/tmp" "$lab_dir/slurm" "$lab_dir/.lock"
# Other runs' folders (the integration tests') may share the parent: it goes only when empty.
rmdir "$lab_dir" 2>/dev/null || true

left=()
for container in $(podman ps -a --format '{{.Names}}'); do
    case "$container" in "$container_prefix"*) left+=("podman container $container") ;; esac
done
podman network exists "$network" && left+=("podman network $network")
ip -oneline address show dev lo label lo:gpuops-dns | grep -q . && left+=("cluster DNS address on lo (label lo:gpuops-dns)")
while read -r route; do left+=("route $route"); done < <(ip route show | grep '^10\.244\.' || true)
for pid in $(lab_pids); do
    left+=("process $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-120)")
done
for port in "${lab_ports[@]}"; do
    if ss -Hltn "sport = :$port" | grep -q .; then left+=("listening port $port"); fi
done
for path in "$run_dir" "$lab_dir/ssh" "$lab_dir/training" "$lab_dir/logs" "$lab_dir/tmp" "$lab_dir/slurm"; do
    [ -e "$path" ] && left+=("file $path")
done

if [ "${#left[@]}" -gt 0 ]; then
    say "left behind:"
    printf '  %s\n' "${left[@]}" >&2
    exit 1
fi
say "nothing of the lab is left (checked: containers ${container_prefix}*, network $network, processes under $run_dir, ${#lab_ports[@]} port(s), lab files)"
say "cached builds kept under $cache_root (images, wheels, Kubernetes binaries)"
