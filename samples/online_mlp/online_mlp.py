"""online_mlp.py: main.cpp's MLP, trained online from a stream of batches,
built from Python: the same pipeline (batches -> train -> progress), the
same model and Adam step traced from Python functions, the same output.

    python3 samples/online_mlp/online_mlp.py --features X.npy --labels Y.npy --classes 3

Every batch is scored with the weights as they are, then one Adam step is
taken on it (value_and_grad of the mean softmax cross-entropy). The data is
--features X.npy (f32[N][D]) and --labels Y.npy (integers [N]), cut into
batches and streamed --epochs times; the initial weights are Glorot-uniform
draws of numpy's generator seeded with --seed, or --params DIR's w1.npy b1.npy
w2.npy b2.npy w3.npy b3.npy (then the losses are main.cpp's, tests/python).
Exits 0 when the mean accuracy over the last tenth of the batches reaches
--min-accuracy.
"""
import argparse
import os
import sys

import numpy as np

import sluice


def logits_of(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h1 = sluice.nn.relu(x @ w1 + b1)
    h2 = sluice.nn.relu(h1 @ w2 + b2)
    return h2 @ w3 + b3


def initial_params(dims, hidden, classes, seed):
    rng = np.random.default_rng(seed)
    params = []
    sizes = [dims, hidden, hidden, classes]
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        scale = np.sqrt(6.0 / (fan_in + fan_out))
        params += [(rng.uniform(-1, 1, (fan_in, fan_out)) * scale).astype(np.float32), np.zeros(fan_out, np.float32)]
    return params


def load_params(directory, dims, hidden, classes):
    sizes = [dims, hidden, hidden, classes]
    params = []
    for layer in range(3):
        for kind, shape in (("w", (sizes[layer], sizes[layer + 1])), ("b", (sizes[layer + 1],))):
            path = os.path.join(directory, f"{kind}{layer + 1}.npy")
            value = np.load(path)
            if value.shape != shape or value.dtype != np.float32:
                raise SystemExit(f"online_mlp: --params {path}: expected f32{list(shape)}, found {value.dtype}{list(value.shape)}")
            params.append(value)
    return params


def training_step(classes, adam):
    """(x, labels, params..., adam state...) -> (loss, accuracy, params..., state...)."""
    def loss(x, labels, *params):
        return sluice.nn.mean(sluice.nn.softmax_cross_entropy(logits_of(params, x), sluice.nn.one_hot(labels, classes)))
    loss_and_grads = sluice.value_and_grad(loss, argnums=[2, 3, 4, 5, 6, 7])

    def step(x, labels, *acc):
        params, state = acc[:6], acc[6:]
        value, *grads = loss_and_grads(x, labels, *params)
        predicted = sluice.argmax(logits_of(params, x), axis=1)
        accuracy = sluice.nn.mean(sluice.as_type(predicted == labels, sluice.f32))
        new_params, new_state = adam.update(params, grads, state)
        return (value, accuracy, *new_params, *new_state)
    return step


def pipeline(batches, params, classes, rate, progress):
    """batches -> train -> progress: each batch (x, labels) scored and
    learned from by the stage, whose accumulator is the parameters and
    Adam's state; progress(loss, accuracy) for each."""
    adam = sluice.optimizers.adam(rate)
    state = sluice.jit(lambda *p: adam.init(p))(*params)
    p = sluice.Pipeline()
    source = p.source("batches", batches)
    train = p.stage("train", training_step(classes, adam), acc=(*params, *state))
    sink = p.sink("progress", progress)
    p.connect(source, train)
    p.connect(train, sink)
    return p


def main():
    parser = argparse.ArgumentParser(description="online_mlp: an MLP trained online from a stream of batches")
    parser.add_argument("--features", required=True, help="f32[N][D] .npy file")
    parser.add_argument("--labels", required=True, help="integer [N] .npy file of class indices")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rate", type=float, default=3e-3)
    parser.add_argument("--min-accuracy", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--params", help="directory of w1.npy b1.npy ... b3.npy, the initial weights")
    parser.add_argument("--report-every", type=int, default=50)
    o = parser.parse_args()

    x = np.load(o.features)
    y = np.load(o.labels)
    if x.dtype != np.float32 or x.ndim != 2:
        raise SystemExit(f"online_mlp: --features {o.features}: expected f32[N][D], found {x.dtype}{list(x.shape)}")
    if y.ndim != 1 or y.shape[0] != x.shape[0] or not np.issubdtype(y.dtype, np.integer):
        raise SystemExit(f"online_mlp: --labels {o.labels}: expected integers [{x.shape[0]}], found {y.dtype}{list(y.shape)}")
    xs, ys = sluice.to_batched(x, o.batch), sluice.to_batched(y.astype(np.int64), o.batch)
    batches = [(xs[i % len(xs)], ys[i % len(ys)]) for i in range(len(xs) * o.epochs)]

    dims = x.shape[1]
    params = load_params(o.params, dims, o.hidden, o.classes) if o.params else initial_params(
        dims, o.hidden, o.classes, o.seed)
    accuracy = []

    def progress(loss, acc, *_):
        accuracy.append(float(acc))
        n = len(accuracy)
        if n % o.report_every == 0 or n == len(batches):
            print(f"batch {n}: loss {float(loss):.7g}, accuracy {float(acc):.7g}")
    pipeline(batches, params, o.classes, o.rate, progress).run()

    tail = max(1, len(accuracy) // 10)
    mean = float(np.mean(accuracy[-tail:]))
    print(f"accuracy over the last {tail} batches, each before its step: {mean:.6g}")
    return 0 if mean >= o.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main())
