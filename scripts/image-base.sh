#!/usr/bin/env bash
# Base images made from Debian's packages, for machines that cannot pull the official ones:
#   obmen-base:bookworm        Debian bookworm minbase (glibc, libstdc++): the runtime stage
#   obmen-build-base:bookworm  the same plus this machine's Node.js and npm (its nodejs package):
#                              the build stages run pnpm with it
#   obmen-base:bookworm-arm64  (ARCH=arm64) the runtime stage of an image for another platform
# Made with debootstrap (root, Debian's debootstrap package) and imported into podman or docker.
#   bash scripts/image-base.sh            (ENGINE=docker to import into Docker; MIRROR, SUITE to change)
#   ARCH=arm64 bash scripts/image-base.sh the runtime base for another platform (the build stages
#                                         run on the building machine's own). debootstrap runs the
#                                         foreign packages' set-up under emulation: Debian's
#                                         qemu-user-static and binfmt-support, binfmt_misc mounted.
set -euo pipefail

engine="${ENGINE:-$(command -v podman > /dev/null && echo podman || echo docker)}"
suite="${SUITE:-bookworm}"
mirror="${MIRROR:-http://deb.debian.org/debian}"
arch="${ARCH:-$(dpkg --print-architecture)}"
tag="$suite"
[ "$arch" = "$(dpkg --print-architecture)" ] || tag="$suite-$arch"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Debian's own clean-up of a minimal image: no documentation, no apt lists, no caches.
slim() {
  local root="$1"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old "$root"/var/log/* \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
}

debootstrap_into() {
  local root="$1"
  echo "[image-base] debootstrap $suite ($arch)"
  debootstrap --variant=minbase --arch="$arch" "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  slim "$root"
}

import_image() {
  local name="$1" root="$2"
  local platform=(--platform "linux/$arch")
  [ "$engine" != podman ] || platform=(--arch "$arch")
  tar -C "$root" -c . | "$engine" import "${platform[@]}" --change 'CMD ["/bin/bash"]' - "$name:$tag" > /dev/null 2> "$work/$name.import.log" \
    || { cat "$work/$name.import.log"; exit 1; }
  echo "[image-base] $name:$tag: $("$engine" image inspect --format '{{.Size}}' "$name:$tag" | awk '{printf "%.0f MB", $1 / 1e6}')"
}

root="$work/root"
debootstrap_into "$root"
import_image obmen-base "$root"
if [ "$tag" = "$suite" ]; then
  # Debian's own npm fails to configure in a minbase debootstrap; this machine's Node (>= 18.12)
  # and npm, copied in, only have to run pnpm.
  node="$(command -v node)" npm="$(dirname "$(readlink -f "$(command -v npm)")")/.."
  cp "$node" "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules"
  cp -r "$npm" "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  import_image obmen-build-base "$root"
fi
