#!/usr/bin/env bash
# Register gVisor's runsc with Docker so that `sandbox.runtime: runsc` works (docs/architecture.md).
# Optional: never fails setup. As root only: installs Debian's `runsc` package if missing (and
# apt-get exists), merges {"runtimes": {"runsc": ...}} into /etc/docker/daemon.json (every other
# key kept; an existing "runsc" entry is left as it is), and reloads a running dockerd with
# SIGHUP (no restart; a dockerd started later reads the file). Idempotent: a second run changes
# nothing and sends no signal.
# --network=none: the sandbox has no network anyway, and runsc 0.0~20221219 refuses to start on
# Linux >= 6.11 with its own network stack ("cannot run with network enabled in root network
# namespace": its root-netns test reads /proc/sys/net/core/rmem_default, visible in every netns
# since then; google/gvisor#10704).
set -uo pipefail
RUNSC=/usr/bin/runsc
CONF=${COBALT_DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}  # tests point these two elsewhere
RELOAD=${COBALT_DOCKERD_RELOAD:-1}
note() { echo "note: $*; sandbox.runtime: runsc will not be available (the default runc works)" >&2; }

[ "$(id -u)" = 0 ] || exit 0
if [ ! -x "$RUNSC" ] && command -v apt-get >/dev/null 2>&1; then
  echo "==> installing runsc (gVisor, Debian package; optional sandbox runtime)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >/dev/null) \
    || { note "the runsc package could not be installed"; exit 0; }
fi
[ -x "$RUNSC" ] || { note "$RUNSC is missing"; exit 0; }
command -v python3 >/dev/null 2>&1 || { note "python3 is needed to edit $CONF"; exit 0; }

changed=$(python3 - "$CONF" "$RUNSC" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
try:
    with open(path) as fh:
        conf = json.load(fh)
except FileNotFoundError:
    conf = {}
except (OSError, ValueError) as exc:
    print(f"error: {path} is not readable JSON ({exc})", file=sys.stderr)
    sys.exit(1)
runtimes = conf.setdefault("runtimes", {})
if "runsc" in runtimes:
    print("no")
    sys.exit(0)
runtimes["runsc"] = {"path": runsc, "runtimeArgs": ["--network=none"]}
os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
with open(path + ".tmp", "w") as fh:
    json.dump(conf, fh, indent=2)
    fh.write("\n")
os.replace(path + ".tmp", path)
print("yes")
PY
) || { note "$CONF was left as it is"; exit 0; }

if [ "$changed" = yes ]; then
  echo "==> registered runsc in $CONF"
  [ "$RELOAD" = 1 ] || exit 0
  pid=$(cat /var/run/docker.pid 2>/dev/null || pidof dockerd || true)
  if [ -n "$pid" ] && kill -HUP "$pid" 2>/dev/null; then
    for _ in $(seq 1 20); do
      if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; then
        echo "==> dockerd reloaded its configuration: runtime runsc available"; exit 0
      fi
      sleep 0.5
    done
    note "dockerd did not list runsc after SIGHUP (see its log)"
  fi
fi
exit 0
