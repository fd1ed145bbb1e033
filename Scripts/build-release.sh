#!/usr/bin/env bash
# Builds the installable arrival: a release binary with the Swift standard
# library and Foundation linked in (no Swift toolchain needed where it runs),
# stripped, its shared libraries checked against the README's list, and a
# tarball with the binary, shell completions and a man page.
#
#   Scripts/build-release.sh [OUT-DIR]     (default: .build/dist)
#
# Fails when the binary needs a shared library other than the ones the
# README names (on Linux: SQLite, zlib, ISA-L, the C and C++ runtimes), or
# when it does not run from another directory.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.build/dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# ARRIVAL_SCRATCH_PATH: SwiftPM's build folder (default .build); .ci/run gives one of its own so that
# this build runs beside the tests, which hold .build.
scratch="${ARRIVAL_SCRATCH_PATH:-.build}"
started=$(date +%s)
case "$(uname -s)" in
Linux)
    # Foundation's ICU data for every locale (34 MB) is left out: arrival formats and parses its times and
    # numbers itself and calls no locale-dependent API, so an empty ICU data package takes the data symbol's
    # place (Scripts/release/empty-icu-data.c says why and how).
    icu_archive="$(dirname "$(dirname "$(command -v swift)")")/lib/swift_static/linux/lib_FoundationICU.a"
    icu_symbol="$(nm "$icu_archive" 2>/dev/null | awk '$2 == "R" && $3 ~ /^icudt[0-9]+_dat$/ {symbol = $3} END {print symbol}')"
    empty_icu=()
    if [ -n "$icu_symbol" ]; then
        objects="$(mkdir -p "$scratch/release-objects" && cd "$scratch/release-objects" && pwd)"
        cc -O2 -c Scripts/release/empty-icu-data.c -o "$objects/empty-icu-data.o"
        empty_icu=(-Xlinker "--defsym=$icu_symbol=arrival_empty_icu_data" -Xlinker "$objects/empty-icu-data.o")
    else
        echo "build-release: no ICU data symbol in $icu_archive: the binary keeps Foundation's ICU data" >&2
    fi
    swift build --scratch-path "$scratch" -c release --static-swift-stdlib --product arrival "${empty_icu[@]}"
    ;;
*) swift build --scratch-path "$scratch" -c release --product arrival ;;
esac
binary="$(swift build --scratch-path "$scratch" -c release --show-bin-path)/arrival"
if [ "$(uname -s)" = Linux ] && [ -n "${icu_symbol:-}" ] && nm "$binary" | grep -q " R $icu_symbol\$"; then
    echo "build-release: the binary still holds $icu_symbol (the empty ICU data was not linked in its place)" >&2
    exit 1
fi
built=$(date +%s)

version="$("$binary" --version)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
name="arrival-$version-$(uname -s | tr 'A-Z' 'a-z')-$(uname -m)"
mkdir -p "$stage/$name/bin" "$stage/$name/share/man/man1" "$stage/$name/share/bash-completion/completions" \
    "$stage/$name/share/zsh/site-functions" "$stage/$name/share/fish/vendor_completions.d"
cp "$binary" "$stage/$name/bin/arrival"
unstripped=$(wc -c <"$stage/$name/bin/arrival")
strip "$stage/$name/bin/arrival"
size=$(wc -c <"$stage/$name/bin/arrival")

# The shared libraries it needs: exactly the README's list, nothing else.
if [ "$(uname -s)" = Linux ]; then
    allowed='^(linux-vdso\.so|/lib64/ld-linux|ld-linux|libsqlite3\.so|libz\.so|libisal\.so|libstdc\+\+\.so|libgcc_s\.so|libm\.so|libc\.so)'
    libraries="$(ldd "$stage/$name/bin/arrival" | awk '{print $1}')"
    unexpected="$(echo "$libraries" | grep -Ev "$allowed" || true)"
    if [ -n "$unexpected" ]; then
        echo "build-release: the binary needs libraries the README does not name:" >&2
        echo "$unexpected" | sed 's/^/  /' >&2
        exit 1
    fi
    echo "build-release: ldd: $(echo "$libraries" | grep -v vdso | tr '\n' ' ')"
fi

# It runs from elsewhere, with nothing of the checkout around it.
elsewhere="$(mktemp -d)"
(cd "$elsewhere" && "$stage/$name/bin/arrival" simulate --out fleet --activities 20 --seed 7 >/dev/null &&
    "$stage/$name/bin/arrival" ingest fleet --db s.sqlite --quiet &&
    "$stage/$name/bin/arrival" report --db s.sqlite --format html --out r.html &&
    test -s r.html) || {
    echo "build-release: the stripped binary does not run from another directory" >&2
    rm -rf "$elsewhere"
    exit 1
}
rm -rf "$elsewhere"

# Completions and the man page, from ArgumentParser's own generators.
"$binary" --generate-completion-script bash >"$stage/$name/share/bash-completion/completions/arrival"
"$binary" --generate-completion-script zsh >"$stage/$name/share/zsh/site-functions/_arrival"
"$binary" --generate-completion-script fish >"$stage/$name/share/fish/vendor_completions.d/arrival.fish"
# The man page: ArgumentParser's generate-manual tool, built from the package SwiftPM already
# fetched (a debug build of ArgumentParser alone, in a folder of its own), run on the binary.
parser="$scratch/checkouts/swift-argument-parser"
mkdir -p "$stage/man"
swift build --package-path "$parser" --scratch-path "$scratch/manual-tool" --product generate-manual >/dev/null
"$(swift build --package-path "$parser" --scratch-path "$scratch/manual-tool" --show-bin-path)/generate-manual" \
    "$binary" --output-directory "$stage/man" --date "$(date -u +%Y-%m-%d)"
manual="$stage/man/arrival.1"
if [ ! -s "$manual" ]; then
    echo "build-release: ArgumentParser's generate-manual wrote no arrival.1" >&2
    exit 1
fi
cp "$manual" "$stage/$name/share/man/man1/arrival.1"
mkdir -p "$stage/$name/share/doc/arrival"
cp README.md "$stage/$name/share/doc/arrival/"

tarball="$out/$name.tar.gz"
tar -C "$stage" -czf "$tarball" "$name"
echo "build-release: $name: binary $size bytes stripped ($unstripped with symbols), built in $((built - started)) s"
echo "build-release: $tarball ($(wc -c <"$tarball") bytes): bin/arrival, share/man/man1/arrival.1, bash, zsh and fish completions"
echo "build-release: install with: tar -xzf $tarball -C /usr/local --strip-components=1"
