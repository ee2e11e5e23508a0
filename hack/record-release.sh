#!/usr/bin/env bash
# Records what every example scenario composed at a release, and the inputs
# it composed it from, for the upgrade-parity test (fn_upgrade_test.go):
# that desired state, replayed as the observed state of the running code
# with the release's own inputs, must keep every template name, or the
# upgrade would roll the pool's workers.
#
#   hack/record-release.sh [rev]     (default HEAD; run once per release)
#
# writes testdata/releases/<date>-<rev>/<mode>/<scenario>/: composed.yaml,
# the composed resources of the scenario's expected.yaml at rev (the
# composite and the results dropped), and the scenario's inputs at rev as
# the scenario had them (xr.yaml, observed.yaml and required.yaml when it
# had them, and the nearest composition.yaml, with the function Input), so
# a scenario edited or removed since is still replayed against what the
# release really composed it from. Only git is needed: rev is read, never
# checked out.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse --short=7 "${1:-HEAD}")
date=$(git show -s --format=%cs "$rev")
out="testdata/releases/$date-$rev"
rm -rf "$out"
count=0
# show prints a file at rev, following a symbolic link as the checkout does.
show() {
	local path=$1
	while [ "$(git ls-tree "$rev" -- "$path" | cut -d' ' -f1)" = 120000 ]; do
		path=$(realpath -m --relative-to=. "$(dirname "$path")/$(git show "$rev:$path")")
	done
	git show "$rev:$path"
}
while IFS= read -r expected; do
	dir=${expected%/expected.yaml}
	rest=${dir#example/}
	mode=${rest%%/*}
	name=${dir##*/}
	to="$out/$mode/$name"
	mkdir -p "$to"
	for f in xr.yaml observed.yaml required.yaml; do
		if git cat-file -e "$rev:$dir/$f" 2>/dev/null; then
			show "$dir/$f" > "$to/$f"
		fi
	done
	for c in "$dir/composition.yaml" "example/$mode/composition.yaml"; do
		if git cat-file -e "$rev:$c" 2>/dev/null; then
			show "$c" > "$to/composition.yaml"
			break
		fi
	done
	# Keep the documents that are composed resources.
	show "$expected" | awk '
		function flush() { if (doc ~ /crossplane.io\/composition-resource-name:/) printf "---\n%s", doc; doc = "" }
		/^---$/ { flush(); next }
		{ doc = doc $0 "\n" }
		END { flush() }' > "$to/composed.yaml"
	count=$((count + 1))
done < <(git ls-tree -r --name-only "$rev" -- example | grep '/scenarios/[^/]*/expected.yaml$' | sort)
# The rendering revision the release renders by (RenderingRevision, in
# internal/nodepool/render/render.go since the node pool was split by stage and
# in internal/nodepool/request.go before; 1 before it existed).
revision=""
for f in internal/nodepool/render/render.go internal/nodepool/request.go; do
	if git cat-file -e "$rev:$f" 2>/dev/null; then
		revision=$(git show "$rev:$f" | sed -n 's/^const RenderingRevision = \([0-9]*\)$/\1/p')
		break
	fi
done
echo "${revision:-1}" > "$out/rendering-revision"
echo "recorded $count scenarios of $rev (rendering revision ${revision:-1}) into $out"
