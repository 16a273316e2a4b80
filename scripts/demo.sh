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
# icnfwd sends READY=1 to $NOTIFY_SOCKET once faces, routes and its Unix
# socket are up; a small python3 listener relays it (bash cannot bind a
# datagram socket). All waits are bounded and end on the event itself.
coproc NOTIFY { python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
s.settimeout(30)
while "READY=1" not in s.recv(4096).decode().split("\n"):
    pass
print("READY=1", flush=True)
' "$TMP/notify"; }
PIDS+=("$NOTIFY_PID")
# Keep our own copy of its stdout: bash drops NOTIFY[] when the coproc exits.
exec 4<&"${NOTIFY[0]}"
read -r -t 10 line <&4 && [ "$line" = bound ] || { echo "notify listener failed" >&2; exit 1; }
NOTIFY_SOCKET="$TMP/notify" "$BIN/icnfwd" -c "$TMP/icnfwd.toml" & PIDS+=($!)
read -r -t 30 line <&4 && [ "$line" = READY=1 ] || { echo "icnfwd not ready" >&2; exit 1; }
export NDN_CLIENT_TRANSPORT="unix://$TMP/nfd.sock"
head -c "$((SIZE_MB * 1000000))" /dev/urandom > "$TMP/in.bin"
# icnput prints "Published ..." on stderr once rib/register got its 200.
mkfifo "$TMP/icnput.err"
"$BIN/icnput" /demo/file "$TMP/in.bin" 2> "$TMP/icnput.err" & PIDS+=($!)
exec 3< "$TMP/icnput.err"
published=""
while read -r -t 30 line <&3; do
  echo "$line" >&2
  case "$line" in Published*) published=1; break ;; esac
done
[ -n "$published" ] || { echo "icnput did not register" >&2; exit 1; }
cat <&3 >&2 & PIDS+=($!)
"$BIN/icncat" /demo/file -o "$TMP/out.bin" "$@"
A="$(sha256sum < "$TMP/in.bin" | cut -d' ' -f1)"
B="$(sha256sum < "$TMP/out.bin" | cut -d' ' -f1)"
echo "sha256 published: $A"
echo "sha256 fetched:   $B"
[ "$A" = "$B" ] && echo "OK: identical" || { echo "MISMATCH"; exit 1; }
