#!/usr/bin/env bash
# Installs the Debian 12 packages portent builds and runs with, when any is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config git llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev
      libhwloc-dev libcjson-dev libpfm4-dev libxgboost-dev libopenblas-dev libdnnl-dev
      zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev valgrind)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Optional: PyTorch, with which cli_tlp_torch reads the TLP weights file (scripts/tlp_torch_check.py);
# that test skips without it, so a failed install here does not stop the build.
if ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q 'install ok installed'; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "installing (optional): python3-torch"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-torch; } ||
    echo "python3-torch not installed: the PyTorch check of the weights file will skip"
fi
