#!/usr/bin/env bash
# Runs arrival on the bundled sample day on a machine that has only Swift:
# checks for the system libraries the package links (SQLite 3 and zlib, with
# their headers), installs the missing ones with apt-get when it may (as root,
# or through sudo without a password), otherwise says exactly what to install
# and exits 1; then runs `swift run arrival demo` with the arguments given
# (for example `--format json`).
#
#   Scripts/run-demo.sh [--format markdown|json] [--data DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "run-demo: 'swift' is not on PATH. Install Swift 6.1 or later (https://www.swift.org/install/) and run this again." >&2
    exit 1
fi

case "$(uname -s)" in
Darwin)
    # SQLite and zlib ship with the macOS SDK; ISA-L comes from Homebrew.
    if ! [ -f /opt/homebrew/include/isa-l/igzip_lib.h ] && ! [ -f /usr/local/include/isa-l/igzip_lib.h ]; then
        if command -v brew >/dev/null 2>&1; then
            echo "run-demo: installing isa-l with Homebrew" >&2
            brew install isa-l
        else
            echo "run-demo: arrival needs ISA-L (igzip); install Homebrew, then: brew install isa-l" >&2
            exit 1
        fi
    fi
    ;;
Linux)
    if command -v dpkg >/dev/null 2>&1; then
        # Debian, Ubuntu and the official Swift images.
        missing=()
        for package in libsqlite3-dev zlib1g-dev libisal-dev; do
            dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
        done
        if [ ${#missing[@]} -gt 0 ]; then
            if [ "$(id -u)" -eq 0 ]; then
                as_root=()
            elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
                as_root=(sudo -n)
            else
                echo "run-demo: arrival needs these system packages, which are not installed: ${missing[*]}" >&2
                echo "Install them, then run this again:" >&2
                echo "    sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
                exit 1
            fi
            echo "run-demo: installing ${missing[*]} with apt-get" >&2
            "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
            "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
        fi
    else
        # Another distribution: look for the headers the package includes.
        found() {
            local dir
            for dir in /usr/include /usr/local/include; do
                [ -f "$dir/$1" ] && return 0
            done
            return 1
        }
        missing=()
        found sqlite3.h || missing+=("SQLite 3 with its headers (sqlite3.h)")
        found zlib.h || missing+=("zlib with its headers (zlib.h)")
        found isa-l/igzip_lib.h || missing+=("ISA-L with its headers (isa-l/igzip_lib.h)")
        if [ ${#missing[@]} -gt 0 ]; then
            echo "run-demo: arrival needs the development packages of SQLite 3, zlib and ISA-L; missing:" >&2
            printf '    %s\n' "${missing[@]}" >&2
            echo "Fedora, RHEL, Amazon Linux: sudo dnf install sqlite-devel zlib-devel isa-l-devel" >&2
            echo "Arch: sudo pacman -S sqlite zlib isa-l    Alpine: sudo apk add sqlite-dev zlib-dev isa-l-dev" >&2
            exit 1
        fi
    fi
    ;;
esac

exec swift run arrival demo "$@"
