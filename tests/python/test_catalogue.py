"""Every op of the catalogue (ops/op_list.def) is a function of the sluice
package, and the catalogue the package reports is op_list.def's own list."""
import os
import re

import sluice

# Ops a user never writes: jit makes parameters, multi-result ops make results.
INTERNAL = {"parameter", "result"}


def catalogue_from_source():
    with open(os.path.join(os.environ["SLUICE_SOURCE_DIR"], "ops", "op_list.def")) as f:
        text = f.read()
    return re.findall(r"^SLUICE_(?:UNARY_|BINARY_)?OP\(\w+,\s*(\w+),", text, re.M)


def test_catalogue_is_op_list_def():
    assert sluice.catalogue() == catalogue_from_source()


def test_every_op_is_a_function():
    missing = [name for name in sluice.catalogue() if name not in INTERNAL and not callable(getattr(sluice, name, None))]
    assert missing == []


def test_version_is_the_projects():
    with open(os.path.join(os.environ["SLUICE_SOURCE_DIR"], "CMakeLists.txt")) as f:
        version = re.search(r"project\(sluice\s+VERSION\s+([0-9.]+)", f.read()).group(1)
    assert sluice.__version__ == version
