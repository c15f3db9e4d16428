#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# When scripts/kernel-build.sh configures its object directory again and
# when it runs make (--inputs: the decisions alone, nothing built): by
# the inputs' one fingerprint (.btscrash-inputs), never because a fresh
# worktree's fragments are newer than the cache's .config (which made
# every new worktree reconfigure and rebuild the shared kernel); the old
# stamps (.btscrash-series, -config, -built) read as their equivalent.
# On a scratch cache (a fake built object directory), no kernel.  TAP.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/tests/helpers/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BTSCRASH_CACHE="$tmp" KERNEL=6.12
obj=$tmp/obj-6.12 tree=$tmp/linux-6.12
frag=$src/kernel/config/btscrash-vm.config
new_files=$(sed -n '/^new_files="/,/"$/p' "$src/scripts/kernel-build.sh" |
	sed 's/^new_files="//; s/"$//')
decides() {	# decides CONFIGURE MAKE: what kernel-build.sh --inputs says
	out=$("$src/scripts/kernel-build.sh" --inputs) || return 1
	if printf '%s\n' "$out" | grep -qx "configure: $1" &&
	   printf '%s\n' "$out" | grep -qx "make: $2"; then return 0; fi
	printf '%s\n' "$out"; return 1
}
field() { printf '%s\n' "$print" | sed -n "s/^$1: //p"; }
dotconfig() { echo "dotconfig: $(sha1sum < "$obj/.config" | cut -c1-12)"; }
tap_check "no object directory: configure, make" decides yes yes
print=$("$src/scripts/kernel-build.sh" --inputs | grep -v -e '^configure:' -e '^make:')
series=$(field series) config=$(field config)

# A built tree as after a run: the work tree with the series and the added
# files, a .config holding every option line of the fragments, a bzImage.
mkdir -p "$obj/arch/x86/boot" "$tree"
echo "$series" > "$tree/.btscrash-series"
for f in $new_files; do
	mkdir -p "$(dirname "$tree/$f")" && cp "$src/$f" "$tree/$f"; done
cat "$frag" "$src/kernel/config/6.12/btscrash-vm.config" > "$obj/.config"
touch "$obj/arch/x86/boot/bzImage"

# Stamped by the scripts before the one fingerprint: the same decisions.
echo "$series" > "$obj/.btscrash-series"
echo "$config" > "$obj/.btscrash-config"
tap_check "old stamps, no build digest: not configured again, make" decides no yes
# shellcheck disable=SC2086
{ echo "vm $series"; gcc --version | head -n 1; cat "$obj/.config"
	for f in $new_files; do cat "$src/$f"; done; } | sha1sum | cut -c1-12 \
	> "$obj/.btscrash-built"
tap_check "old stamps with the same build digest: no configure, no make" decides no no
rm "$obj/.btscrash-series" "$obj/.btscrash-config" "$obj/.btscrash-built"
tap_check "no fingerprint: configure, make" decides yes yes

stamp() { { printf '%s\n' "$print"; dotconfig; } > "$obj/.btscrash-inputs"; }
stamp
tap_check "built from these inputs: no configure, no make" decides no no
touch -d 2000-01-01 "$obj/.config" "$obj/.btscrash-inputs"
newer_same() { [ -n "$(find "$frag" -newer "$obj/.config")" ] && decides no no; }
tap_check "the fragments newer than .config (a fresh worktree), the same content: neither" \
	newer_same
with() {	# with NAME VALUE CONFIGURE MAKE: the stamp's NAME line VALUE decides so
	sed -i "s/^$1: .*/$1: $2/" "$obj/.btscrash-inputs"
	decides "$3" "$4"; ret=$?
	stamp
	return $ret
}
tap_check "the fragments' content changed: configure, make" with config 0123456789ab yes yes
tap_check "the series changed: configure, make" with series 0123456789ab yes yes
tap_check "an added file changed: make, no configure" with files 0123456789ab no yes
tap_check "another compiler: make, no configure" with gcc 'gcc 1.0' no yes
echo "# CONFIG_EDITED is not set" >> "$obj/.config"
tap_check ".config edited since the build: make, no configure" decides no yes
stamp
f=${new_files%% *}
echo "/* changed */" >> "$tree/$f"
tap_check "the work tree's copy of an added file differs: make" decides no yes
cp "$src/$f" "$tree/$f"
rm "$obj/arch/x86/boot/bzImage"
tap_check "no bzImage: make" decides no yes
tap_done
