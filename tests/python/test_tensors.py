"""Tensors and numpy: shared memory both ways where the layout allows,
read-only views, DLPack and the buffer protocol, dtypes by every name."""
import numpy as np
import pytest

import sluice


def test_asarray_shares_a_contiguous_arrays_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = sluice.asarray(a)
    assert t.shape == (3, 4) and t.dtype == sluice.f32
    assert np.shares_memory(np.asarray(t), a)
    a[0, 0] = 42.0  # the tensor wraps the array: no copy was made
    assert np.asarray(t)[0, 0] == 42.0


def test_asarray_copies_what_it_cannot_share():
    a = np.arange(12, dtype=np.float64).reshape(3, 4).T  # not C-contiguous
    t = sluice.asarray(a)
    assert not np.shares_memory(np.asarray(t), a)
    np.testing.assert_array_equal(np.asarray(t), a)
    t2 = sluice.asarray([[1, 2], [3, 4]], dtype="f32")
    assert t2.dtype == sluice.f32 and np.asarray(t2).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_numpy_views_are_read_only_and_copy_is_writable():
    t = sluice.asarray(np.ones(4, np.float32))
    view = np.asarray(t)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 2.0
    copy = np.array(t)
    copy[0] = 2.0
    assert np.asarray(t)[0] == 1.0


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                   "uint64", "float16", "float32", "float64", "complex64", "complex128"])
def test_every_numpy_dtype_round_trips(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    t = sluice.asarray(a)
    assert t.dtype.numpy_name == dtype
    back = np.asarray(t)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)


def test_dlpack_and_buffer_protocol():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = sluice.asarray(a)
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    m = memoryview(t)
    assert m.shape == (2, 3) and m.format == "i" and m.readonly
    back = sluice.from_dlpack(a)
    assert np.shares_memory(np.asarray(back), a)


def test_dtype_names():
    assert sluice.dtype("float32") == sluice.f32 == sluice.dtype("f32") == sluice.dtype(np.float32)
    assert sluice.dtype(np.dtype("<c16")) == sluice.c128
    with pytest.raises(sluice.TypeError, match="dtype"):
        sluice.dtype("f33")


def test_reading_elements():
    t = sluice.asarray(np.array([1.5, 2.5, 3.5], np.float32))
    assert t[0] == 1.5 and t[-1] == 3.5 and len(t) == 3
    with pytest.raises(IndexError):
        t[3]
    assert float(sluice.asarray(np.float64(2.0))) == 2.0
    assert t.tolist() == [1.5, 2.5, 3.5]
