#!/usr/bin/env bash
# Records what every example scenario composed at a release, for the
# upgrade-parity test (fn_upgrade_test.go): that desired state, replayed as
# the observed state of the running code, must keep every template name, or
# the upgrade would roll the pool's workers.
#
#   hack/record-release.sh [rev]     (default HEAD; run once per release)
#
# writes testdata/releases/<date>-<rev>/<mode>/<scenario>.yaml: the composed
# resources of the scenario's expected.yaml at rev (the composite and the
# results dropped), each document preceded by the sha256 of the scenario's
# inputs at rev (xr.yaml, observed.yaml, required.yaml, then the nearest
# composition.yaml), so that a scenario edited since is not replayed
# against other inputs. Only git is needed: rev is read, never checked out.
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
	inputs=""
	for f in xr.yaml observed.yaml required.yaml; do
		if git cat-file -e "$rev:$dir/$f" 2>/dev/null; then
			inputs+=$(show "$dir/$f")$'\n'
		fi
	done
	for c in "$dir/composition.yaml" "example/$mode/composition.yaml"; do
		if git cat-file -e "$rev:$c" 2>/dev/null; then
			inputs+=$(show "$c")$'\n'
			break
		fi
	done
	sum=$(printf '%s' "$inputs" | sha256sum | cut -d' ' -f1)
	mkdir -p "$out/$mode"
	{
		echo "# inputs-sha256: $sum"
		# Keep the documents that are composed resources.
		show "$expected" | awk '
			function flush() { if (doc ~ /crossplane.io\/composition-resource-name:/) printf "---\n%s", doc; doc = "" }
			/^---$/ { flush(); next }
			{ doc = doc $0 "\n" }
			END { flush() }'
	} > "$out/$mode/$name.yaml"
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
