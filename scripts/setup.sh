#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine lacks for building and testing attnlens.
# Idempotent: each step checks first and does nothing when its result is already there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
THIRD="$ROOT/.build/third_party"
XSIMD_VERSION="13.2.0-1"   # Debian 13's: the first Debian xsimd with a WebAssembly backend

log() { printf '[setup] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Debian packages: compilers (libclang-rt: libFuzzer and the sanitizers), Emscripten, doctest,
#    Chromium for browser tests, and named fonts so that screenshot baselines match anywhere;
#    LLVM 19 compiles the relaxed-SIMD wasm build (Emscripten 3.1.6's clang 14 knows only the
#    draft relaxed opcodes).
APT_PACKAGES=(cmake ninja-build g++ clang libclang-rt-14-dev python3 emscripten doctest-dev chromium
              fonts-dejavu-core fonts-liberation clang-19 lld-19 llvm-19)
# The notebook test (tests/browser/notebook.test.js) executes a notebook headless with nbconvert.
APT_PACKAGES+=(jupyter-nbconvert jupyter-notebook python3-ipykernel)
# The cross-engine suite (tests/browser/engines.test.js): Firefox ESR (driven over WebDriver BiDi by
# puppeteer-core) and WebKitGTK (WebKitWebDriver + MiniBrowser, which needs an X display: xvfb-run).
APT_PACKAGES+=(firefox-esr webkit2gtk-driver xvfb xauth)
# zopfli compresses the wasm inlined in the single file (scripts/build-single.mjs), ~1.7 KB smaller.
APT_PACKAGES+=(zopfli)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# 2. xsimd with a WebAssembly backend: unpack Debian 13's header-only package into the build tree
#    (never system-wide). A throwaway apt configuration points at the trixie suite of the same
#    mirror this machine's apt already uses.
if [ ! -f "$THIRD/xsimd/usr/include/xsimd/xsimd.hpp" ]; then
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '/^(URIs:|deb )/' | grep -oE '(https?|file)://[^ ]*/debian/?' | grep -v security | sed -n 1p || true)"
  [ -n "$mirror" ] || { log "cannot find a Debian mirror in /etc/apt/sources*"; exit 1; }
  log "fetching libxsimd-dev $XSIMD_VERSION from the trixie suite of $mirror"
  tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/lists/partial" "$tmp/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} trixie main" > "$tmp/sources.list"
  opts=(-o Dir::Etc::sourcelist="$tmp/sources.list" -o Dir::Etc::sourceparts=/dev/null
        -o Dir::State::Lists="$tmp/lists" -o Dir::Cache::Archives="$tmp/archives" -o APT::Get::List-Cleanup=0)
  apt-get "${opts[@]}" update -q >/dev/null 2>&1
  (cd "$tmp" && apt-get "${opts[@]}" download "libxsimd-dev=$XSIMD_VERSION" >/dev/null 2>&1)
  rm -rf "$THIRD/xsimd"; mkdir -p "$THIRD/xsimd"
  dpkg-deb -x "$tmp"/libxsimd-dev_*.deb "$THIRD/xsimd"
  test -f "$THIRD/xsimd/usr/include/xsimd/arch/xsimd_wasm.hpp"
fi

# 3. npm packages (dev tools: playwright-core, puppeteer-core and axe-core for the browser tests,
#    TF.js reference, peers for the benchmark).
stamp="$ROOT/node_modules/.package-lock.json"
# Exact versions are pinned in package.json; no lockfile (.npmrc), to keep the top level small.
if [ ! -f "$stamp" ] || [ "$ROOT/package.json" -nt "$stamp" ]; then
  log "installing npm packages"
  (cd "$ROOT" && npm install --no-audit --no-fund) >&2
  touch "$stamp"
fi
