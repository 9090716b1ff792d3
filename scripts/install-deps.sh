#!/usr/bin/env bash
# Installs what forgek needs to build and test on Debian/Ubuntu; safe to run again (installs only what is missing).
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
          libsqlite3-dev libcurl4-openssl-dev libssl-dev libgtest-dev libgmock-dev libcpp-httplib-dev
          python3      # python3: the dependency check (scripts/check-deps.py, standard library only)
          python3-torch)  # PyTorch (CPU) for `forgek ops import` and its helper (scripts/forgek_torch_helper.py)
# The ci preset (CI=true scripts/dev.sh test): clang with libFuzzer and the sanitizers.
if [[ "${FORGEK_SANITIZE_DEPS:-}" == "1" ]]; then
  packages+=(clang libclang-rt-14-dev)
fi
# The tests (scripts/dev.sh test): the HTML report is rendered in headless Chromium
# (tests/report/report_browser_test.cc). Debian packages it; elsewhere that test skips, said here.
if [[ "${FORGEK_TEST_DEPS:-}" == "1" ]]; then
  if grep -qx 'ID=debian' /etc/os-release 2>/dev/null; then
    packages+=(chromium-headless-shell)
  elif ! command -v chromium-headless-shell >/dev/null && ! command -v chromium >/dev/null; then
    echo "install-deps: no chromium-headless-shell package outside Debian: the browser test of the HTML report will skip" >&2
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda_root=${FORGEK_CUDA_ROOT:-/usr/local/cuda}
for f in bin/nvcc include/nvrtc.h include/cupti.h include/cublasLt.h include/cudnn.h; do
  if [[ ! -e "$cuda_root/$f" ]]; then
    echo "install-deps: the CUDA toolkit is incomplete: $cuda_root/$f is missing" >&2
    echo "install-deps: install CUDA 13 (with CUPTI and cuDNN) under $cuda_root or set FORGEK_CUDA_ROOT" >&2
    exit 1
  fi
done
echo "install-deps: all dependencies present" >&2
