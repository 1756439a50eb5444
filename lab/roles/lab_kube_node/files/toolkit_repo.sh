#!/usr/bin/env bash
# Make the lab's copy of NVIDIA's container toolkit repository: NVIDIA's layout (<base>/stable/deb/<arch>/, a
# flat repository, its key at <base>/gpgkey), holding the packages tools/build_nvidia_container_toolkit.sh built
# from NVIDIA's source, signed by a key made here, so apt on the nodes checks a real signature.
#   toolkit_repo.sh REPO_DIR DEBS_DIR
set -euo pipefail
repo="$1"
debs="$2"
scratch="$repo.tmp"
rm -rf "$scratch"
arch_dir="$scratch/stable/deb/amd64"
mkdir -p "$arch_dir"
cp "$debs"/*.deb "$arch_dir/"
export GNUPGHOME="$scratch/gnupg"
mkdir -m 0700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'gpuops lab container toolkit mirror <lab@gpuops.invalid>' ed25519 sign never
cd "$arch_dir"
dpkg-scanpackages --multiversion . /dev/null > Packages 2> /dev/null
{
    echo "Origin: gpuops lab"
    echo "Label: gpuops lab container toolkit mirror"
    echo "Date: $(date -Ru)"
    echo "SHA256:"
    echo " $(sha256sum Packages | cut -d' ' -f1) $(stat -c %s Packages) Packages"
} > Release
gpg --batch --yes --clearsign -o InRelease Release
gpg --batch --armor --export > "$scratch/gpgkey"
rm -rf "$GNUPGHOME"
rm -rf "$repo"
mv "$scratch" "$repo"
echo "changed"
