#!/usr/bin/env bash
# Base images made from Debian's packages, for machines that cannot pull the official ones:
#   obmen-base:bookworm        Debian bookworm minbase (glibc, libstdc++) and libatomic1: the runtime stage
#   obmen-build-base:bookworm  the same plus this machine's Node.js and npm (its nodejs package):
#                              the build stages run pnpm with it
#   obmen-base:bookworm-arm64  (ARCH=arm64, any architecture other than this machine's) the runtime
#                              stage of an image for that platform: only the Debian packages Node
#                              26 and the native packages link against (libc6, libgcc-s1,
#                              libstdc++6 with gcc-12-base, libatomic1) plus base-files and tzdata,
#                              unpacked with dpkg-deb, and base-passwd's /etc/passwd and /etc/group: no
#                              shell, no dpkg, no code of that architecture run here
# Made with debootstrap (root, Debian's debootstrap package) and imported into podman or docker.
#   bash scripts/image-base.sh            (ENGINE=docker to import into Docker; MIRROR, SUITE to change)
#   ARCH=arm64 bash scripts/image-base.sh the runtime base for another platform (the build stages
#                                         run on the building machine's own): debootstrap only
#                                         downloads that architecture's packages (--download-only),
#                                         so no emulation (qemu, binfmt_misc) is needed
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
  # Node 26 (the npm registry's build) links libatomic, which minbase lacks.
  debootstrap --variant=minbase --include=libatomic1 --arch="$arch" "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  slim "$root"
}

import_image() {
  local name="$1" root="$2"
  local platform=(--platform "linux/$arch")
  [ "${engine##*/}" != podman ] || platform=(--arch "$arch")
  if [ "$tag" = "$suite" ]; then
    tar -C "$root" -c . | "$engine" import "${platform[@]}" --change 'CMD ["/bin/bash"]' - "$name:$tag" > /dev/null 2> "$work/$name.import.log" \
      || { cat "$work/$name.import.log"; exit 1; }
  else
    # Docker 20.10 (Debian's docker.io) records its own architecture on an imported image,
    # whatever --platform says: another architecture's base is loaded as a one-layer image
    # archive (docker save's format, which podman loads too) whose configuration names it.
    # No CMD: there is no shell in it (the Dockerfile sets its own).
    local archive="$work/archive" diff created
    mkdir -p "$archive"
    tar -C "$root" -c . > "$archive/layer.tar"
    diff="$(sha256sum "$archive/layer.tar" | cut -d' ' -f1)"
    created="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '{"architecture":"%s","os":"linux","created":"%s","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"scripts/image-base.sh: %s unpacked"}]}' \
      "$arch" "$created" "$diff" "$created" "${runtime_packages[*]}" > "$archive/config.json"
    printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$name:$tag" > "$archive/manifest.json"
    tar -C "$archive" -c manifest.json config.json layer.tar | "$engine" load > /dev/null 2> "$work/$name.import.log" \
      || { cat "$work/$name.import.log"; exit 1; }
  fi
  echo "[image-base] $name:$tag: $("$engine" image inspect --format '{{.Size}}' "$name:$tag" | awk '{printf "%.0f MB", $1 / 1e6}')"
}

# Another architecture's packages cannot be configured here (their maintainer scripts are that
# architecture's programs), so the base for it is only what the image runs: the libraries in
# the NEEDED entries of Node and of the native packages (scripts/image.sh checks each one
# resolves), unpacked, with what their maintainer scripts would have set up for this use:
# merged /usr, /etc/passwd and /etc/group from base-passwd's masters (its update-passwd, which
# needs debconf's library, stays out), and a dpkg status file that lists the packages (for
# scanners; there is no dpkg in it).
runtime_packages=(libc6 libgcc-s1 gcc-12-base libstdc++6 libatomic1 base-files tzdata)
unpack_into() {
  local root="$1" dl="$work/download" deb pkg
  echo "[image-base] debootstrap --download-only $suite ($arch): ${runtime_packages[*]}"
  debootstrap --download-only --variant=minbase --arch="$arch" "$suite" "$dl" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  mkdir -p "$root/var/lib/dpkg"
  for pkg in "${runtime_packages[@]}"; do
    deb="$(ls "$dl"/var/cache/apt/archives/"${pkg}"_*.deb)"
    dpkg-deb -x "$deb" "$root"
    { echo "Package: $pkg"; echo "Status: install ok installed"; dpkg-deb -f "$deb" | grep -v '^Package:'; echo; } >> "$root/var/lib/dpkg/status"
  done
  local dir
  for dir in bin sbin lib; do
    if [ -d "$root/$dir" ] && [ ! -L "$root/$dir" ]; then
      mkdir -p "$root/usr/$dir"
      cp -a "$root/$dir/." "$root/usr/$dir/"
      rm -rf "${root:?}/$dir"
    fi
    mkdir -p "$root/usr/$dir"
    ln -s "usr/$dir" "$root/$dir"
  done
  dpkg-deb -x "$(ls "$dl"/var/cache/apt/archives/base-passwd_*.deb)" "$work/base-passwd"
  cp "$work/base-passwd/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
  cp "$work/base-passwd/usr/share/base-passwd/group.master" "$root/etc/group"
  slim "$root"
}

root="$work/root"
if [ "$tag" = "$suite" ]; then debootstrap_into "$root"; else unpack_into "$root"; fi
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
