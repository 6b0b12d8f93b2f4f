"""jit, grad and value_and_grad against numpy, traced per signature; Expr's
operators and indexing; errors as sluice.Error subclasses at the user's line."""
import traceback

import numpy as np
import pytest

import sluice

rng = np.random.default_rng(7)


def test_jit_runs_a_traced_function():
    f = sluice.jit(lambda x, w, b: sluice.tanh(x @ w + b))
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(8, 5), (5, 3), (3,)])
    np.testing.assert_allclose(np.asarray(f(x, w, b)), np.tanh(x @ w + b), rtol=1e-5, atol=1e-6)
    assert f.signatures == 1
    f(x[:4], w, b)  # a new shape traces once more
    f(x[:4], w, b)
    assert f.signatures == 2


def test_operators_and_indexing():
    f = sluice.jit(lambda x, y: (x + 1, 2 - x, x * y, x / y, -x, abs(x), x ** 2, x > y, x[1:, ::2].T, x[-1],
                                 x[..., 0], (x @ y.T).shape == (3, 3)))
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32) + 3
    out = f(x, y)
    want = [x + 1, 2 - x, x * y, x / y, -x, abs(x), x ** 2, x > y, x[1:, ::2].T, x[-1], x[..., 0]]
    for got, expected in zip(out, want):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
    assert bool(out[-1])


def test_ops_with_options_match_numpy():
    x = rng.standard_normal((4, 6)).astype(np.float64)
    f = sluice.jit(lambda x: (sluice.sum(x, axes=[1]), sluice.reduce_max(x, axes=0, keep_axes=True),
                              sluice.argmax(x, axis=1), sluice.cumulative_sum(x, axis=1),
                              sluice.sort(x, axis=1, direction="desc"), sluice.transpose(x),
                              sluice.concatenate([x, x], axis=0), sluice.window_sum(x, [2, 3]),
                              sluice.take(x, np.array([3, 0]), axis=0), sluice.fft(x)))
    s, m, a, c, srt, t, cat, win, tk, ft = f(x)
    np.testing.assert_allclose(np.asarray(s), x.sum(1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(m), x.max(0, keepdims=True))
    np.testing.assert_array_equal(np.asarray(a), x.argmax(1))
    np.testing.assert_allclose(np.asarray(c), np.cumsum(x, 1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(srt), -np.sort(-x, 1))
    np.testing.assert_allclose(np.asarray(t), x.T)
    np.testing.assert_allclose(np.asarray(cat), np.concatenate([x, x]))
    windows = np.lib.stride_tricks.sliding_window_view(x, (2, 3)).sum(axis=(2, 3))
    np.testing.assert_allclose(np.asarray(win), windows, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tk), x[[3, 0]])
    np.testing.assert_allclose(np.asarray(ft), np.fft.fft(x), rtol=1e-10, atol=1e-12)


def test_linear_algebra():
    a = rng.standard_normal((4, 4))
    spd = a @ a.T + 4 * np.eye(4)
    b = rng.standard_normal(4)
    chol, x, (q, r) = sluice.jit(lambda m, v: (sluice.cholesky(m), sluice.solve(m, v), sluice.qr(m)))(spd, b)
    np.testing.assert_allclose(np.asarray(chol), np.linalg.cholesky(spd), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(spd, b), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), spd, rtol=1e-10)


def test_grad_and_value_and_grad():
    def loss(w, x):
        return sluice.sum((x @ w) ** 2)
    w = rng.standard_normal((3, 2))
    x = rng.standard_normal((5, 3))
    np.testing.assert_allclose(np.asarray(sluice.grad(loss)(w, x)), 2 * x.T @ (x @ w), rtol=1e-12)
    value, dw, dx = sluice.value_and_grad(loss, argnums=[0, 1])(w, x)
    np.testing.assert_allclose(float(value), ((x @ w) ** 2).sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(dx), 2 * (x @ w) @ w.T, rtol=1e-12)


def test_transformed_functions_compose_inside_jit():
    dloss = sluice.grad(lambda w, x: sluice.sum(sluice.sin(x * w)))
    step = sluice.jit(lambda w, x: w - 0.1 * dloss(w, x))
    w, x = np.float64(0.5), np.arange(3.0)
    np.testing.assert_allclose(float(step(w, x)), 0.5 - 0.1 * (x * np.cos(x * 0.5)).sum(), rtol=1e-12)


def test_loops():
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    carry, ys = sluice.jit(lambda xs: sluice.scan(lambda c, x: (c + x, c * 2), xs[0] * 0, xs))(xs)
    np.testing.assert_array_equal(np.asarray(carry), xs.sum(0))
    np.testing.assert_array_equal(np.asarray(ys), 2 * np.concatenate([[[0, 0]], np.cumsum(xs, 0)[:-1]]))
    i, p = sluice.jit(lambda i: sluice.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2), (i, i)))(
        np.int32(1))
    assert int(i) == 10 and int(p) == 512
    total = sluice.jit(lambda x: sluice.fori_loop(0, 5, lambda i, c: c + sluice.as_type(i, sluice.f32), x))(
        np.float32(0))
    assert float(total) == 10.0
    norms = sluice.jit(lambda x: sluice.reduce(x, 0.0, lambda a, e: sluice.sqrt(a * a + e * e), axes=[1]))(
        np.full((2, 9), 2.0, np.float32))
    np.testing.assert_allclose(np.asarray(norms), [6.0, 6.0], rtol=1e-6)


def test_nn_random_and_optimizers():
    x = rng.standard_normal((2, 5)).astype(np.float32)
    sm = sluice.jit(lambda x: sluice.nn.softmax(x))(x)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(sm), e / e.sum(1, keepdims=True), rtol=1e-6)
    # jax.random.uniform(jax.random.PRNGKey(0), (3,)) under JAX's threefry (its stored values in tests/ops).
    u = np.asarray(sluice.jit(lambda: sluice.random.uniform(sluice.random.key(0), [3]))())
    assert u.shape == (3,) and ((0 <= u) & (u < 1)).all()
    opt = sluice.optimizers.adam(0.1)

    def step(w):
        g = sluice.grad(lambda v: sluice.sum(v * v))(w)
        state = opt.init([w])
        (new_w,), _ = opt.update([w], [g], state)
        return new_w
    w = np.array([1.0, -2.0], np.float32)
    np.testing.assert_allclose(np.asarray(sluice.jit(step)(w)), w - 0.1 * np.sign(w), rtol=1e-5)


def test_errors_name_the_problem_at_the_users_line():
    def model(x):
        return x + sluice.reshape(x, [5])  # the line the error points at
    with pytest.raises(sluice.ShapeError, match=r"reshape.*expected a shape of 4 elements") as caught:
        sluice.jit(model)(np.ones(4, np.float32))
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, sluice.Error)
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert any(f.name == "model" and "the line the error points at" in f.line for f in frames)
    with pytest.raises(sluice.TypeError, match="bitwise_and"):
        sluice.jit(lambda x: x & x)(np.ones(2, np.float32))
    with pytest.raises(sluice.TypeError, match="bool"):
        sluice.jit(lambda x: x if x > 0 else -x)(np.float32(1))
    with pytest.raises(sluice.ValueError, match="direction"):
        sluice.jit(lambda x: sluice.sort(x, direction="up"))(np.ones(2))
