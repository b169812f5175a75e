#!/usr/bin/env bash
# check-image.sh: builds deploy/Dockerfile with buildah (Debian's package)
# on a machine that reaches Debian's mirror and the Go module proxy but no
# container registry, and runs the image: sshd's configuration test as
# mpiuser, and `mpirun -np 2 adaspdc train` on the bundled data.
#
# With no registry, the two base images are made here under the names the
# Dockerfile asks for: debian:bookworm-slim by debootstrap (minbase), and
# golang:1.26-bookworm as that plus this machine's Go toolchain and CA
# certificates (the official images hold both). Run as root from the
# repository root:
#
#   apt-get install -y buildah debootstrap && bash deploy/check-image.sh
set -euo pipefail
export BUILDAH_ISOLATION=chroot
cd "$(dirname "$0")/.."
if ! buildah images -q docker.io/library/debian:bookworm-slim | grep -q .; then
  c=$(buildah from scratch)
  debootstrap --variant=minbase bookworm "$(buildah mount "$c")" http://deb.debian.org/debian >/tmp/debootstrap.log
  buildah umount "$c" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  buildah commit -q "$c" docker.io/library/debian:bookworm-slim >/dev/null
  buildah rm "$c" >/dev/null
fi
if ! buildah images -q docker.io/library/golang:1.26-bookworm | grep -q .; then
  c=$(buildah from --pull=never docker.io/library/debian:bookworm-slim)
  m=$(buildah mount "$c")
  cp -a "$(go env GOROOT)" "$m/usr/local/go"
  mkdir -p "$m/etc/ssl" && cp -aL /etc/ssl/certs "$m/etc/ssl/"
  buildah umount "$c" >/dev/null
  buildah config --env PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt "$c"
  buildah commit -q "$c" docker.io/library/golang:1.26-bookworm >/dev/null
  buildah rm "$c" >/dev/null
fi
buildah bud --pull=never -q -f deploy/Dockerfile -t registry.example.com/adaspdc:mpi .
c=$(buildah from --pull=never registry.example.com/adaspdc:mpi)
trap 'buildah rm "$c" >/dev/null' EXIT
buildah run "$c" -- /usr/sbin/sshd -t -f /home/mpiuser/.sshd_config
out=$(buildah run "$c" -- sh -c 'cd /tmp && mpirun --oversubscribe -np 2 /usr/local/bin/adaspdc train -quiet')
echo "$out"
grep -q ' ranks=2 ' <<<"$out"
echo "deploy/Dockerfile: built, and ran two ranks as mpiuser"
