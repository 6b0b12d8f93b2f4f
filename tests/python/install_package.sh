#!/usr/bin/env bash
# python_install: `pip install ./python` into a fresh venv that also sees
# Debian's python3 packages (numpy, pytest, and the build tools that
# scripts/install-deps --tests installs), linking the sluice installed at PREFIX.
# Usage: install_package.sh SOURCE_DIR VENV PREFIX BUILD_DIR
set -euo pipefail
source_dir=$1 venv=$2 prefix=$3 build_dir=$4
for module in nanobind scikit_build_core pytest numpy; do
  /usr/bin/python3 -c "import $module" 2>/dev/null || {
    echo "python_install: Debian's python3 lacks $module: run scripts/install-deps --tests" >&2
    exit 1
  }
done
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --no-build-isolation --no-deps --no-index \
  --config-settings=build-dir="$build_dir" \
  --config-settings=cmake.define.CMAKE_PREFIX_PATH="$prefix" \
  "$source_dir/python"
"$venv/bin/python" -c "import sluice; print('python_install: sluice', sluice.__version__, 'from', sluice.__file__)"
