#!/usr/bin/env bash
# Installs what the lab and the tests need on a Debian 12 machine, idempotently:
#   - Debian packages (podman with runc, debootstrap, OpenSSH client, shellcheck; gcc for the container toolkit's
#     cgo build, dpkg-dev and gnupg for the lab's signed toolkit repository),
#   - podman settings for this kind of host (runc, explicit ulimits),
#   - a Python virtualenv with the pinned requirements, cached by the hash of requirements.txt and the
#     requirements-controller.txt it includes, and linked at .venv in the checkout.
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache_root=${GPUOPS_CACHE:-$HOME/.cache/gpuops}

log() { printf '[bootstrap] %s\n' "$*"; }

debian_packages=(podman runc netavark aardvark-dns iptables debootstrap openssh-client rsync shellcheck python3-venv git make
                 gcc libc6-dev dpkg-dev gnupg)

install_debian_packages() {
    local missing=()
    local package
    for package in "${debian_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "Debian packages present"
        return
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "bootstrap: missing Debian packages (${missing[*]}); run as root or install them first" >&2
        exit 1
    fi
    log "installing Debian packages: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# crun cannot set rlimits on this host kind (cgroup v1 hybrid); runc can, as long as every
# ulimit is explicit and within the hard limit.
configure_podman() {
    local hard_nofile
    hard_nofile=$(ulimit -Hn)
    [ "$hard_nofile" = unlimited ] && hard_nofile=1048576
    local nofile=$(( hard_nofile < 65536 ? hard_nofile : 65536 ))
    local conf_dir=/etc/containers/containers.conf.d
    local conf_file=$conf_dir/50-gpuops-lab.conf
    local wanted
    wanted=$(printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=4096:4096"]\n\n[engine]\nruntime = "runc"\n' "$nofile" "$nofile")
    if [ -f "$conf_file" ] && [ "$(cat "$conf_file")" = "$wanted" ]; then
        log "podman settings present ($conf_file)"
        return
    fi
    log "writing podman settings to $conf_file (runc, nofile=$nofile)"
    mkdir -p "$conf_dir"
    printf '%s\n' "$wanted" > "$conf_file"
}

create_virtualenv() {
    local requirements_hash
    requirements_hash=$(cat "$repo_root/requirements.txt" "$repo_root/requirements-controller.txt" | sha256sum | cut -c1-16)
    local venv_dir=$cache_root/venv/$requirements_hash
    if [ ! -x "$venv_dir/bin/ansible-playbook" ] || [ ! -f "$venv_dir/.complete" ]; then
        log "creating virtualenv $venv_dir"
        rm -rf "$venv_dir"
        python3 -m venv "$venv_dir"
        "$venv_dir/bin/pip" install --quiet --disable-pip-version-check --upgrade pip==25.3
        "$venv_dir/bin/pip" install --quiet --disable-pip-version-check -r "$repo_root/requirements.txt"
        touch "$venv_dir/.complete"
    else
        log "virtualenv present ($venv_dir)"
    fi
    ln -sfn "$venv_dir" "$repo_root/.venv"
}

# Ansible finds this checkout as gpuops.cluster through ansible.cfg's collections_path.
link_collection() {
    local collection_dir=$repo_root/.build/collections/ansible_collections/gpuops
    mkdir -p "$collection_dir"
    ln -sfn "$repo_root" "$collection_dir/cluster"
}

install_debian_packages
configure_podman
# Concurrent runs (several checkouts, or a test run beside a lab run) share the cache: one builds
# a given virtualenv, the others wait for it.
mkdir -p "$cache_root/venv"
exec 9>"$cache_root/venv/.lock"
flock 9
create_virtualenv
flock -u 9
link_collection
log "done"
