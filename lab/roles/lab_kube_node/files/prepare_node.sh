#!/bin/sh
# Readies a lab node for containerd and the kubelet; prints "changed" when it changed anything.
#   prepare_node.sh CGROUP_ROOT      CGROUP_ROOT: the kubelet's cgroupRoot, e.g. /gpuops-lab-node1
set -eu
cgroup_root=${1#/}
changed=false

# Volumes the kubelet mounts must reach the mount namespaces containerd makes for pods.
if [ "$(findmnt -no PROPAGATION /)" != shared ]; then
    mount --make-rshared /
    changed=true
fi
# Pods on this node reach the other nodes' pods through it.
if [ "$(cat /proc/sys/net/ipv4/ip_forward)" != 1 ]; then
    echo 1 > /proc/sys/net/ipv4/ip_forward
    changed=true
fi
# The nodes share this machine's cgroup v1 hierarchies: each kubelet gets a folder of its own in each.
for hierarchy in /sys/fs/cgroup/*/; do
    [ -f "${hierarchy}cgroup.procs" ] || continue
    folder=$hierarchy$cgroup_root
    if [ ! -d "$folder" ]; then
        mkdir "$folder"
        changed=true
    fi
    # A new cpuset starts without CPUs or memory nodes and takes no task until given its parent's.
    if [ -f "$folder/cpuset.cpus" ] && [ -z "$(cat "$folder/cpuset.cpus")" ]; then
        cat "${hierarchy}cpuset.cpus" > "$folder/cpuset.cpus"
        cat "${hierarchy}cpuset.mems" > "$folder/cpuset.mems"
        changed=true
    fi
done
if [ "$changed" = true ]; then
    echo changed
fi
