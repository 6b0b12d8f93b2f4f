"""Sources of sluice's own, for Pipeline.source."""

import sluice._sluice


def zmq(endpoint: str, spec: object, expected_peers: int = 1) -> sluice._sluice.Source:
    """
    Messages of these specs received on a reliable ZeroMQ channel ("@ipc://..." binds, ">tcp://..." connects), until each peer's end of stream.
    """

def npy_file(path: str, batch_size: int, leftover: str = 'discard') -> sluice._sluice.Source:
    """
    The rows of a .npy file in batches of batch_size (the last partial one dropped, or wrapped around with leftover="repeat"); it replays after a restore.
    """
