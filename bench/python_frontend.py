"""What calling sluice from Python costs, with the package installed
(`pip install ./python`; tests/python's venv has it after `make test`):
  py_dispatch_add4  a jitted add of four f32[4] tensors called and its first
                    element read, float(f(a, b, c, d)[0]), against numpy's
                    a + b + c + d then float(r[0]): ratio numpy / sluice, goal >= 0.5
  py_stream_chunk   a stream's send + recv of a tiny chunk from Python (the
                    step of bench/stream.cpp's stream_chunk_overhead), in us:
                    compare with that row's sluice time, the same from C++.
Not yet rows of `make bench`: run by hand, e.g.
  build/tests/python/venv/bin/python bench/python_frontend.py
"""
import timeit

import numpy as np

import sluice


def best(fn, calls=100000, repeat=7):
    return min(timeit.repeat(fn, number=calls, repeat=repeat)) / calls


def dispatch_add4():
    f = sluice.jit(lambda a, b, c, d: a + b + c + d)
    arrays = [np.arange(4, dtype=np.float32) + i for i in range(4)]
    tensors = [sluice.asarray(a) for a in arrays]
    assert float(f(*tensors)[0]) == float(sum(arrays)[0])

    def via_sluice():
        return float(f(*tensors)[0])

    def via_numpy():
        a, b, c, d = arrays
        r = a + b + c + d
        return float(r[0])
    return best(via_sluice), best(via_numpy)


def stream_chunk():
    s = sluice.jit(lambda x, acc: (x + acc, acc + 1)).stream(np.zeros(4, np.float32))
    chunk = sluice.asarray(np.array([1, 2, 3, 4], np.float32))

    def step():
        s.send(chunk)
        return s.recv()[0]
    t = best(step, calls=20000)
    return t


if __name__ == "__main__":
    ours, numpy = dispatch_add4()
    print(f"py_dispatch_add4  sluice {ours * 1e6:.3f} us  numpy {numpy * 1e6:.3f} us  ratio {numpy / ours:.3f}x"
          "  goal >= 0.5")
    print(f"py_stream_chunk   {stream_chunk() * 1e6:.3f} us a chunk from Python")
