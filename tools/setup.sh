#!/usr/bin/env bash
# Installs what building and testing Weft needs. Idempotent and quiet when
# everything is already there; safe to run any number of times.
#   Debian packages: Bazel (offline bootstrap build), protobuf/gRPC compilers
#   and libraries, Abseil, Eigen, GoogleTest, Google Benchmark, nlohmann-json.
#   PyPI (tests only): tensorflow-cpu 2.21.0 as a reference peer, numpy;
#   matplotlib for weft compare's pictures.
set -euo pipefail

DEBIAN_PACKAGES=(
  bazel-bootstrap
  g++
  pkg-config
  protobuf-compiler
  protobuf-compiler-grpc
  libprotobuf-dev
  libgrpc++-dev
  libre2-dev
  zlib1g-dev
  libpng-dev
  libjpeg62-turbo-dev
  libgif-dev
  libabsl-dev
  libeigen3-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  nlohmann-json3-dev
)
TF_VERSION=2.21.0

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ "${WEFT_SKIP_PYTHON:-0}" != 1 ]; then
  if ! "$PYTHON" - "$TF_VERSION" 2>/dev/null <<'PY'
import sys
import numpy, tensorflow
sys.exit(0 if tensorflow.__version__ == sys.argv[1] else 1)
PY
  then
    echo "setup: installing tensorflow-cpu==$TF_VERSION and numpy (test peers)"
    "$PYTHON" -m pip install -q --disable-pip-version-check \
      "tensorflow-cpu==$TF_VERSION" numpy 2>&1 | grep -v "as the 'root' user" || true
  fi
  # weft compare draws its pictures with matplotlib.
  if ! "$PYTHON" -c "import matplotlib" 2>/dev/null; then
    echo "setup: installing matplotlib (weft compare's pictures)"
    "$PYTHON" -m pip install -q --disable-pip-version-check matplotlib 2>&1 |
      grep -v "as the 'root' user" || true
  fi
  # TensorBoard's own event reader checks the event files weft train writes.
  if ! "$PYTHON" -c "import tensorboard" 2>/dev/null; then
    echo "setup: installing tensorboard (test peer)"
    "$PYTHON" -m pip install -q --disable-pip-version-check "tensorboard~=2.21.0" 2>&1 |
      grep -v "as the 'root' user" || true
  fi
fi

# The digits data set for `weft train --data digits` (graph/models/
# datasets.h): scikit-learn's bundled copy, exported once.
DATA_DIR=${WEFT_DATA_DIR:-$HOME/.cache/weft/data}
if [ "${WEFT_SKIP_PYTHON:-0}" != 1 ] && [ ! -s "$DATA_DIR/digits.bin" ]; then
  if ! "$PYTHON" -c "import sklearn" 2>/dev/null; then
    echo "setup: installing scikit-learn (for the digits data set)"
    "$PYTHON" -m pip install -q --disable-pip-version-check scikit-learn 2>&1 |
      grep -v "as the 'root' user" || true
  fi
  "$PYTHON" "$(dirname "$0")/export_digits.py" "$DATA_DIR/digits.bin"
fi
