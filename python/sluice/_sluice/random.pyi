"""Counter-based random numbers, as jax.random."""

from collections.abc import Sequence

import sluice._sluice


def key(seed: int) -> sluice._sluice.Expr:
    """The key of a seed, as jax.random.PRNGKey: u32[2]."""

def split(key: sluice._sluice.Expr, num: int = 2) -> sluice._sluice.Expr: ...

def key_at(keys: sluice._sluice.Expr, i: int) -> sluice._sluice.Expr: ...

def uniform(key: sluice._sluice.Expr, shape: Sequence[int] = [], dtype: object = sluice._sluice.DType.f32, minval: float = 0.0, maxval: float = 1.0) -> sluice._sluice.Expr: ...

def normal(key: sluice._sluice.Expr, shape: Sequence[int] = [], dtype: object = sluice._sluice.DType.f32, mean: float = 0.0, std: float = 1.0) -> sluice._sluice.Expr: ...
