"""sluice from Python: write a computation once as a function of symbolic
tensors, compile it for a CPU or a GPU, and run it over a stream of chunks.

    import numpy as np, sluice
    f = sluice.jit(lambda x, w: sluice.tanh(x @ w))
    y = f(np.ones((4, 3), np.float32), np.ones((3, 2), np.float32))   # a sluice.Tensor
    np.asarray(y)                                                       # a view, no copy

Tracing, compiling and running are sluice's C++ (the _sluice extension);
Python describes the computation and drives it. Every op of the catalogue
is a function here with Nx's name (sluice.catalogue() lists them), Exprs
have Python's operators, and errors are sluice.Error subclasses.
"""

# sluice's version, project() in CMakeLists.txt (tests/python keeps the two the same).
__version__ = "0.1.0"

try:
    from ._sluice import *  # noqa: F401,F403  the ops, Tensor, Expr, jit, ...
    from ._sluice import nn, optimizers, random, sinks, sources  # noqa: F401  submodules
except ImportError as missing:
    # The package's source folder on PYTHONPATH, not installed: sluice.wire
    # (numpy and pyzmq alone) works; the rest says what is missing.
    _extension_missing = missing

    def __getattr__(name):
        if name == "wire":  # `from sluice import wire` asks here before it imports the submodule
            import importlib
            return importlib.import_module(".wire", __name__)
        raise ImportError(f"sluice.{name} needs the sluice extension, which is not built here "
                          f"(pip install ./python builds it): {_extension_missing}")
