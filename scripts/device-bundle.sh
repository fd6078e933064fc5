#!/usr/bin/env bash
# Packs a portent that runs on an x86-64 Linux machine without portent's packages (the
# device machine of docs/validation.md: no LLVM, no network): LLVM linked statically
# (PORTENT_STATIC_LLVM, build folder build-dev), every other shared library it loads, and
# glibc's own as a fallback for a machine whose glibc is older than this one's.
#
#   scripts/device-bundle.sh [OUT.tar.xz]        (default .dev/portent.tar.xz)
#   BUNDLE_TESTS="microbench_test_gpu ..."      ctest programs to carry beside portent (bin/)
#
# There: mkdir -p /tmp/pd && tar -xJf portent.tar.xz -C /tmp/pd && /tmp/pd/run portent ...
# `run` uses the machine's glibc when portent starts with it, and the carried one otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.dev/portent.tar.xz}
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DPORTENT_STATIC_LLVM=ON >/dev/null
tests=${BUNDLE_TESTS:-}
cmake --build build-dev -j"$(nproc)" --target portent $tests >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/glibc"
strip -o "$stage/bin/portent" build-dev/portent
for t in $tests; do
  strip -o "$stage/bin/$t" "$(find build-dev/tests -type f -name "$t" | head -1)"
done
ldd build-dev/portent $(for t in $tests; do find build-dev/tests -type f -name "$t" | head -1; done) | awk '$3 ~ /^\// { print $1, $3 } $1 ~ /^\// { print $1, $1 }' |
  while read -r name path; do
    case "$name" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|*/ld-linux*)
        cp -L "$path" "$stage/glibc/$(basename "$name")" ;;
      *) cp -L "$path" "$stage/lib/$name" ;;
    esac
  done
cat >"$stage/run" <<'RUN'
#!/usr/bin/env bash
# run PROGRAM ARGS...: PROGRAM from bin/, with the carried libraries
here=$(cd "$(dirname "$0")" && pwd)
prog=$here/bin/$1
shift
if LD_LIBRARY_PATH=$here/lib "$here/bin/portent" --version >/dev/null 2>&1; then
  LD_LIBRARY_PATH=$here/lib exec "$prog" "$@"
fi
exec "$here/glibc/ld-linux-x86-64.so.2" --library-path "$here/lib:$here/glibc" "$prog" "$@"
RUN
chmod +x "$stage/run"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - . | xz -T"$(nproc)" -6 >"$out.tmp"
mv "$out.tmp" "$out"
echo "device-bundle: $out, $(du -h "$out" | cut -f1)" >&2
