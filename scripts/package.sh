#!/usr/bin/env bash
# Builds the icnfwd .deb (cargo-deb) and checks that it lists the three
# binaries, the systemd unit, the conffile and the man pages, and that the
# packaged binaries run against the packaged config; exits non-zero if not.
#
#   scripts/package.sh            # -> target/debian/icnfwd_<version>_<arch>.deb
#
# The release build is the one the namespace testbed makes
# (crates/lab/src/real/bins.rs: the same `cargo build --release --bins -p
# icn-forwarder -p icn-consumer`), so after `cargo test --workspace` as
# root it is already done. Installs cargo-deb when it is missing (`cargo
# install cargo-deb --version $CARGO_DEB_VERSION --locked`, default
# 3.8.0). Respects CARGO_TARGET_DIR. Prints how long each step took.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
assets="$target/release/deb-assets"
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s so far)"; }

if ! cargo deb --version >/dev/null 2>&1; then
    step "installing cargo-deb ${CARGO_DEB_VERSION:=3.8.0}"
    cargo install cargo-deb --version "$CARGO_DEB_VERSION" --locked
fi
cargo deb --version

step "release build of icnfwd, icncat, icnput"
cargo build --release -p icn-forwarder -p icn-consumer --bins

step "man pages from the clap definitions, and the packaged unit"
rm -rf "$assets"
mkdir -p "$assets/man"
"$target/release/icnfwd" generate-man "$assets/man"
"$target/release/icncat" --generate-man "$assets/man"
"$target/release/icnput" --generate-man "$assets/man"
gzip -9n "$assets"/man/*.1
# The .deb installs the binary in /usr/bin; the unit in configs/ names the
# from-source location, /usr/local/bin.
sed 's#/usr/local/bin/icnfwd#/usr/bin/icnfwd#g' configs/icnfwd.service >"$assets/icnfwd.service"
grep -q '^ExecStart=/usr/bin/icnfwd ' "$assets/icnfwd.service"

step "cargo deb"
deb="$(cargo deb -p icn-forwarder --no-build --strip | tail -n 1)"
echo "$deb"

step "checking the contents list"
listing="$(dpkg -c "$deb")"
missing=0
for path in \
    ./usr/bin/icnfwd ./usr/bin/icncat ./usr/bin/icnput \
    ./lib/systemd/system/icnfwd.service \
    ./etc/icnfwd/icnfwd.toml \
    ./usr/share/man/man1/icnfwd.1.gz ./usr/share/man/man1/icnfwd-route-add.1.gz \
    ./usr/share/man/man1/icncat.1.gz ./usr/share/man/man1/icnput.1.gz; do
    if ! grep -q " $path\$" <<<"$listing"; then
        echo "MISSING from the package: $path" >&2
        missing=1
    fi
done
ctrl="$(mktemp -d)"
dpkg-deb -e "$deb" "$ctrl"
if ! grep -qx /etc/icnfwd/icnfwd.toml "$ctrl/conffiles" 2>/dev/null; then
    echo "NOT a conffile: /etc/icnfwd/icnfwd.toml" >&2
    missing=1
fi
rm -rf "$ctrl"
[ "$missing" = 0 ] || exit 1
echo "$listing"

step "running the packaged binaries against the packaged config"
tree="$(mktemp -d)"
dpkg-deb -x "$deb" "$tree"
"$tree/usr/bin/icnfwd" --version
"$tree/usr/bin/icnfwd" --config "$tree/etc/icnfwd/icnfwd.toml" check-config
"$tree/usr/bin/icncat" --version
"$tree/usr/bin/icnput" --version
grep -q '^ExecStart=/usr/bin/icnfwd --config /etc/icnfwd/icnfwd.toml$' "$tree/lib/systemd/system/icnfwd.service"
rm -rf "$tree"
dpkg-deb -f "$deb" Package Version Architecture Depends
step "done: $deb"
