"""The sensor monitor's two compiled stages (stages.cpp) written in Python:
the same functions of a chunk and an accumulator, traced by sluice from
Python and compiled as the C++ ones are, giving the same features and fault
scores (tests/python checks them against stages.cpp's, chunk by chunk).

    vibration ──> spectrum ──────────────> detector ──────────────> scores
    C x 1024      Hann, FFT, log band       logistic regression
    per window    energies, normalised      one Adam step a chunk
                  acc: running mean/var     acc: weights, bias, Adam's state

    python3 samples/sensor_monitor/stages.py SIGNALS.npy LABELS.npy

runs a pipeline built from Python over chunks saved as numpy arrays (signal
f32[chunks][W][C][N], labels f32[chunks][W]) and prints the detector's
accuracy over the second half of the chunks.
"""
import sys
from dataclasses import dataclass

import numpy as np

import sluice


@dataclass
class Config:
    channels: int = 8            # sensors on the machine
    window: int = 1024           # samples per channel per window (one FFT frame)
    bands: int = 32              # frequency bands per channel
    windows_per_chunk: int = 16  # windows per message
    learning_rate: float = 0.05  # of the detector's Adam steps


def hann(n):
    """The periodic Hann window, the usual taper before a spectrum."""
    return sluice.constant((0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32))


def spectrum_acc(c):
    """count f32[], mean f32[C][bands], m2 f32[C][bands] (Chan's parallel variance), all zero."""
    return (np.float32(0), np.zeros((c.channels, c.bands), np.float32), np.zeros((c.channels, c.bands), np.float32))


def spectrum(c):
    """(signal[W][C][N], labels, born, count, mean, m2) -> (features[W][C * B], labels, born, count, mean, m2):
    the log energy of each of B equal frequency bands of each channel's window,
    normalised by the running mean and variance of every window seen so far."""
    w, n, b = c.windows_per_chunk, c.window, c.bands

    def step(signal, labels, born, count, mean, m2):
        spectrum = sluice.fft(signal * hann(n))  # c64[W][C][N]
        power = sluice.real(spectrum) * sluice.real(spectrum) + sluice.imag(spectrum) * sluice.imag(spectrum)
        # A real signal's spectrum is symmetric: keep bins 0 .. N/2 - 1, then B bands of them.
        half = sluice.slice(power, [0, 0, 0], [w, c.channels, n // 2])
        band_power = sluice.sum(sluice.reshape(half, [w, c.channels, b, n // 2 // b]), axes=[3])
        energy = sluice.log(band_power + 1e-6)  # [W][C][B]

        # Chan et al.'s merge of this chunk's mean and squared deviations into the running ones.
        chunk_mean = sluice.sum(energy, axes=[0]) / float(w)
        deviation = energy - chunk_mean
        chunk_m2 = sluice.sum(deviation * deviation, axes=[0])
        total = count + float(w)
        delta = chunk_mean - mean
        new_mean = mean + delta * (float(w) / total)
        new_m2 = m2 + chunk_m2 + delta * delta * (count * float(w) / total)

        z = (energy - new_mean) * sluice.rsqrt(new_m2 / total + 1e-6)
        features = sluice.reshape(z, [w, c.channels * b])
        return features, labels, born, total, new_mean, new_m2
    return step


def detector_optimizer(c):
    return sluice.optimizers.adam(c.learning_rate)


def detector_acc(c):
    """The detector's weights and bias, then Adam's state for them, all zero."""
    weights, bias = np.zeros(c.channels * c.bands, np.float32), np.float32(0)
    adam = detector_optimizer(c)
    return (weights, bias, *sluice.jit(lambda w, b: adam.init([w, b]))(weights, bias))


def detector(c):
    """(features[W][F], labels, born, weights[F], bias, adam state...) -> (scores[W], labels, born, weights,
    bias, adam state...): logistic regression. Scores the chunk with the weights as they are, then takes
    one Adam step on the mean log loss of the chunk's labels, its gradient by value_and_grad."""
    loss = sluice.value_and_grad(
        lambda x, y, w, b: sluice.nn.mean(sluice.nn.sigmoid_cross_entropy(sluice.dot(x, w) + b, y)), argnums=[2, 3])
    adam = detector_optimizer(c)

    def step(x, labels, born, weights, bias, *state):
        scores = sluice.sigmoid(sluice.dot(x, weights) + bias)  # [W]
        _, dw, db = loss(x, labels, weights, bias)
        (new_weights, new_bias), new_state = adam.update([weights, bias], [dw, db], state)
        return (scores, labels, born, new_weights, new_bias, *new_state)
    return step


def pipeline(chunks, c, on_scores, on_features=None):
    """chunks (signal, labels, born) -> spectrum -> detector -> on_scores(scores, labels, born), and
    on_features(features, labels, born) for what spectrum makes, when given."""
    p = sluice.Pipeline()
    source = p.source("vibration", chunks)
    spectrum_stage = p.stage("spectrum", spectrum(c), acc=spectrum_acc(c))
    detector_stage = p.stage("detector", detector(c), acc=detector_acc(c))
    p.connect(source, spectrum_stage)
    p.connect(spectrum_stage, detector_stage)
    p.connect(detector_stage, p.sink("monitor", on_scores))
    if on_features:
        p.connect(spectrum_stage, p.sink("features", on_features))
    return p


def main(signals_path, labels_path):
    signals, labels = np.load(signals_path), np.load(labels_path)
    c = Config(channels=signals.shape[2], window=signals.shape[3], windows_per_chunk=signals.shape[1])
    chunks = [(signals[i], labels[i], np.int64(i)) for i in range(len(signals))]
    correct = []

    def score(scores, chunk_labels, born):
        correct.append(((scores > 0.5) == (chunk_labels > 0.5)).mean())
    pipeline(chunks, c, score).run()
    half = correct[len(correct) // 2:]
    print(f"{len(correct)} chunks; accuracy over the second half: {np.mean(half):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
