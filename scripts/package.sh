#!/usr/bin/env bash
# Builds the icnfwd .deb (cargo-deb) and checks that it lists the three
# binaries, the systemd unit, the conffile and the man pages, and that the
# packaged binaries run against the packaged config.
#
#   scripts/package.sh                # release build -> target/debian/icnfwd_<version>_<arch>.deb
#   scripts/package.sh --profile dev  # the same package from the dev build (CI) -> target/debian/dev/
#
# `--profile dev` packages the debug binaries `cargo test --workspace`
# already built, so CI checks the packaging without a second (release)
# build of the world; that .deb is for the check, not for installing
# (cargo-deb 3.8 warns that it is not meant for dev builds). CARGO_DEB may
# name the cargo-deb binary to use (CI pins one); otherwise `cargo deb`,
# installed when missing (`cargo install cargo-deb --version
# $CARGO_DEB_VERSION --locked`, default 3.8.0). Respects CARGO_TARGET_DIR.
# Prints how long each step took.
set -euo pipefail

profile=release
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile="${2:?--profile needs dev or release}"; shift 2 ;;
        *) echo "usage: $0 [--profile dev|release]" >&2; exit 2 ;;
    esac
done
case "$profile" in
    release) build_flags=(--release); out_dir=release; deb_dir=debian ;;
    # Kept apart from the release package, so that one is never taken for the other.
    dev) build_flags=(); out_dir=debug; deb_dir=debian/dev ;;
    *) echo "--profile must be dev or release, not $profile" >&2; exit 2 ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
target="${CARGO_TARGET_DIR:-$root/target}"
# cargo-deb reads the assets' target/release/ paths from the profile's
# directory (target/debug/ for dev).
bin="$target/$out_dir"
assets="$bin/deb-assets"
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s so far)"; }

if [ -n "${CARGO_DEB:-}" ]; then
    cargo_deb=("$CARGO_DEB")
else
    cargo_deb=(cargo deb)
    if ! cargo deb --version >/dev/null 2>&1; then
        step "installing cargo-deb ${CARGO_DEB_VERSION:=3.8.0}"
        cargo install cargo-deb --version "$CARGO_DEB_VERSION" --locked
    fi
fi
"${cargo_deb[@]}" --version

step "$profile build of icnfwd, icncat, icnput"
cargo build "${build_flags[@]}" -p icn-forwarder -p icn-consumer --bins

step "man pages from the clap definitions, and the packaged unit"
rm -rf "$assets"
mkdir -p "$assets/man"
"$bin/icnfwd" generate-man "$assets/man"
"$bin/icncat" --generate-man "$assets/man"
"$bin/icnput" --generate-man "$assets/man"
gzip -9n "$assets"/man/*.1
# The .deb installs the binary in /usr/bin; the unit in configs/ names the
# from-source location, /usr/local/bin.
sed 's#/usr/local/bin/icnfwd#/usr/bin/icnfwd#g' configs/icnfwd.service >"$assets/icnfwd.service"
grep -q '^ExecStart=/usr/bin/icnfwd ' "$assets/icnfwd.service"

step "cargo deb"
mkdir -p "$target/$deb_dir"
deb="$("${cargo_deb[@]}" -p icn-forwarder --no-build --profile "$profile" --strip -o "$target/$deb_dir" | tail -n 1)"
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
