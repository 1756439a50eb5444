#!/usr/bin/env bash
# Builds the lab node image (Debian 12, sshd, python3) without a registry: debootstrap into a
# folder, tar it into the cache, import the tarball into podman. Each step is skipped when its
# result is already there, so a warm run takes a second and a fresh machine rebuilds from scratch.
set -euo pipefail

# shellcheck source=tools/build_prologue.sh
source "$(dirname "${BASH_SOURCE[0]}")/build_prologue.sh"
mirror=${GPUOPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The packages a lab node needs for the node roles to converge on it for real: sshd and python3
# for Ansible, iproute2/ifupdown/kmod/procps for the network and hugepages checks, and containerd,
# runc, the CNI plugins, iptables and conntrack that make it a real Kubernetes node (the kubelet and
# kube-proxy come from the kube build). bind9-dnsutils gives nslookup, which the Training Operator's PyTorchJob
# init container runs (the lab names its images as that container's image: Docker Hub's alpine is out of reach).
node_packages=python3,openssh-server,iproute2,ifupdown,kmod,procps,sudo,ca-certificates,gnupg,containerd,runc,containernetworking-plugins,iptables,conntrack,bind9-dnsutils
# munge, slurmctld, slurmd and the Slurm client (Slurm 22.05) for the lab's Slurm cluster (lab/roles/lab_slurm),
# installed with apt after debootstrap: munge's set-up needs the base system configured first.
slurm_packages="munge slurmctld slurmd slurm-client"
image_key=$(printf '%s\n' "bookworm" "$node_packages" "$slurm_packages" "package lists kept" | sha256sum | cut -c1-12)
image_name=${GPUOPS_NODE_IMAGE:-localhost/gpuops-node:debian12-$image_key}
tarball=$GPUOPS_CACHE/images/gpuops-node-debian12-$image_key.tar

log() { printf '[node-image] %s\n' "$*"; }

# --name: print the image name this script builds, and nothing else.
if [ "${1:-}" = --name ]; then
    echo "$image_name"
    exit 0
fi

reuse_cached node-image "$image_name" "present: $image_name" podman image exists "$image_name"

if [ ! -s "$tarball" ]; then
    started=$(date +%s)
    rootfs=$(mktemp -d "$GPUOPS_CACHE/images/rootfs.XXXXXX" 2>/dev/null || { mkdir -p "$GPUOPS_CACHE/images"; mktemp -d "$GPUOPS_CACHE/images/rootfs.XXXXXX"; })
    trap 'rm -rf "$rootfs"' EXIT
    # The folder becomes the image's /: mktemp's 0700 would keep every user but root out of it (munge's set-up
    # runs as munge).
    chmod 0755 "$rootfs"
    log "debootstrap bookworm into $rootfs (about a minute)"
    debootstrap --variant=minbase --include="$node_packages" bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
        tail -20 "$rootfs.log" >&2
        echo "build_node_image: debootstrap failed; see $rootfs.log" >&2
        exit 1
    }
    # No daemon starts inside the build (policy-rc.d refuses them all).
    printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
    chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
    # shellcheck disable=SC2086
    chroot "$rootfs" /bin/sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $slurm_packages" \
        >>"$rootfs.log" 2>&1 || {
        tail -20 "$rootfs.log" >&2
        echo "build_node_image: installing $slurm_packages failed; see $rootfs.log" >&2
        exit 1
    }
    rm -f "$rootfs/usr/sbin/policy-rc.d" "$rootfs.log"
    # sshd refuses to start without its privilege-separation dir; host keys are made per node at start.
    mkdir -p "$rootfs/run/sshd"
    rm -f "$rootfs"/etc/ssh/ssh_host_*
    # Each lab makes its own munge key (lab/roles/lab_slurm): none is shared through the image.
    rm -f "$rootfs"/etc/munge/munge.key
    # The package lists stay, as on an installed server: an apt-get update on a node of this image (the molecule
    # scenarios') fetches only what changed instead of all of Debian's lists. Images built FROM it may drop them.
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb
    tar -C "$rootfs" -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    log "rootfs archived in $(( $(date +%s) - started )) s: $tarball"
fi

log "importing $tarball as $image_name"
podman import --quiet \
    --change 'CMD ["/bin/sh", "-c", "ssh-keygen -A && exec /usr/sbin/sshd -D -e"]' \
    "$tarball" "$image_name" >/dev/null
echo "$image_name"
