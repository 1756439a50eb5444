#!/usr/bin/env bash
# The main job on the local lab (make lab): creates what the lab lacks, runs playbooks/site.yml against
# it, verifies training through both launchers, and ends with a summary a person can read.
#
#   1 builds         the Kubernetes binaries, the lab node image, the pod sandbox image, the MPI and Training
#                    Operator images, the device plugin image and the workload image (Horovod, OpenMPI),
#                    each built when missing
#   2 lab nodes      podman containers node1 and node2 of the workload image (playbooks/lab_nodes.yml)
#   3 control plane  etcd, kube-*, MPIJob CRD, MPI Operator (playbooks/lab.yml)
#   4 kube nodes     containerd and a kubelet in node1 and node2, pod network, CoreDNS, the images imported
#                    into containerd, nvidia.com/gpu advertised (playbooks/lab_kube_nodes.yml)
#   5 baseline       one rank alone on node1 over SSH (the scaling efficiency's baseline), measured once per
#                    workload image and inputs and kept across labs in ~/.cache/gpuops/lab-baseline/
#   6 site.yml       prepare nodes, GPU stack, MPI Operator, verify with an MPIJob whose pods run on the nodes
#   7 SSH verify     site.yml's verify stage (verify_training.yml, training_summary.yml) with the SSH launcher
#                    (horovodrun --gloo), a new run each time
#
# Every ansible-playbook's full output goes to ~/.cache/gpuops/lab/logs/<stage>.log; the terminal shows
# each play as it starts and, every 30 s, the task still running. A second run builds and creates
# nothing, and site.yml reports changed=0 on every host. Stages 2 to 4 run again only when their inputs changed
# (the lab's and the collection's files, the images) or what they made is not running or not Ready; stage 7 trains again only when
# its inputs or the nodes changed, and otherwise shows the verdict measured then. GPUOPS_LAB_CONVERGE=1
# runs both anyway. tools/lab_down.sh removes the lab. GPUOPS_CACHE moves the cache (default ~/.cache/gpuops).
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"
cache_root=${GPUOPS_CACHE:-$HOME/.cache/gpuops}
lab_dir=$cache_root/lab
training_dir=$lab_dir/training
log_dir=$lab_dir/logs
started=$SECONDS

say() { printf '[lab %s] %s\n' "$(elapsed $((SECONDS - started)))" "$*"; }
die() { printf '[lab] FAILED: %s\n' "$*" >&2; exit 1; }
elapsed() { if [ "$1" -ge 60 ]; then printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); else printf '%ds' "$1"; fi; }

# run_logged NAME COMMAND...: runs COMMAND with its output in $log_dir/NAME.log, showing the plays as
# they start, the failure lines, and every 30 s the task running then. Returns COMMAND's status.
run_logged() {
    local name=$1 log=$log_dir/$1.log
    shift
    : >"$log"
    set +e
    { "$@" 2>&1; echo "__exit_status=$?"; } | (
        status=1 task="" task_since=$SECONDS last_beat=$SECONDS
        while :; do
            if IFS= read -r -t 5 line; then
                case "$line" in
                    __exit_status=*) status=${line#__exit_status=}; continue ;;
                esac
                printf '%s\n' "$line" >>"$log"
                case "$line" in
                    "PLAY ["*) line=${line#PLAY [}; say "  play: ${line%%]*}"; last_beat=$SECONDS ;;
                    "TASK ["*) task=${line#TASK [}; task=${task%%]*}; task_since=$SECONDS ;;
                    fatal:*|"failed: "*|ERROR!*|"[ERROR]"*|"[node-image]"*|"[workload-image]"*|"[horovod]"*|"[kube-binaries]"*)
                        say "  $line" ;;
                esac
            elif [ $? -le 128 ]; then
                break
            fi
            if [ -n "$task" ] && [ $((SECONDS - last_beat)) -ge 30 ]; then
                say "  ... $task ($(elapsed $((SECONDS - task_since))) so far)"
                last_beat=$SECONDS
            fi
        done
        exit "$status"
    )
    status=$?
    set -e
    return "$status"
}

# stage N TITLE NAME COMMAND...: one numbered stage, timed; on failure the log's tail and its path.
stage() {
    local number=$1 title=$2 name=$3 stage_started=$SECONDS
    shift 3
    say "stage $number/7: $title"
    if ! run_logged "$name" "$@"; then
        printf '%s\n' "----- last lines of $log_dir/$name.log -----" >&2
        tail -n 40 "$log_dir/$name.log" >&2
        die "stage $number ($title) failed after $(elapsed $((SECONDS - stage_started))); full log: $log_dir/$name.log"
    fi
    say "stage $number/7: $title done in $(elapsed $((SECONDS - stage_started)))"
}

# The PLAY RECAP of a stage's log, one "host changed=N" pair per host.
recap_changes() {
    sed -n '/^PLAY RECAP/,$p' "$log_dir/$1.log" | sed -n 's/^\([^ ]*\) *: .*changed=\([0-9]*\).*/\1 changed=\2/p'
}

# A key of what a stage converges or measures from: the files of the lab and of the collection, the pins,
# the inventory (hashed once per run: nothing here changes them), and the words given (image names, container IDs).
tree_hash=""
inputs_key() {
    if [ -z "$tree_hash" ]; then
        tree_hash=$(find lab playbooks roles plugins inventories/lab tools versions.yml -name __pycache__ -prune -o -type f -print0 \
            | sort -z | xargs -0 sha256sum | sha256sum)
    fi
    printf '%s\n' "$@" "$tree_hash" | sha256sum | cut -c1-32
}

# unchanged_since STAMP KEY: whether STAMP holds KEY, that is a stage that passed with the same inputs.
unchanged_since() {
    [ "${GPUOPS_LAB_CONVERGE:-0}" != 1 ] && [ -s "$1" ] && [ "$(cat "$1")" = "$2" ]
}

# Whether both lab node containers run, from this workload image.
lab_nodes_running() {
    local running
    running=$(podman ps --filter name=gpuops-lab-node --filter status=running --format '{{.Names}} {{.Image}}' | sort)
    [ "$running" = "$(printf 'gpuops-lab-node1 %s\ngpuops-lab-node2 %s' "$workload_image" "$workload_image")" ]
}

# Whether the control plane's API server answers ready.
control_plane_ready() {
    "$(bash tools/build_kube_binaries.sh --print-dir)/kubectl" --kubeconfig "$lab_dir/control-plane/kubeconfig" \
        --request-timeout=5s get --raw=/readyz >/dev/null 2>&1
}

# Whether both lab nodes are Kubernetes nodes that are Ready and report the hugepages pool as it is now (a kubelet
# reads it only when it starts, and stage 4 restarts a kubelet whose figure is stale), and the cluster DNS runs.
kube_nodes_ready() {
    local kubectl ready pages hugepages dns_pid
    kubectl=$(bash tools/build_kube_binaries.sh --print-dir)/kubectl
    ready=$("$kubectl" --kubeconfig "$lab_dir/control-plane/kubeconfig" --request-timeout=10s get nodes node1 node2 \
        -o 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {.status.capacity.hugepages-2Mi} {end}' \
        2>/dev/null) || return 1
    pages=$(cat /proc/sys/vm/nr_hugepages)
    if [ "$pages" -eq 0 ]; then hugepages=0; else hugepages="$((pages * 2))Mi"; fi
    # The pid file holds the process's pid and program.
    read -r dns_pid _ <"$lab_dir/control-plane/coredns.pid" 2>/dev/null || return 1
    [ "$ready" = "True $hugepages True $hugepages " ] && kill -0 "$dns_pid" 2>/dev/null
}

bash tools/bootstrap.sh >/dev/null
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_CONFIG=$repo_root/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 PYTHONUNBUFFERED=1
# The lab names its kubeconfig itself: a kubeconfig of the caller's must not redirect any step.
unset KUBECONFIG K8S_AUTH_KUBECONFIG K8S_AUTH_CONTEXT
playbook=(ansible-playbook -i inventories/lab)

mkdir -p "$log_dir" "$training_dir" "$lab_dir/tmp"
chmod 0700 "$lab_dir"
# The kubernetes client caches API discovery in TMPDIR under the server's address. kwokctl picks free
# ports, so another cluster may have left a cache for this lab's address (one serving OpenShift's APIs,
# say): the lab keeps a cache of its own, removed with it.
export TMPDIR=$lab_dir/tmp
# One lab command at a time: a second make lab (or lab-down) waits for this one.
exec 9>"$lab_dir/.lock"
if ! flock -n 9; then
    say "another lab command holds $lab_dir/.lock; waiting for it"
    flock 9
fi

stage 1 "builds (Kubernetes binaries, container toolkit, node, pod sandbox, MPI and Training Operator, device plugin, workload images)" images bash tools/build_lab_images.sh
workload_image=$(tail -n 1 "$log_dir/images.log")
podman image exists "$workload_image" || die "the workload image build did not name an image (got '$workload_image')"
say "  workload image: $workload_image"

# Stages 2 and 3 are skipped, as stage 4 is, when their inputs are those of their last passing run and what they
# make still runs.
lab_nodes_key=$(inputs_key "$workload_image")
if unchanged_since "$log_dir/lab_nodes.inputs" "$lab_nodes_key" && lab_nodes_running; then
    say "stage 2/7: lab nodes unchanged (same inputs as when last made, node1 and node2 running the workload image)"
else
    rm -f "$log_dir/lab_nodes.inputs"
    stage 2 "lab nodes (podman containers, SSH)" lab_nodes \
        "${playbook[@]}" playbooks/lab_nodes.yml -e "lab_nodes_image=$workload_image"
    printf '%s\n' "$lab_nodes_key" >"$log_dir/lab_nodes.inputs"
fi

control_plane_key=$(inputs_key control-plane)
if unchanged_since "$log_dir/control_plane.inputs" "$control_plane_key" && control_plane_ready; then
    say "stage 3/7: control plane unchanged (same inputs as when last made, the API server ready)"
else
    rm -f "$log_dir/control_plane.inputs"
    stage 3 "control plane (etcd, kube-apiserver, controller manager, scheduler, MPI Operator)" control_plane \
        "${playbook[@]}" playbooks/lab.yml
    printf '%s\n' "$control_plane_key" >"$log_dir/control_plane.inputs"
fi

mpi_operator_image=$(bash tools/build_mpi_operator_image.sh --name)
training_operator_image=$(bash tools/build_training_operator_image.sh --name)
device_plugin_image=$(bash tools/build_nvidia_device_plugin_image.sh --name)
kube_nodes_key=$(inputs_key "$workload_image" "$mpi_operator_image" "$training_operator_image" "$device_plugin_image")
if unchanged_since "$log_dir/kube_nodes.inputs" "$kube_nodes_key" && kube_nodes_ready; then
    say "stage 4/7: kube nodes unchanged (same inputs as when last converged, node1 and node2 Ready with the current hugepages pool, DNS running)"
else
    rm -f "$log_dir/kube_nodes.inputs"
    stage 4 "kube nodes (containerd and a kubelet in each node, pod network, CoreDNS, images)" kube_nodes \
        "${playbook[@]}" playbooks/lab_kube_nodes.yml \
        -e "{\"lab_kube_node_images\": [\"$workload_image\", \"$mpi_operator_image\", \"$training_operator_image\", \"$device_plugin_image\"]}"
    printf '%s\n' "$kube_nodes_key" >"$log_dir/kube_nodes.inputs"
fi

# One rank alone is a figure of the workload image, the benchmark's arguments and this machine, not of one lab: a
# new lab takes the one measured with the same inputs (the lab's files and the image) by an earlier lab.
baseline_cache=$cache_root/lab-baseline/$(inputs_key "$workload_image")
if [ -s "$training_dir/lab-baseline.json" ]; then
    say "stage 5/7: baseline present (one rank alone on node1, measured when this lab was made)"
elif [ "${GPUOPS_LAB_CONVERGE:-0}" != 1 ] && [ -s "$baseline_cache/lab-baseline.json" ]; then
    cp -p "$baseline_cache"/lab-baseline.* "$training_dir/"
    say "stage 5/7: baseline reused (one rank alone on node1, measured $(date -r "$baseline_cache/lab-baseline.json" '+%Y-%m-%d %H:%M') by a lab of the same inputs; GPUOPS_LAB_CONVERGE=1 measures again)"
else
    stage 5 "baseline (one rank alone on node1 over SSH)" baseline \
        "${playbook[@]}" playbooks/verify_training.yml -e '{"gpuops_launcher": "ssh", "gpuops_training_hosts": "node1",
            "ssh_launcher_slots_per_host": 1, "ssh_launcher_run_name": "lab-baseline", "gpuops_training_expect_ranks": 1,
            "gpuops_training_baseline_report": null}'
    rm -rf "$cache_root/lab-baseline"
    mkdir -p "$baseline_cache"
    cp -p "$training_dir"/lab-baseline.* "$baseline_cache/"
fi

stage 6 "site.yml (nodes, gpu_stack, mpi_operator, training_operator, verify with an MPIJob in real pods)" site \
    "${playbook[@]}" playbooks/site.yml
site_recap=$(recap_changes site)

# site.yml's verify stage again, through the SSH launcher: measured again when anything it runs from changed
# (the nodes themselves included: new containers are new nodes). Its two playbooks are named rather than
# site.yml --tags verify, whose node plays would still gather facts on both nodes (about 17 s for nothing).
ssh_key=$(inputs_key "$workload_image" "$(podman ps -q --no-trunc --filter name=gpuops-lab-node | sort)")
if unchanged_since "$training_dir/training-gloo.inputs" "$ssh_key" \
        && grep -q '"passed": true' "$training_dir/training-gloo.json" 2>/dev/null; then
    say "stage 7/7: SSH verdict unchanged (same inputs and nodes as its run of $(date -r "$training_dir/training-gloo.json" '+%H:%M'); GPUOPS_LAB_CONVERGE=1 trains again)"
else
    rm -f "$training_dir/training-gloo.inputs"
    stage 7 "verify over SSH (site.yml's verify stage, horovodrun --gloo across node1 and node2)" verify_ssh \
        "${playbook[@]}" playbooks/verify_training.yml playbooks/training_summary.yml \
        -e gpuops_launcher=ssh -e ssh_launcher_controller=gloo
    printf '%s\n' "$ssh_key" >"$training_dir/training-gloo.inputs"
fi

site_changed=0
for count in $(printf '%s\n' "$site_recap" | sed -n 's/.*changed=//p'); do site_changed=$((site_changed + count)); done
# Each launcher's verdict as its training_verdict role wrote it: the report's own summary lines.
python3 - "$training_dir" "$site_changed" "$site_recap" "$(elapsed $((SECONDS - started)))" <<'PY'
import json
import os
import sys

training_dir, site_changed, site_recap, took = sys.argv[1:5]
verdicts, lines = [], []
for stem in ("mpijob-launcher", "training-gloo"):
    path = os.path.join(training_dir, stem + ".json")
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, ValueError) as error:
        report = {"passed": False, "summary": ["verdict:     FAILED (no report: %s)" % error]}
    verdicts.append(report.get("passed") is True)
    lines += [""] + report["summary"]
passed = all(verdicts)
print()
print("==== gpuops lab: %s in %s ====" % ("PASSED" if passed else "FAILED", took))
print("site.yml:      %s (%s)" % ("changed=0 on every host" if site_changed == "0" else "changed=%s" % site_changed,
                                  ", ".join(site_recap.splitlines())))
print("\n".join(lines))
print("\nThe lab has no GPU: every figure is CPU throughput of containers sharing this machine's cores.")
sys.exit(0 if passed else 1)
PY
