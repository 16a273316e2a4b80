#!/usr/bin/env bash
# One-line demo: build, start icnfwd on a temporary Unix socket, publish a
# generated file with icnput, fetch it with icncat, compare checksums.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB="${SIZE_MB:-50}"
cargo build --release -p icn-forwarder --bin icnfwd -p icn-consumer --bin icncat --bin icnput
BIN="${CARGO_TARGET_DIR:-target}/release"
TMP="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
cat > "$TMP/icnfwd.toml" <<CONF
log_level = "warn"
[unix]
path = "$TMP/nfd.sock"
[udp]
enabled = false
[tcp]
enabled = false
CONF
"$BIN/icnfwd" -c "$TMP/icnfwd.toml" & PIDS+=($!)
for _ in $(seq 100); do [ -S "$TMP/nfd.sock" ] && break; sleep 0.05; done
export NDN_CLIENT_TRANSPORT="unix://$TMP/nfd.sock"
head -c "$((SIZE_MB * 1000000))" /dev/urandom > "$TMP/in.bin"
"$BIN/icnput" /demo/file "$TMP/in.bin" & PIDS+=($!)
sleep 0.5
"$BIN/icncat" /demo/file -o "$TMP/out.bin" "$@"
A="$(sha256sum < "$TMP/in.bin" | cut -d' ' -f1)"
B="$(sha256sum < "$TMP/out.bin" | cut -d' ' -f1)"
echo "sha256 published: $A"
echo "sha256 fetched:   $B"
[ "$A" = "$B" ] && echo "OK: identical" || { echo "MISMATCH"; exit 1; }
