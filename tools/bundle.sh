#!/usr/bin/env bash
# Makes a relocatable kq install for a GPU host that lacks the development packages:
#   DEST/bin/kq, DEST/bin/plugins/*.so, DEST/lib/<the non-system runtime libraries>
# with $ORIGIN rpaths, so `DEST/bin/kq run SPEC` works wherever DEST is copied. The CUDA
# libraries (runtime, driver, cuDNN, NVRTC, CUPTI) are not copied: the host's own are used.
# usage: tools/bundle.sh BUILD_DIR DEST
set -euo pipefail
build=${1:?usage: tools/bundle.sh BUILD_DIR DEST}
dest=${2:?usage: tools/bundle.sh BUILD_DIR DEST}
rm -rf "$dest"
cmake --install "$build" --prefix "$dest" --strip >/dev/null
mkdir -p "$dest/lib"
# Libraries a GPU host may lack; everything else (glibc, libstdc++, CUDA) is the host's.
keep='libboost_|libyaml-cpp|libtbb|libtbbmalloc|libcrypto|libssl'
for f in "$dest/bin/kq" "$dest"/bin/plugins/*.so; do
  ldd "$f" | awk '/=> \//{print $3}' | grep -E "/($keep)" || true
done | sort -u | while read -r lib; do
  cp -L "$lib" "$dest/lib/"
done
cp -r specs "$dest/specs"
echo "bundle: $dest ($(du -sh "$dest" | cut -f1)); run $dest/bin/kq run $dest/specs/residual_relu.yaml"
