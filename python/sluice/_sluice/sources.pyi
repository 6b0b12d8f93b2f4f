"""Sources of sluice's own, for Pipeline.source."""

import sluice._sluice


def zmq(endpoint: str, spec: object, expected_peers: int = 1) -> sluice._sluice.Source:
    """
    Messages of these specs received on a reliable ZeroMQ channel ("@ipc://..." binds, ">tcp://..." connects), until each peer's end of stream.
    """
