"""Sinks of sluice's own, for Pipeline.sink."""

import sluice._sluice


def collector() -> sluice._sluice.Collector:
    """Keeps every message: .results() after the run."""

def npy_files(directory: str) -> sluice._sluice.Sink:
    """
    Each message's tensors as .npy files in directory, each message once across restores.
    """

def zmq(endpoint: str) -> sluice._sluice.Sink:
    """Each message sent on a reliable ZeroMQ channel, then an end of stream."""
