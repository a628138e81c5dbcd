#!/usr/bin/env bash
# Loads an HTML file in headless Chromium and checks it: the DOM after load (scripts run) goes to
# OUTDIR/dom.html, a 1200x2000 screenshot to OUTDIR/screenshot.png, Chromium's log to
# OUTDIR/*.log. Fails (exit 1) when the page logs anything to the console (script errors
# included) or an output is missing. Exit 2: bad usage or no Chromium.
#
#   scripts/chromium_check.sh FILE.html OUTDIR [HASH]     e.g. HASH = sort=transform:desc
#
# Chromium: $CHROMIUM, else the first of chromium, chromium-browser, google-chrome on PATH
# (Debian: apt-get install -y chromium).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 FILE.html OUTDIR [HASH]" >&2
    exit 2
fi
html=$1
out=$2
hash=${3:-}
if [[ ! -f $html ]]; then
    echo "error: $html: no such file" >&2
    exit 2
fi
browser=${CHROMIUM:-}
if [[ -z $browser ]]; then
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
    done
fi
if [[ -z $browser ]]; then
    echo "error: no Chromium on PATH; install it (Debian: apt-get install -y chromium) or set CHROMIUM" >&2
    exit 2
fi

mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
url="file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")"
if [[ -n $hash ]]; then url="$url#$hash"; fi

run() {
    # A fresh profile per run; no network, no first-run or background work.
    rm -rf "${profile:?}"/*
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

run --dump-dom "$url" >"$out/dom.html" 2>"$out/dom.log"
run --screenshot="$out/screenshot.png" --window-size=1200,2000 "$url" >/dev/null 2>"$out/screenshot.log"

status=0
if grep -h ':CONSOLE' "$out/dom.log" "$out/screenshot.log" >"$out/console.txt"; then
    echo "error: the page wrote to the console:" >&2
    cat "$out/console.txt" >&2
    status=1
fi
if [[ ! -s $out/dom.html ]]; then
    echo "error: no DOM was dumped (see $out/dom.log)" >&2
    status=1
fi
if [[ ! -s $out/screenshot.png ]]; then
    echo "error: no screenshot was taken (see $out/screenshot.log)" >&2
    status=1
fi
exit $status
