#!/usr/bin/env bash
# cachewise developer entry point. Everything a fresh Debian machine needs, in one place:
#   scripts/dev.sh demo   set up, build, and run `advisor suggest --pattern transpose --n 4096`
#   scripts/dev.sh test   set up, build, and run the whole test suite (what .ci/run calls)
#   scripts/dev.sh setup  only install missing Debian packages (idempotent, quiet when all is there)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
# libopenmpi-dev and openmpi-bin are optional for a build (without them `advisor tune --mpi`
# says so); installed here so the tests run tune --mpi under mpirun.
packages=(cmake ninja-build g++ git nlohmann-json3-dev libboost-graph-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev clang-format-14
  libopenmpi-dev openmpi-bin)

log() { printf '== %s\n' "$*" >&2; }

setup() {
  local missing=()
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
  done
  if ((${#missing[@]})); then
    log "installing missing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  # The CUDA Toolkit (nvcc, CUPTI) is NVIDIA's, not Debian's: use it when present.
  if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export CUDACXX=/usr/local/cuda/bin/nvcc
  fi
}

cuda_flag() {
  if command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ]; then
    echo "-DCACHEWISE_WITH_CUDA=ON"
  else
    log "no nvcc found: building without the GPU components (probe, kernels, cupti)"
    echo "-DCACHEWISE_WITH_CUDA=OFF"
  fi
}

# configure_and_build SOURCE_DIR BUILD_DIR [cmake args...]
configure_and_build() {
  local source=$1 dir=$2
  shift 2
  cmake -S "$source" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

demo() {
  setup
  log "building cachewise (Release) in build/"
  configure_and_build "$root" "$root/build" "$(cuda_flag)" -DCACHEWISE_BUILD_BENCHMARKS=OFF -DCACHEWISE_BUILD_TESTS=OFF
  log "advisor suggest --pattern transpose --n 4096"
  "$root/build/bin/advisor" suggest --pattern transpose --n 4096
}

test_all() {
  setup
  local cuda
  cuda=$(cuda_flag)
  log "1/5 Release build with tests and benchmarks (build/)"
  configure_and_build "$root" "$root/build" "$cuda" -DCACHEWISE_BUILD_TESTS=ON -DCACHEWISE_BUILD_BENCHMARKS=ON
  log "1/5 tests (gpu-labelled tests skip without a GPU)"
  (cd "$root/build" && set -o pipefail && ctest --output-on-failure -j"$jobs" | tee "$root/build/ctest.log")

  log "2/5 packages: the Debian package (cpack, unpacked with dpkg-deb) and the build tree, each used by examples/"
  # cpack installs the already-built tree into its staging folder: no compilation.
  local package_dir="$root/build/package" deb_root="$root/build/deb-root"
  rm -rf "$package_dir" "$deb_root"
  (cd "$root/build" && cpack -G DEB -B "$package_dir" >/dev/null)
  local debs=("$package_dir"/cachewise_*.deb)
  dpkg-deb -x "${debs[0]}" "$deb_root"
  for file in usr/bin/advisor usr/share/cachewise/profiles/h200.json usr/include/cachewise/advisor.hpp; do
    [ -e "$deb_root/$file" ] || { log "the Debian package lacks /$file"; exit 1; }
  done
  for example in "$root"/examples/*/CMakeLists.txt; do
    local dir name
    dir=$(dirname "$example")
    name=$(basename "$dir")
    log "   examples/$name against $(basename "${debs[0]}") unpacked in build/deb-root"
    rm -rf "$root/build/examples/$name"
    configure_and_build "$dir" "$root/build/examples/$name" -DCMAKE_PREFIX_PATH="$deb_root/usr"
    if [ -x "$root/build/examples/$name/$name" ]; then "$root/build/examples/$name/$name"; fi
  done
  log "   examples/quickstart against the build tree (CMAKE_PREFIX_PATH=build)"
  rm -rf "$root/build/examples/quickstart-build-tree"
  configure_and_build "$root/examples/quickstart" "$root/build/examples/quickstart-build-tree" -DCMAKE_PREFIX_PATH="$root/build"
  "$root/build/examples/quickstart-build-tree/quickstart"

  # Also the build without MPI: its `tune --mpi` says so (and Open MPI's allocations stay out of LeakSanitizer).
  log "3/5 CPU components under AddressSanitizer + UndefinedBehaviorSanitizer, without MPI (build-asan/)"
  configure_and_build "$root" "$root/build-asan" -DCACHEWISE_WITH_CUDA=OFF -DCACHEWISE_MPI=OFF -DCACHEWISE_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCACHEWISE_BUILD_BENCHMARKS=OFF -DCACHEWISE_BUILD_TESTS=ON
  (cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs")

  fuzz_smoke

  log "5/5 summary of the Release tests (step 1)"
  sed -n '/tests passed/,$p' "$root/build/ctest.log"
}

# A short run of every libFuzzer target (docs/fuzzing.md; the long run is documented there):
# 10 s each from a fresh corpus at a fixed seed, in build-fuzz/ (clang, no CUDA). Skipped where
# clang++ cannot link a libFuzzer target.
fuzz_smoke() {
  if ! command -v clang++ >/dev/null ||
    ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    log "4/5 fuzz targets skipped: no clang++ with libFuzzer"
    return 0
  fi
  log "4/5 fuzz targets, 10 s each at -seed=1 (build-fuzz/)"
  cmake -S "$root" -B "$root/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DCACHEWISE_WITH_CUDA=OFF \
    -DCACHEWISE_FUZZ=ON -DCACHEWISE_BUILD_TESTS=OFF -DCACHEWISE_BUILD_BENCHMARKS=OFF >/dev/null
  local targets=(profile pattern expression spec ptx extract)
  cmake --build "$root/build-fuzz" -j"$jobs" --target "${targets[@]/#/fuzz_}"
  local seeds="$root/build-fuzz/fuzz/seeds/ptx"
  cmake --build "$root/build-fuzz" --target fuzz_ptx_seeds >/dev/null 2>&1 || log "   no nvcc: the PTX targets start without seeds"
  mkdir -p "$seeds"
  local target dict max_len corpus
  for target in "${targets[@]}"; do
    case $target in
    profile | pattern | spec) dict=$target max_len=16384 ;;
    expression) dict=expression max_len=512 ;;
    ptx | extract) dict=ptx max_len=65536 ;;
    esac
    corpus="$root/build-fuzz/ci-corpus/$target"
    rm -rf "$corpus" && mkdir -p "$corpus"
    local inputs=("$corpus")
    case $target in
    profile) inputs+=("$root/examples/profiles") ;;
    pattern) inputs+=("$root/examples/patterns") ;;
    spec) inputs+=("$root/examples/kernels") ;;
    ptx | extract) inputs+=("$seeds") ;;
    esac
    (cd "$root/build-fuzz" && "./fuzz/fuzz_$target" -seed=1 -max_total_time=10 -timeout=30 -rss_limit_mb=4096 -max_len=$max_len \
      -dict="$root/fuzz/$dict.dict" "${inputs[@]}" 2>"$root/build-fuzz/fuzz_$target.log") ||
      { tail -40 "$root/build-fuzz/fuzz_$target.log" >&2; exit 1; }
  done
}

case "${1:-}" in
setup) setup ;;
demo) demo ;;
test) test_all ;;
*)
  echo "usage: scripts/dev.sh demo|test|setup" >&2
  exit 2
  ;;
esac
