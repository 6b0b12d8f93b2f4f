"""The published update rules of sgd, momentum, adam and adamw (optax's forms) in numpy,
on loss(x, y) = (x - 3)^2 + 10 (y + 1)^2 from (0, 0): prints (x, y) after each of 5 steps,
as stored in optimizers_test.cpp."""
import numpy as np


def grads(p):
    return np.array([2 * (p[0] - 3), 20 * (p[1] + 1)])


def sgd(lr):
    def step(p, s, t):
        return p - lr * grads(p), s
    return step, None


def momentum(lr, beta):
    def step(p, v, t):
        v = beta * v + grads(p)
        return p - lr * v, v
    return step, np.zeros(2)


def adam(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    def step(p, s, t):
        m, v = s
        g = grads(p)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        return p - lr * (m_hat / (np.sqrt(v_hat) + eps) + wd * p), (m, v)
    return step, (np.zeros(2), np.zeros(2))


for name, (step, state) in {"sgd": sgd(0.05), "momentum": momentum(0.05, 0.9), "adam": adam(0.1),
                            "adamw": adam(0.1, wd=0.01)}.items():
    p = np.zeros(2)
    rows = []
    for t in range(1, 6):
        p, state = step(p, state, t)
        rows.append("{%.17g, %.17g}" % (p[0], p[1]))
    print(f'{{"{name}", {{{", ".join(rows)}}}}},')
