#!/usr/bin/env bash
# Rebuilds the shipped modules, byte for byte reproducibly for a given toolchain:
#   build.sh          builds them, copies each to <name>/<name>.wasm beside its source and
#                     records the toolchain in TOOLCHAIN
#   build.sh --check  builds them in a temporary directory and compares with the committed
#                     files (exit 1 on a difference); skips without the wasm32 target or with a
#                     toolchain other than TOOLCHAIN's, which would build other bytes anyway
set -euo pipefail

target=wasm32-unknown-unknown
names=(image-classification fmnist imagenet-vgg yolo-letterbox)
modules_dir=$(cd "$(dirname "$0")" && pwd -P)
wasm_preprocess_dir=$(dirname "$modules_dir")

case "${1:-}" in
    "") mode=build ;;
    --check) mode=check ;;
    *) echo "usage: $0 [--check]" >&2 && exit 2 ;;
esac

sysroot=$(rustc --print sysroot 2>/dev/null || true)
if [ -z "$sysroot" ] || [ ! -d "$sysroot/lib/rustlib/$target/lib" ]; then
    if [ "$mode" = check ]; then
        echo "skipped: $target not installed"
        exit 0
    fi
    echo "error: $target not installed (rustup target add $target)" >&2
    exit 1
fi

toolchain=$(rustc --version)
if [ "$mode" = check ]; then
    committed_toolchain=$(cat "$modules_dir/TOOLCHAIN")
    if [ "$toolchain" != "$committed_toolchain" ]; then
        echo "skipped: the committed modules were built by $committed_toolchain, this is $toolchain"
        exit 0
    fi
    target_dir=$(mktemp -d)
    trap 'rm -rf "$target_dir"' EXIT
else
    target_dir=$modules_dir/target
fi

# Only these flags, whatever the environment says: paths in the binary then name sources
# relative to wasm-preprocess/ wherever the checkout is, and link.sh drops rustc's extra exports.
unset RUSTFLAGS CARGO_BUILD_RUSTFLAGS CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS
while read -r variable; do unset "$variable"; done < <(compgen -e | grep '^CARGO_PROFILE_' || true)
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$wasm_preprocess_dir=wasm-preprocess"
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=$modules_dir/link.sh
export MLPERF_RUST_LLD="$sysroot/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld"

cargo build --quiet --release --locked --target "$target" --target-dir "$target_dir" \
    --manifest-path "$modules_dir/Cargo.toml"

status=0
for name in "${names[@]}"; do
    built=$target_dir/$target/release/mlperf_preprocess_${name//-/_}.wasm
    committed=$modules_dir/$name/$name.wasm
    if grep -q -a -e __heap_base -e __data_end "$built"; then
        echo "error: $name exports more than the ABI (link.sh did not take effect)" >&2
        exit 1
    fi
    if [ "$mode" = build ]; then
        install -m 644 "$built" "$committed"
        echo "$name: $(wc -c <"$committed") bytes, sha256 $(sha256sum "$committed" | cut -d' ' -f1)"
    elif cmp -s "$built" "$committed"; then
        echo "$name: matches its source"
    else
        echo "$name: $committed differs from what its source builds (run $0)" >&2
        status=1
    fi
done
if [ "$mode" = build ]; then
    echo "$toolchain" >"$modules_dir/TOOLCHAIN"
fi
exit $status
