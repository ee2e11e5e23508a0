#!/usr/bin/env bash
# Builds the control-plane binaries the e2e suite runs (etcd, kube-apiserver,
# kube-controller-manager, Crossplane core, CDI, the Cluster API core manager
# and its providers, the CSI snapshot controller)
# from the Go module proxy at the versions pinned by test/e2e/tools/*/go.mod,
# and caches them by version under the user cache dir. Idempotent: a cached
# binary is never rebuilt, so a warm run takes well under a second.
#
# A cold run first downloads every tools module concurrently (the network,
# not the CPU, is the limit there), then builds in two chains at once: the
# Kubernetes binaries and CAPK in one, Crossplane, CDI, Cluster API, CABPT
# and the CSI snapshot controller in the other. Each `go build` keeps both
# cores busy while it compiles, but links on one core for tens of seconds;
# the other chain fills that core. The chains are balanced by their cold
# build time on 2 cores (kube-apiserver ~11 min with kube-controller-manager
# ~3 min after it, each Cluster API manager ~4-5 min, Crossplane ~4 min, CDI
# ~3 min, the snapshot controller ~3.5 min: 400 s of CPU; the README's
# Timing section): ~17 min against ~20. GOGC=400 unless set: the compiler
# then spends less of its CPU collecting garbage (Makefile).
#
# Usage: test/e2e/hack/build-binaries.sh
# Prints one NAME=PATH line per binary on stdout; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools="$here/../tools"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/function-worker-image/bin"

# One build at a time per cache: a second run (the e2e suite's own, while
# .ci/run's early background run is still building, or another checkout's
# suite) waits for the first and then finds its binaries cached.
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
  echo "waiting for another build-binaries.sh run to finish (lock $cache/.build.lock)" >&2
  flock 9
fi

# pinned MODULE GOMOD prints the version GOMOD requires for MODULE.
pinned() {
  local v
  v=$(sed -nE "s#^(require)?[[:space:]]*$1 (v[^ ]+).*#\2#p" "$2" | head -1)
  [ -n "$v" ] || { echo "$1 is not pinned in $2" >&2; exit 1; }
  echo "$v"
}

k8s_version=$(pinned k8s.io/kubernetes "$tools/k8s/go.mod")
etcd_version=$(pinned go.etcd.io/etcd/server/v3 "$tools/k8s/go.mod")
# Crossplane core: CROSSPLANE_VERSION (make e2e CROSSPLANE_VERSION=v2.2.0),
# else the suite's default (DefaultCrossplaneVersion in harness/crds.go). Each
# supported version has its own tools module, tools/crossplane/<version>.
xp_version=${CROSSPLANE_VERSION:-$("$here/default-crossplane-version.sh")}
xp_tools="$tools/crossplane/$xp_version"
if [ ! -f "$xp_tools/go.mod" ]; then
  echo "Crossplane $xp_version is not one the suite supports; supported: $(cd "$tools/crossplane" && echo v*)" >&2
  exit 1
fi
[ "$(pinned github.com/crossplane/crossplane/v2 "$xp_tools/go.mod")" = "$xp_version" ] || { echo "$xp_tools/go.mod does not pin crossplane $xp_version" >&2; exit 1; }
k8s_minor=$(echo "$k8s_version" | cut -d. -f2)
k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
xp_ldflags="-s -w -X github.com/crossplane/crossplane/v2/internal/version.version=$xp_version"

# build NAME VERSION DIR LDFLAGS PKG builds PKG from the module in DIR into
# $cache/NAME-VERSION unless it is already there.
build() {
  local name=$1 version=$2 dir=$3 ldflags=$4 pkg=$5
  local bin="$cache/$name-$version"
  if [ ! -x "$bin" ]; then
    mkdir -p "$cache"
    echo "building $name $version into $bin (once per version)" >&2
    local start=$SECONDS tmp="$bin.tmp.$$"
    (cd "$dir" && CGO_ENABLED=0 GOGC=${GOGC:-400} go build -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg")
    mv "$tmp" "$bin"
    echo "built $name $version in $((SECONDS - start))s" >&2
  fi
  echo "$name=$bin"
}

# Crossplane core binds its metrics and health-probe servers (and the webhook
# server, which the suite disables) to ":port", that is every interface, and
# has no flag to change it. The suite runs everything on loopback only, so
# Crossplane core is built from a copy of its module source whose
# cmd/crossplane/core/core.go binds 127.0.0.1 (go build -overlay cannot
# replace files in the module cache). Bump xp_patch when the patch changes so
# the cache rebuilds.
build_crossplane() {
  xp_patch=loopback1
  xp_bin="$cache/crossplane-core-$xp_version-$xp_patch"
  if [ ! -x "$xp_bin" ]; then
    # go list -m reports no directory for a module not in the module cache
    # yet (a fresh machine): download it first.
    src=$(cd "$xp_tools" && go mod download github.com/crossplane/crossplane/v2 && go list -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2)
    [ -n "$src" ] || { echo "cannot locate the source of github.com/crossplane/crossplane/v2 in the module cache" >&2; exit 1; }
    local work; work=$(mktemp -d -p "$scratch")
    cp -r "$src" "$work/crossplane"
    chmod -R u+w "$work/crossplane"
    core="$work/crossplane/cmd/crossplane/core/core.go"
    sed -i -e 's#fmt.Sprintf(":%d", c.MetricsPort)#fmt.Sprintf("127.0.0.1:%d", c.MetricsPort)#' \
           -e 's#fmt.Sprintf(":%d", c.HealthProbePort)#fmt.Sprintf("127.0.0.1:%d", c.HealthProbePort)#' \
           -e 's#^\([[:space:]]*\)Port: c.WebhookPort,#\1Host: "127.0.0.1",\n\1Port: c.WebhookPort,#' "$core"
    if [ "$(grep -c '127.0.0.1' "$core")" -ne 3 ]; then
      echo "cannot patch $core to bind to loopback: the Crossplane source changed; update build-binaries.sh" >&2
      exit 1
    fi
    mkdir "$work/build"
    cp "$xp_tools/go.mod" "$xp_tools/go.sum" "$xp_tools/tools.go" "$work/build/"
    printf '\nreplace github.com/crossplane/crossplane/v2 => ../crossplane\n' >> "$work/build/go.mod"
    build crossplane-core "$xp_version-$xp_patch" "$work/build" "$xp_ldflags" github.com/crossplane/crossplane/v2/cmd/crossplane
  else
    echo "crossplane-core=$xp_bin"
  fi
}

# CDI (Containerized Data Importer) at the version test/e2e/tools/cdi/go.mod
# pins: its controller, its API server (which serves the DataVolume
# webhooks) and cdi-manifests, the tools module's program that prints the
# CRDs and webhook configurations CDI's operator generates in Go.
#
# cdi-controller and cdi-apiserver are built from a copy of the module
# source patched for running out of cluster on loopback (the patch keeps
# upstream behaviour whenever its variables are unset):
# - cmd/cdi-controller/controller.go serves metrics on ":8443", every
#   interface, with no flag: CDI_E2E_METRICS_ADDRESS overrides it ("0"
#   switches the server off).
# - it reads the clone-token keys from the fixed path
#   /var/run/cdi/token/keys (pkg/controller/clone-controller.go, TokenKeyDir,
#   where the operator mounts Secret cdi-api-signing-key):
#   CDI_E2E_TOKEN_KEY_DIR holds id_rsa and id_rsa.pub instead.
# - cmd/cdi-apiserver/apiserver.go listens on 0.0.0.0:8443 with no flag:
#   CDI_E2E_LISTEN_HOST and CDI_E2E_LISTEN_PORT override both.
# Bump cdi_patch when the patch changes so the cache rebuilds.
cdi_version=$(pinned kubevirt.io/containerized-data-importer "$tools/cdi/go.mod")
cdi_patch=e2e1
cdi_ldflags="-s -w -X kubevirt.io/containerized-data-importer/pkg/version.gitVersion=$cdi_version"
# build_low NAME TAG DIR LDFLAGS PKG builds PKG from the module in DIR into
# $cache/NAME-TAG unless it is already there.
build_low() {
  local name=$1 tag=$2 dir=$3 ldflags=$4 pkg=$5
  local bin="$cache/$name-$tag"
  if [ ! -x "$bin" ]; then
    mkdir -p "$cache"
    echo "building $name $tag into $bin (once per version)" >&2
    local start=$SECONDS tmp="$bin.tmp.$$"
    (cd "$dir" && CGO_ENABLED=0 GOGC=${GOGC:-400} go build -trimpath -ldflags "$ldflags" -o "$tmp" "$pkg")
    mv "$tmp" "$bin"
    echo "built $name $tag in $((SECONDS - start))s" >&2
  fi
  echo "$name=$bin"
}
# build_cdi NAME TAG DIR PKG builds one of CDI's binaries with build_low.
build_cdi() { build_low "$1" "$2" "$3" "$cdi_ldflags" "$4"; }
cdi_tag="$cdi_version-$cdi_patch"
build_cdis() {
  if [ ! -x "$cache/cdi-controller-$cdi_tag" ] || [ ! -x "$cache/cdi-apiserver-$cdi_tag" ]; then
    cdi_src=$(cd "$tools/cdi" && go mod download kubevirt.io/containerized-data-importer && go list -m -f '{{.Dir}}' kubevirt.io/containerized-data-importer)
    [ -n "$cdi_src" ] || { echo "cannot locate the source of kubevirt.io/containerized-data-importer in the module cache" >&2; exit 1; }
    local cdi_work; cdi_work=$(mktemp -d -p "$scratch")
    cp -r "$cdi_src" "$cdi_work/cdi"
    chmod -R u+w "$cdi_work/cdi"
    ctrl="$cdi_work/cdi/cmd/cdi-controller/controller.go"
    sed -i -e 's#BindAddress:   ":8443",#BindAddress:   e2eMetricsAddress(),#' \
           -e 's#os.ReadFile(controller.TokenPublicKeyPath)#os.ReadFile(e2eTokenKeyPath(controller.TokenPublicKeyPath))#' \
           -e 's#os.ReadFile(controller.TokenPrivateKeyPath)#os.ReadFile(e2eTokenKeyPath(controller.TokenPrivateKeyPath))#' "$ctrl"
    if [ "$(grep -c 'e2eMetricsAddress()\|e2eTokenKeyPath(' "$ctrl")" -ne 3 ]; then
      echo "cannot patch $ctrl: the CDI source changed; update build-binaries.sh" >&2
      exit 1
    fi
    cat > "$cdi_work/cdi/cmd/cdi-controller/zz_e2e_patch.go" <<'GO'
package main

import (
	"os"
	"path/filepath"
)

// Added by function-worker-image's test/e2e/hack/build-binaries.sh.

func e2eMetricsAddress() string {
	if a := os.Getenv("CDI_E2E_METRICS_ADDRESS"); a != "" {
		return a
	}
	return ":8443"
}

func e2eTokenKeyPath(p string) string {
	if d := os.Getenv("CDI_E2E_TOKEN_KEY_DIR"); d != "" {
		return filepath.Join(d, filepath.Base(p))
	}
	return p
}
GO
    api="$cdi_work/cdi/cmd/cdi-apiserver/apiserver.go"
    sed -i -e 's#NewCdiAPIServer(defaultHost,$#NewCdiAPIServer(e2eListenHost(),#' \
           -e 's#^\([[:space:]]*\)defaultPort,$#\1e2eListenPort(),#' "$api"
    if [ "$(grep -c 'e2eListenHost()\|e2eListenPort()' "$api")" -ne 2 ]; then
      echo "cannot patch $api: the CDI source changed; update build-binaries.sh" >&2
      exit 1
    fi
    cat > "$cdi_work/cdi/cmd/cdi-apiserver/zz_e2e_patch.go" <<'GO'
package main

import (
	"os"
	"strconv"
)

// Added by function-worker-image's test/e2e/hack/build-binaries.sh.

func e2eListenHost() string {
	if h := os.Getenv("CDI_E2E_LISTEN_HOST"); h != "" {
		return h
	}
	return defaultHost
}

func e2eListenPort() uint {
	if p, err := strconv.ParseUint(os.Getenv("CDI_E2E_LISTEN_PORT"), 10, 16); err == nil && p > 0 {
		return uint(p)
	}
	return defaultPort
}
GO
    mkdir "$cdi_work/build"
    cp -r "$tools/cdi/go.mod" "$tools/cdi/go.sum" "$tools/cdi/tools.go" "$tools/cdi/cmd" "$cdi_work/build/"
    printf '\nreplace kubevirt.io/containerized-data-importer => ../cdi\n' >> "$cdi_work/build/go.mod"
    build_cdi cdi-controller "$cdi_tag" "$cdi_work/build" kubevirt.io/containerized-data-importer/cmd/cdi-controller
    build_cdi cdi-apiserver "$cdi_tag" "$cdi_work/build" kubevirt.io/containerized-data-importer/cmd/cdi-apiserver
  else
    echo "cdi-controller=$cache/cdi-controller-$cdi_tag"
    echo "cdi-apiserver=$cache/cdi-apiserver-$cdi_tag"
  fi
  build_cdi cdi-manifests "$cdi_version" "$tools/cdi" github.com/cozystack/function-worker-image/test/e2e/tools/cdi/cmd/cdi-manifests
}

# CDI's importer (cmd/cdi-importer), unpatched, at the CDI version
# tools/cdi-importer/go.mod pins: the e2e suite runs it as the process of
# every importer pod whose source is the suite's own HTTPS server
# (harness/importer.go). It needs cgo: pkg/importer's VDDK source links
# libnbd (vddk-datasource_amd64.go), whose Go bindings (libguestfs.org/libnbd)
# the module proxy does not serve. They are generated C-binding sources that
# libnbd ships in its own release tarball (golang/), so the build takes them
# from the Debian source package of the libnbd-dev it links against (fetched
# with apt from deb.debian.org, the same archive the binary packages come
# from) and points go.mod's replace at them. At run time the importer runs
# qemu-img (qemu-utils), and the suite gives each importer a network
# namespace with ip (iproute2) and a mount namespace with unshare and mount
# (util-linux, mount). Missing Debian packages are installed with apt-get
# when the script runs as root (a fresh CI machine), else it says which to
# install. The binary is cached as cdi-importer-<cdi version>-libnbd<version>.
importer_packages() {
  local missing=()
  dpkg -s libnbd-dev >/dev/null 2>&1 || missing+=(libnbd-dev)
  command -v qemu-img >/dev/null 2>&1 || missing+=(qemu-utils)
  command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  [ ${#missing[@]} -eq 0 ] && return
  if [ "$(id -u)" -ne 0 ]; then
    echo "the CDI importer stand-in needs the Debian packages ${missing[*]}: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "installing ${missing[*]} for the CDI importer (apt-get)" >&2
  local start=$SECONDS
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
  echo "installed ${missing[*]} in $((SECONDS - start))s" >&2
}
build_cdi_importer() {
  importer_packages
  [ "$(pinned kubevirt.io/containerized-data-importer "$tools/cdi-importer/go.mod")" = "$cdi_version" ] ||
    { echo "tools/cdi-importer/go.mod and tools/cdi/go.mod pin different CDI versions" >&2; exit 1; }
  local libnbd; libnbd=$(dpkg-query -W -f '${Version}' libnbd-dev | sed 's/-[^-]*$//')
  local tag="$cdi_version-libnbd$libnbd"
  # CDI's cloner (cmd/cdi-cloner) and upload server (cmd/cdi-uploadserver),
  # unpatched, are built from the same module and build directory: the
  # suite runs them as the source and target pods of a host-assisted clone
  # (harness/importer.go). The upload server links pkg/importer, libnbd
  # and all; the cloner needs no cgo but shares the build.
  local names=(cdi-importer cdi-cloner cdi-uploadserver) missing=() n
  for n in "${names[@]}"; do [ -x "$cache/$n-$tag" ] || missing+=("$n"); done
  if [ ${#missing[@]} -gt 0 ]; then
    local w; w=$(mktemp -d -p "$scratch")
    # The libnbd source package, from a deb-src list of the machine's own
    # Debian release, kept apart from the system's apt state.
    local codename; codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    mkdir -p "$w/apt/lists/partial" "$w/src"
    printf 'deb-src http://deb.debian.org/debian %s main\n' "$codename" > "$w/apt/sources.list"
    local aptopts=(-o "Dir::Etc::SourceList=$w/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$w/apt/lists" -o APT::Sandbox::User=root)
    apt-get "${aptopts[@]}" update -qq >&2
    (cd "$w/src" && apt-get "${aptopts[@]}" source --download-only -qq "libnbd=$(dpkg-query -W -f '${Version}' libnbd-dev)" >&2)
    local orig; orig=$(ls "$w"/src/libnbd_*.orig.tar.* | head -1)
    tar -xf "$orig" -C "$w/src"
    mkdir "$w/build"
    cp "$tools/cdi-importer/go.mod" "$tools/cdi-importer/go.sum" "$tools/cdi-importer/tools.go" "$w/build/"
    cp -r "$w"/src/libnbd-*/golang "$w/build/libnbd"
    [ -f "$w/build/libnbd/bindings.go" ] || { echo "the libnbd $libnbd source has no Go bindings in golang/" >&2; exit 1; }
    rm -f "$w"/build/libnbd/*_test.go
    for n in "${missing[@]}"; do
      local bin="$cache/$n-$tag"
      echo "building $n $tag into $bin (once per version)" >&2
      local start=$SECONDS tmp="$bin.tmp.$$"
      (cd "$w/build" && CGO_ENABLED=1 GOGC=${GOGC:-400} go build -trimpath -ldflags "$cdi_ldflags" -o "$tmp" "kubevirt.io/containerized-data-importer/cmd/$n")
      mv "$tmp" "$bin"
      echo "built $n $tag in $((SECONDS - start))s" >&2
    done
  fi
  # The cloner image's entrypoint (BUILD.bazel: /usr/bin/cloner_startup.sh),
  # the module's own script, unchanged, cached beside the binaries.
  local startup="$cache/cdi-cloner-startup-$cdi_version.sh"
  if [ ! -f "$startup" ]; then
    local src; src=$(cd "$tools/cdi" && go list -m -f '{{.Dir}}' kubevirt.io/containerized-data-importer)
    [ -f "$src/cmd/cdi-cloner/cloner_startup.sh" ] || { echo "no cmd/cdi-cloner/cloner_startup.sh in the CDI module at $src" >&2; exit 1; }
    cp "$src/cmd/cdi-cloner/cloner_startup.sh" "$startup.tmp.$$"
    chmod 0755 "$startup.tmp.$$"
    mv "$startup.tmp.$$" "$startup"
  fi
  for n in "${names[@]}"; do echo "$n=$cache/$n-$tag"; done
  echo "cdi-cloner-startup=$startup"
}

# build_loopback NAME TOOLS MODULE PATCH LDFLAGS builds the main package at
# the root of MODULE, at the version tools/TOOLS/go.mod pins, into
# $cache/NAME-VERSION-PATCH unless it is already there. The Cluster API
# manager and its providers build their webhook server with
# webhook.Options{Port: ...} and no Host (main.go), which controller-runtime
# binds on every interface, with no flag for the host (their metrics and
# health servers do have address flags). The suite runs everything on
# loopback only, so, like Crossplane core, each is built from a copy of its
# module source whose main.go sets Host: "127.0.0.1". Bump PATCH when the
# patch changes so the cache rebuilds.
build_loopback() {
  local name=$1 dir="$tools/$2" module=$3 patch=$4 ldflags=$5
  local version; version=$(pinned "$module" "$dir/go.mod")
  local tag="$version-$patch"
  if [ -x "$cache/$name-$tag" ]; then
    echo "$name=$cache/$name-$tag"
    return
  fi
  local src; src=$(cd "$dir" && go mod download "$module" && go list -m -f '{{.Dir}}' "$module")
  [ -n "$src" ] || { echo "cannot locate the source of $module in the module cache" >&2; exit 1; }
  local w; w=$(mktemp -d -p "$scratch")
  cp -r "$src" "$w/src"
  chmod -R u+w "$w/src"
  local main="$w/src/main.go"
  sed -i -e 's#^\([[:space:]]*\)Port:\([[:space:]]*\)webhookPort,#\1Host:\2"127.0.0.1",\n\1Port:\2webhookPort,#' "$main"
  if [ "$(grep -c 'Host:[[:space:]]*"127.0.0.1",' "$main")" -ne 1 ]; then
    echo "cannot patch $module's main.go to bind its webhook server to loopback: the source changed; update build-binaries.sh" >&2
    exit 1
  fi
  mkdir "$w/build"
  cp "$dir/go.mod" "$dir/go.sum" "$dir/tools.go" "$w/build/"
  printf '\nreplace %s => ../src\n' "$module" >> "$w/build/go.mod"
  build_low "$name" "$tag" "$w/build" "$(printf -- "$ldflags" "$version")" "$module"
}

# The CSI snapshot controller, external-snapshotter's common controller
# (cmd/snapshot-controller, tools/snapshotter), built unpatched: it serves
# nothing unless --http-endpoint names an address (empty by default) and
# elects no leader unless --leader-election, so nothing of it binds any
# interface. main.version is what it logs and prints with --version.
snapshot_version=$(pinned github.com/kubernetes-csi/external-snapshotter/v8 "$tools/snapshotter/go.mod")

capi_minor=$(pinned sigs.k8s.io/cluster-api "$tools/capi/go.mod" | cut -d. -f2)
# The two chains (see the top of this file).
kubernetes_chain() {
  build kube-apiserver "$k8s_version" "$tools/k8s" "$k8s_ldflags" k8s.io/kubernetes/cmd/kube-apiserver
  build etcd "$etcd_version" "$tools/k8s" "-s -w" go.etcd.io/etcd/server/v3
  build kube-controller-manager "$k8s_version" "$tools/k8s" "$k8s_ldflags" k8s.io/kubernetes/cmd/kube-controller-manager
  # The KubeVirt infrastructure provider (CAPK), the last link from a
  # MachineDeployment to a worker's VirtualMachine; it pins its own
  # cluster-api and controller-runtime (tools/capk).
  build_loopback capk-manager capk sigs.k8s.io/cluster-api-provider-kubevirt loopback1 "-s -w"
}
providers_chain() {
  build_crossplane
  build_cdis
  build_cdi_importer
  # The Cluster API core manager (sigs.k8s.io/cluster-api).
  build_loopback capi-manager capi sigs.k8s.io/cluster-api loopback1 \
    "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=%s -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=$capi_minor"
  # The Talos bootstrap provider (CABPT), pinning its own cluster-api and
  # controller-runtime (tools/cabpt).
  build_loopback cabpt-manager cabpt github.com/siderolabs/cluster-api-bootstrap-provider-talos loopback1 "-s -w"
  # The CSI snapshot controller (k8s.io v0.34.0, which no other binary
  # pins exactly, so it shares little compiled), last: it is the newest.
  build snapshot-controller "$snapshot_version" "$tools/snapshotter" "-s -w -X main.version=$snapshot_version" \
    github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller
}

scratch=$(mktemp -d)
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT

# Download what the builds need once per set of pins, every module at once.
modules=(k8s "crossplane/$xp_version" cdi capi cabpt capk snapshotter)
# tools/cdi-importer is left out: its go.mod replaces libnbd by a directory
# that exists only while build_cdi_importer builds.
stamp="$cache/.downloaded-$(cd "$tools" && cat "${modules[@]/%//go.sum}" | sha256sum | cut -c1-16)"
if [ ! -e "$stamp" ]; then
  start=$SECONDS pids=()
  for m in "${modules[@]}"; do
    (cd "$tools/$m" && go mod download) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  touch "$stamp"
  echo "downloaded the tools modules' dependencies in $((SECONDS - start))s" >&2
fi

kubernetes_chain > "$scratch/kubernetes.out" &
k=$!
providers_chain > "$scratch/providers.out" &
p=$!
status=0
wait "$k" || status=1
wait "$p" || status=1
cat "$scratch/kubernetes.out" "$scratch/providers.out"
exit $status
