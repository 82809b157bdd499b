#!/usr/bin/env bash
# deploy/container/test.sh: build deploy/Dockerfile and run its image's entrypoint, on a
# machine with no image registry and no working `podman run` (it is refused: setrlimit is
# not permitted). Run by scripts/test; needs root (debootstrap, mounts, namespaces).
#
#   1. base image: `debootstrap --variant=minbase bookworm` into .cache/container/ (kept and
#      reused), `podman import`ed as localhost/bookworm-minbase
#   2. `podman build --isolation chroot --format docker` of deploy/Dockerfile on that base,
#      and of its `--target baked` variant (the model must be in that image)
#   3. `podman image inspect`: user 10001, HEALTHCHECK, port 8000, entrypoint `folio serve`
#   4. `podman export` of a container of the image into a folder: the root file system
#   5. the image's Entrypoint + Cmd, with its Env, as its User, chrooted into that folder
#      (read-only), in fresh PID, network and mount namespaces (the part of a container
#      runtime that can be had here), the model bind-mounted read-only at /models: /health,
#      one completion, the image's HEALTHCHECK command (and that it fails with nothing
#      listening), the binary's kernel level versus the host's, SIGTERM and a clean exit
# Not a container runtime: no cgroup limits, no seccomp, no capability drop, no user
# namespace, and the HEALTHCHECK is run by this script, not scheduled by a runtime.
#
# All podman state (storage, run root, temp) lives under .cache/container/, not in the
# machine's /var/lib/containers. FOLIO_DEBIAN_MIRROR picks debootstrap's mirror.
#
# --build-only: steps 1 and the build stage of 2 (the compile), nothing else. scripts/test
# runs that at nice 19 beside pytest, then this script whole, which finds the build stage in
# its layer cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
if [[ $(id -u) != 0 ]]; then exec sudo --preserve-env=FOLIO_DEBIAN_MIRROR "$0" "$@"; fi

cache=$root/.cache/container
model=SmolLM2-135M-Instruct.Q4_1.gguf
base_image=localhost/bookworm-minbase:latest
image=localhost/folio:latest
mirror=${FOLIO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
python=$root/.venv/bin/python
step_start=$SECONDS
say() { printf '[container %dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }
took() { say "  done in $((SECONDS - step_start)) s"; step_start=$SECONDS; }
fail() { say "FAIL: $*"; exit 1; }
[[ -f models/$model ]] || fail "models/$model missing: run scripts/setup"
build_only=0
case ${1:-} in
  --build-only) build_only=1 ;;
  "") ;;
  *) fail "unknown argument $1 (usage: deploy/container/test.sh [--build-only])" ;;
esac

# Storage driver: overlay where the kernel mounts it (fast: layers are not copied), else vfs.
# Each driver has its own storage root; podman refuses to mix them in one.
mkdir -p "$cache/tmp"
probe=$(mktemp -d "$cache/tmp/overlay-probe.XXXX")
mkdir "$probe"/{l,u,w,m}
driver=vfs
if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" \
  "$probe/m" 2>/dev/null; then
  umount "$probe/m"; driver=overlay
fi
rm -rf "$probe"
pm() {
  TMPDIR=$cache/tmp podman --root "$cache/storage-$driver" --runroot "$cache/run-$driver" \
    --storage-driver "$driver" --cgroup-manager cgroupfs --events-backend file \
    --tmpdir "$cache/tmp/libpod" "$@"
}

# ---- 1. base image ----------------------------------------------------------------------
rootfs_base=$cache/bookworm-minbase
if [[ ! -f $rootfs_base/.ok || ! -x $rootfs_base/usr/bin/apt-get ]]; then
  say "debootstrap --variant=minbase bookworm ($mirror) into .cache/container/bookworm-minbase"
  rm -rf "$rootfs_base" "$rootfs_base.partial"
  debootstrap --variant=minbase bookworm "$rootfs_base.partial" "$mirror" \
    >"$cache/debootstrap.log" 2>&1 || { tail -20 "$cache/debootstrap.log" >&2; fail "debootstrap"; }
  rm -rf "$rootfs_base.partial"/var/cache/apt/archives/*.deb "$rootfs_base.partial"/var/lib/apt/lists/*
  mv "$rootfs_base.partial" "$rootfs_base"
  touch "$rootfs_base/.ok"
  pm rmi --force "$base_image" >/dev/null 2>&1 || true
  took
fi
if ! pm image exists "$base_image"; then
  say "podman import of the base root file system as $base_image (storage: $driver)"
  tar -C "$rootfs_base" --exclude=./.ok -c . | pm import --quiet - "$base_image" >/dev/null
  took
fi

# ---- 2. build ---------------------------------------------------------------------------
# Two builds that share their layers: the build stage alone, tagged, so that it is no
# "dangling" image and stays the layer cache of the next run (a rerun with src/ unchanged
# compiles nothing); then the image. `image prune` then drops what earlier runs left.
build() {  # TAG [podman build arguments]: progress lines are the steps and every 20th compile
  local tag=$1 rc; shift
  set +e
  pm build --isolation chroot --format docker --pull=never --build-arg BASE="$base_image" \
    -f deploy/Dockerfile -t "$tag" "$@" . 2>&1 |
    tee -a "$cache/build.log" |
    awk '/^(\[[0-9]+\/[0-9]+\] )?STEP/ { print "    " substr($0, 1, 110); fflush() }
         /^--> Using cache/ { print "      (cached)"; fflush() }
         match($0, /^\[[0-9]+\/[0-9]+\] Building/) { split(substr($0, 2), n, "[/\\]]");
           if (n[1] % 20 == 0 || n[1] == n[2]) { print "      compile " n[1] "/" n[2]; fflush() } }' >&2
  rc=${PIPESTATUS[0]}
  set -e
  ((rc == 0)) || { tail -30 "$cache/build.log" >&2; fail "podman build -t $tag (exit $rc)"; }
}
: >"$cache/build.log"
say "podman build --isolation chroot --target build -t localhost/folio-build (log: .cache/container/build.log)"
build localhost/folio-build:latest --target build
took
if ((build_only)); then
  say "the build stage is built and cached (--build-only)"
  exit 0
fi
say "podman build --isolation chroot -f deploy/Dockerfile -t $image"
build "$image"
took
say "podman build --target baked: the same image with models/$model in it"
build localhost/folio:baked --target baked
pm rm --force folio-baked >/dev/null 2>&1 || true
pm create --no-healthcheck --name folio-baked localhost/folio:baked >/dev/null
baked_size=$(pm export folio-baked | tar -tv | awk -v f="models/$model" '$6 == f || $6 == "./" f {print $3}')
pm rm folio-baked >/dev/null
pm rmi localhost/folio:baked >/dev/null
[[ $baked_size == "$(stat -c %s "models/$model")" ]] || fail "the baked image has no models/$model"
say "    /models/$model in the baked image, $baked_size bytes"
pm image prune --force >/dev/null
took

# ---- 3. the image's configuration -----------------------------------------------------
say "podman image inspect: User, Healthcheck, ExposedPorts, Entrypoint, Cmd, Env"
pm image inspect "$image" >"$cache/inspect.json"
"$python" - "$cache/inspect.json" "$cache/config.sh" <<'PY'
import json, shlex, sys
img = json.load(open(sys.argv[1]))[0]
cfg = img["Config"]
hc = img.get("Healthcheck") or cfg.get("Healthcheck") or {}  # podman: top level; docker: Config
checks = {
    "User is 10001:10001 (deploy/k8s runAsUser)": cfg.get("User") == "10001:10001",
    "Healthcheck is a CMD": (hc.get("Test") or [""])[0] == "CMD" and len(hc["Test"]) > 1,
    "ExposedPorts has 8000/tcp": "8000/tcp" in (cfg.get("ExposedPorts") or {}),
    "Entrypoint is folio serve": cfg.get("Entrypoint") == ["folio", "serve"],
    "Env sets FOLIO_MODEL": any(e.startswith("FOLIO_MODEL=/models/") for e in cfg.get("Env", [])),
}
for what, ok in checks.items():
    print(f"    {'ok  ' if ok else 'FAIL'} {what}", file=sys.stderr)
if not all(checks.values()):
    print(json.dumps(cfg, indent=1), file=sys.stderr)
    sys.exit(1)
user, group = cfg["User"].split(":")
with open(sys.argv[2], "w") as f:  # what a runtime takes from the image, as bash arrays
    f.write(f"user={user}\ngroup={group}\nworkdir={shlex.quote(cfg.get('WorkingDir') or '/')}\n")
    for name, words in [("entrypoint", cfg["Entrypoint"]), ("cmd", cfg.get("Cmd") or []),
                        ("env", cfg.get("Env", [])), ("healthcheck", hc["Test"][1:])]:
        f.write(f"{name}=({' '.join(shlex.quote(w) for w in words)})\n")
PY
user="" group="" workdir=/ entrypoint=() cmd=() env=() healthcheck=()
# shellcheck disable=SC1091
source "$cache/config.sh"
say "    entrypoint + cmd: ${entrypoint[*]} ${cmd[*]}; env: ${env[*]}"
took

# ---- 4. export --------------------------------------------------------------------------
rootfs=$cache/rootfs
say "podman export of the image's root file system into .cache/container/rootfs"
rm -rf "$rootfs"; mkdir -p "$rootfs"
pm rm --force folio-export >/dev/null 2>&1 || true
pm create --no-healthcheck --name folio-export "$image" >/dev/null
pm export folio-export | tar -C "$rootfs" -x
pm rm folio-export >/dev/null
[[ -x $rootfs/usr/local/bin/folio ]] || fail "no /usr/local/bin/folio in the exported image"
# What a runtime writes into every container.
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
echo folio-test >"$rootfs/etc/hostname"
took

# ---- 5. run the entrypoint --------------------------------------------------------------
# `container` runs as root in new mount, network and PID namespaces: it makes the root file
# system read-only (as the Kubernetes manifest runs it), mounts what a runtime provides (/proc,
# a minimal /dev, /sys read-only, the model read-only), brings up loopback and execs the
# image's entrypoint in the chroot as the image's user; folio is then PID 1 of its namespace,
# as in a container without an init. The mounts vanish with the namespaces; the trap kills
# the server if a check fails.
log=$cache/serve.log
server=""
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
}
trap cleanup EXIT
say "starting the image's entrypoint as ${user}:${group} in a chroot (log: .cache/container/serve.log)"
export rootfs model user group workdir
# shellcheck disable=SC2016  # $r, $@ ... belong to the inner shells
unshare --mount --net --pid --fork --propagation private bash -c '
  set -e
  r=$rootfs
  touch "$r/models/$model"
  # Read-only, as deploy/k8s/deployment.yaml runs it (readOnlyRootFilesystem, no /tmp volume).
  mount --bind "$r" "$r"; mount -o remount,bind,ro "$r"
  mount -t proc -o nosuid,nodev,noexec proc "$r/proc"
  mount -t tmpfs -o nosuid,mode=755,size=64k tmpfs "$r/dev"
  for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    IFS=: read -r n ma mi <<<"$d"; mknod -m 666 "$r/dev/$n" c "$ma" "$mi"
  done
  mkdir "$r/dev/shm" "$r/dev/pts"; mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$r/dev/shm"
  mount --bind /sys "$r/sys"; mount -o remount,bind,ro "$r/sys"
  mount --bind "models/$model" "$r/models/$model"
  mount -o remount,bind,ro "$r/models/$model"
  ip link set lo up
  cd "$r"
  exec chroot --userspec="$user:$group" "$r" env -i HOSTNAME=folio-test "$@"
' container "${env[@]}" sh -c 'cd "$0" && exec "$@"' "$workdir" "${entrypoint[@]}" "${cmd[@]}" \
  >"$log" 2>&1 &
ns=$!  # unshare, in the namespaces but for the PID one; its child is the entrypoint
for _ in $(seq 50); do
  server=$(awk '{print $1}' "/proc/$ns/task/$ns/children" 2>/dev/null) && [[ -n $server ]] && break
  sleep 0.1
done
[[ -n $server ]] || fail "the entrypoint did not start"
in_container() {  # like `podman exec`: the container's namespaces, root, user and Env
  nsenter --target "$server" --mount --net --pid --root --wd --setuid "$user" --setgid "$group" \
    env -i "${env[@]}" "$@"
}
http() {  # METHOD PATH [BODY]: prints "STATUS BODY", from inside the network namespace
  nsenter --target "$server" --net "$python" - "$@" <<'PY'
import sys, urllib.request, urllib.error
method, path, body = sys.argv[1], sys.argv[2], (sys.argv[3] if len(sys.argv) > 3 else None)
req = urllib.request.Request("http://127.0.0.1:8000" + path, method=method,
                             data=body.encode() if body else None,
                             headers={"Content-Type": "application/json"})
try:
    with urllib.request.urlopen(req, timeout=60) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
except OSError as e:
    print(0, e)
PY
}
took

say "waiting for /health"
deadline=$((SECONDS + 120))
while :; do
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; fail "the server exited while starting"; }
  reply=$(http GET /health)
  [[ $reply == 200* ]] && break
  ((SECONDS < deadline)) || { cat "$log" >&2; fail "no 200 from /health in 120 s: $reply"; }
  sleep 0.2
done
say "    /health: $reply"
took

say "the root file system is read-only: /tmp (mode 1777) refuses a write"
err=$(in_container sh -c ': >/tmp/probe' 2>&1) && fail "/tmp/probe could be written"
[[ $err == *"Read-only file system"* ]] || fail "writing /tmp/probe: $err"
took

say "one completion (POST /v1/completions)"
served=$(http GET /v1/models | "$python" -c 'import json,sys; s=sys.stdin.read(); print(json.loads(s.split(" ",1)[1])["data"][0]["id"])')
reply=$(http POST /v1/completions \
  "{\"model\": \"$served\", \"prompt\": \"The capital of France is\", \"max_tokens\": 8, \"temperature\": 0}")
text=$("$python" -c 'import json,sys; s=sys.argv[1]; c,b=s.split(" ",1); assert c=="200", s; print(json.loads(b)["choices"][0]["text"])' "$reply") ||
  fail "completion: $reply"
[[ -n ${text//[[:space:]]/} ]] || fail "completion has no text: $reply"
say "    model $served: \"The capital of France is\" -> \"$text\""
took

say "the image's HEALTHCHECK command, inside the container"
in_container "${healthcheck[@]}" || fail "the HEALTHCHECK command failed against a healthy server"
say "    exit 0 with the server up"
# And it must be able to fail: the same command where nothing listens (a fresh, empty
# network namespace, same root file system and user).
if unshare --net chroot --userspec="$user:$group" "$rootfs" env -i "${env[@]}" "${healthcheck[@]}" 2>/dev/null; then
  fail "the HEALTHCHECK command succeeded with no server listening"
fi
say "    nonzero with nothing listening"
took

say "kernel level of the portable (FOLIO_NATIVE=OFF) binary versus the CPU"
info=$(in_container folio info "/models/$model" --json 2>/dev/null) || fail "folio info in the container"
host_bin=$root/build/release/folio
host_info=$([[ -x $host_bin ]] && "$host_bin" info "models/$model" --json 2>/dev/null || echo '{}')
"$python" - "$info" "$host_info" <<'PY' || fail "the image's folio does not select the CPU's kernels"
import json, sys
load = json.loads(sys.argv[1])["load"]
host = json.loads(sys.argv[2]).get("load")
print(f"    image: {load['isa']} (CPU: {load['isa_detected']}; {load['cpu_features']}): {load['kernels']}",
      file=sys.stderr)
assert load["isa"] == load["isa_detected"], "the image's binary runs below the CPU's level"
if host:
    print(f"    host build/release (-march=native): {host['isa']}: {host['kernels']}", file=sys.stderr)
    assert (load["isa"], load["kernels"]) == (host["isa"], host["kernels"]), "differs from the native build"
PY
took

say "SIGTERM: drain and a clean exit"
kill -TERM "$server"
rc=0; wait "$ns" || rc=$?
server=""
((rc == 0)) || { tail -20 "$log" >&2; fail "the entrypoint exited with $rc after SIGTERM"; }
say "    exit 0; last log line: $(tail -1 "$log")"
took
say "container: all checks passed (the exported root file system stays in .cache/container/rootfs)"
