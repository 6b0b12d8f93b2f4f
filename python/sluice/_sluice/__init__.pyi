"""
sluice's C++ core: tensors, traced expressions, compiled functions and streams
"""

from collections.abc import Callable, Sequence
import enum
from typing import overload

from sluice import (
    CheckpointError as CheckpointError,
    ConfigError as ConfigError,
    DeviceError as DeviceError,
    Error as Error,
    InternalError as InternalError,
    PipelineError as PipelineError,
    ShapeError as ShapeError,
    StreamError as StreamError,
    TypeError as TypeError,
    ValueError as ValueError,
    WireError as WireError
)
from sluice._sluice import (
    nn as nn,
    optimizers as optimizers,
    random as random,
    sinks as sinks,
    sources as sources
)


class DType(enum.Enum):
    """A tensor's element type, by Nx's names."""

    def __str__(self) -> str: ...

    pred = 0

    s8 = 1

    s16 = 2

    s32 = 3

    s64 = 4

    u8 = 5

    u16 = 6

    u32 = 7

    u64 = 8

    f16 = 9

    bf16 = 10

    f32 = 11

    f64 = 12

    c64 = 13

    c128 = 14

    @property
    def name(self) -> str: ...

    @property
    def numpy_name(self) -> str: ...

    @property
    def bits(self) -> int: ...

pred: DType = DType.pred

s8: DType = DType.s8

s16: DType = DType.s16

s32: DType = DType.s32

s64: DType = DType.s64

u8: DType = DType.u8

u16: DType = DType.u16

u32: DType = DType.u32

u64: DType = DType.u64

f16: DType = DType.f16

bf16: DType = DType.bf16

f32: DType = DType.f32

f64: DType = DType.f64

c64: DType = DType.c64

c128: DType = DType.c128

def dtype(dtype: object) -> DType:
    """The DType named by a DType, its name, numpy's name, or a numpy dtype."""

def promote_types(a: DType, b: DType) -> DType:
    """The dtype a binary op of a and b computes in."""

class Spec:
    """
    A tensor's dtype and shape: what a function is traced and compiled for.
    """

    def __init__(self, shape: Sequence[int], dtype: object = DType.f32) -> None: ...

    @property
    def dtype(self) -> DType: ...

    @property
    def shape(self) -> tuple: ...

    def __eq__(self, arg: Spec, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

class Tensor:
    """
    A tensor on a device, computed or pending. np.asarray(t) views a host tensor's memory.
    """

    @property
    def dtype(self) -> DType: ...

    @property
    def shape(self) -> tuple: ...

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def spec(self) -> Spec: ...

    @property
    def device(self) -> str: ...

    def is_ready(self) -> bool:
        """Whether the tensor is computed."""

    def wait(self) -> None:
        """Waits until the tensor is computed."""

    def to_host(self) -> Tensor:
        """A copy in host memory (the tensor itself when it is there)."""

    def numpy(self) -> object:
        """A read-only numpy view of a host tensor's memory."""

    def __array__(self, dtype: object | None = None, copy: object | None = None) -> object: ...

    def __dlpack__(self, **kwargs) -> object: ...

    def __dlpack_device__(self) -> tuple: ...

    def __len__(self) -> int: ...

    def __getitem__(self, arg: object, /) -> object: ...

    def item(self) -> object: ...

    def tolist(self) -> object: ...

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

    def __bool__(self) -> bool: ...

    def __str__(self) -> str: ...

    def __repr__(self) -> str: ...

def asarray(a: object, dtype: object | None = None) -> Tensor:
    """
    A host Tensor of `a` (a Tensor, numpy array, DLPack or buffer object, list or number), sharing its memory when it is C-contiguous and of the dtype asked for.
    """

def from_dlpack(a: object) -> Tensor:
    """
    A host Tensor sharing the memory of a DLPack producer (read-only to sluice).
    """

def zeros(shape: Sequence[int], dtype: object = DType.f32) -> Tensor: ...

def ones(shape: Sequence[int], dtype: object = DType.f32) -> Tensor: ...

class Expr:
    """
    A symbolic tensor inside a traced function: ops build graphs of them, jit compiles them.
    """

    @property
    def dtype(self) -> DType: ...

    @property
    def shape(self) -> tuple: ...

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def spec(self) -> Spec: ...

    @property
    def T(self) -> Expr:
        """The axes reversed."""

    def astype(self, dtype: object) -> Expr: ...

    def reshape(self, shape: Sequence[int]) -> Expr: ...

    def sum(self, axes: Sequence[int] = [], keep_axes: bool = False) -> Expr: ...

    def __getitem__(self, arg: object, /) -> Expr: ...

    def __neg__(self) -> Expr: ...

    def __pos__(self) -> Expr: ...

    def __abs__(self) -> Expr: ...

    def __invert__(self) -> Expr: ...

    def __len__(self) -> int: ...

    def __bool__(self) -> bool: ...

    def __repr__(self) -> str: ...

    def __add__(self, arg: object, /) -> Expr: ...

    def __radd__(self, arg: object, /) -> Expr: ...

    def __sub__(self, arg: object, /) -> Expr: ...

    def __rsub__(self, arg: object, /) -> Expr: ...

    def __mul__(self, arg: object, /) -> Expr: ...

    def __rmul__(self, arg: object, /) -> Expr: ...

    def __truediv__(self, arg: object, /) -> Expr: ...

    def __rtruediv__(self, arg: object, /) -> Expr: ...

    def __floordiv__(self, arg: object, /) -> Expr: ...

    def __rfloordiv__(self, arg: object, /) -> Expr: ...

    def __mod__(self, arg: object, /) -> Expr: ...

    def __rmod__(self, arg: object, /) -> Expr: ...

    def __pow__(self, arg: object, /) -> Expr: ...

    def __rpow__(self, arg: object, /) -> Expr: ...

    def __matmul__(self, arg: object, /) -> Expr: ...

    def __rmatmul__(self, arg: object, /) -> Expr: ...

    def __and__(self, arg: object, /) -> Expr: ...

    def __rand__(self, arg: object, /) -> Expr: ...

    def __or__(self, arg: object, /) -> Expr: ...

    def __ror__(self, arg: object, /) -> Expr: ...

    def __xor__(self, arg: object, /) -> Expr: ...

    def __rxor__(self, arg: object, /) -> Expr: ...

    def __lshift__(self, arg: object, /) -> Expr: ...

    def __rlshift__(self, arg: object, /) -> Expr: ...

    def __rshift__(self, arg: object, /) -> Expr: ...

    def __rrshift__(self, arg: object, /) -> Expr: ...

    def __lt__(self, arg: object, /) -> Expr: ...

    def __le__(self, arg: object, /) -> Expr: ...

    def __gt__(self, arg: object, /) -> Expr: ...

    def __ge__(self, arg: object, /) -> Expr: ...

    def __eq__(self, arg: object, /) -> Expr: ...

    def __ne__(self, arg: object, /) -> Expr: ...

    def __hash__(self) -> int: ...

def negate(x: object) -> Expr: ...

def abs(x: object) -> Expr: ...

def sign(x: object) -> Expr: ...

def floor(x: object) -> Expr: ...

def ceil(x: object) -> Expr: ...

def round(x: object) -> Expr: ...

def exp(x: object) -> Expr: ...

def expm1(x: object) -> Expr: ...

def log(x: object) -> Expr: ...

def log1p(x: object) -> Expr: ...

def sqrt(x: object) -> Expr: ...

def rsqrt(x: object) -> Expr: ...

def cbrt(x: object) -> Expr: ...

def sin(x: object) -> Expr: ...

def cos(x: object) -> Expr: ...

def tan(x: object) -> Expr: ...

def asin(x: object) -> Expr: ...

def acos(x: object) -> Expr: ...

def atan(x: object) -> Expr: ...

def sinh(x: object) -> Expr: ...

def cosh(x: object) -> Expr: ...

def tanh(x: object) -> Expr: ...

def asinh(x: object) -> Expr: ...

def acosh(x: object) -> Expr: ...

def atanh(x: object) -> Expr: ...

def sigmoid(x: object) -> Expr: ...

def erf(x: object) -> Expr: ...

def erfc(x: object) -> Expr: ...

def erf_inv(x: object) -> Expr: ...

def is_nan(x: object) -> Expr: ...

def is_infinity(x: object) -> Expr: ...

def bitwise_not(x: object) -> Expr: ...

def count_leading_zeros(x: object) -> Expr: ...

def population_count(x: object) -> Expr: ...

def real(x: object) -> Expr: ...

def imag(x: object) -> Expr: ...

def conjugate(x: object) -> Expr: ...

def stop_gradient(x: object) -> Expr: ...

def add(a: object, b: object) -> Expr: ...

def subtract(a: object, b: object) -> Expr: ...

def multiply(a: object, b: object) -> Expr: ...

def divide(a: object, b: object) -> Expr: ...

def pow(a: object, b: object) -> Expr: ...

def remainder(a: object, b: object) -> Expr: ...

def quotient(a: object, b: object) -> Expr: ...

def atan2(a: object, b: object) -> Expr: ...

def min(a: object, b: object) -> Expr: ...

def max(a: object, b: object) -> Expr: ...

def bitwise_and(a: object, b: object) -> Expr: ...

def bitwise_or(a: object, b: object) -> Expr: ...

def bitwise_xor(a: object, b: object) -> Expr: ...

def left_shift(a: object, b: object) -> Expr: ...

def right_shift(a: object, b: object) -> Expr: ...

def equal(a: object, b: object) -> Expr: ...

def not_equal(a: object, b: object) -> Expr: ...

def less(a: object, b: object) -> Expr: ...

def less_equal(a: object, b: object) -> Expr: ...

def greater(a: object, b: object) -> Expr: ...

def greater_equal(a: object, b: object) -> Expr: ...

def logical_and(a: object, b: object) -> Expr: ...

def logical_or(a: object, b: object) -> Expr: ...

def logical_xor(a: object, b: object) -> Expr: ...

def catalogue() -> list[str]:
    """The name of every op of the catalogue (ops/op_list.def), in its order."""

def constant(value: object, dtype: object | None = None) -> Expr:
    """
    A constant of value's elements (anything numpy reads), as dtype when given.
    """

def iota(shape: Sequence[int], dtype: object = DType.s64, axis: int | None = None) -> Expr: ...

def eye(shape: Sequence[int], dtype: object = DType.f32) -> Expr: ...

def select(pred: object, on_true: object, on_false: object) -> Expr: ...

def clip(x: object, min: object, max: object) -> Expr: ...

def as_type(x: Expr, dtype: object) -> Expr: ...

def bitcast(x: Expr, dtype: object) -> Expr: ...

def reshape(x: Expr, shape: Sequence[int]) -> Expr: ...

def squeeze(x: Expr, axes: object | None = None) -> Expr: ...

def broadcast(x: Expr, shape: Sequence[int], axes: object | None = None) -> Expr: ...

def transpose(x: Expr, axes: object | None = None) -> Expr: ...

def pad(x: Expr, value: object, config: object) -> Expr: ...

def reverse(x: Expr, axes: object | None = None) -> Expr: ...

def slice(x: Expr, starts: object, lengths: Sequence[int], strides: Sequence[int] = []) -> Expr:
    """
    Static starts (integers) or dynamic ones (integer scalar Exprs, clamped so the slice fits).
    """

def put_slice(x: Expr, starts: object, update: object) -> Expr: ...

def concatenate(xs: object, axis: int = 0) -> Expr: ...

def stack(xs: object, axis: int = 0) -> Expr: ...

def sum(x: Expr, axes: object | None = None, keep_axes: bool = False) -> Expr: ...

def product(x: Expr, axes: object | None = None, keep_axes: bool = False) -> Expr: ...

def reduce_max(x: Expr, axes: object | None = None, keep_axes: bool = False) -> Expr: ...

def reduce_min(x: Expr, axes: object | None = None, keep_axes: bool = False) -> Expr: ...

def all(x: Expr, axes: object | None = None, keep_axes: bool = False) -> Expr: ...

def any(x: Expr, axes: object | None = None, keep_axes: bool = False) -> Expr: ...

def argmax(x: Expr, axis: int | None = None, keep_axis: bool = False, tie_break: str = 'low') -> Expr: ...

def argmin(x: Expr, axis: int | None = None, keep_axis: bool = False, tie_break: str = 'low') -> Expr: ...

@overload
def dot(a: object, b: object) -> Expr:
    """
    Matrix/vector product on the last axis of a and the first (or second to last) of b.
    """

@overload
def dot(a: Expr, contract_a: Sequence[int], batch_a: Sequence[int], b: Expr, contract_b: Sequence[int], batch_b: Sequence[int]) -> Expr:
    """Nx's dot/6: result axes are batch, then a's free, then b's free."""

def window_sum(x: Expr, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None) -> Expr: ...

def window_max(x: Expr, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None) -> Expr: ...

def window_min(x: Expr, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None) -> Expr: ...

def window_product(x: Expr, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None) -> Expr: ...

def window_scatter_max(x: Expr, source: object, init: object, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None) -> Expr: ...

def window_scatter_min(x: Expr, source: object, init: object, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None) -> Expr: ...

def cumulative_sum(x: Expr, axis: int = 0, reverse: bool = False) -> Expr: ...

def cumulative_product(x: Expr, axis: int = 0, reverse: bool = False) -> Expr: ...

def cumulative_max(x: Expr, axis: int = 0, reverse: bool = False) -> Expr: ...

def cumulative_min(x: Expr, axis: int = 0, reverse: bool = False) -> Expr: ...

def fft(x: Expr, length: int | None = None) -> Expr: ...

def ifft(x: Expr, length: int | None = None) -> Expr: ...

def take(x: Expr, indices: object, axis: int = 0) -> Expr: ...

def take_along_axis(x: Expr, indices: object, axis: int) -> Expr: ...

def gather(x: Expr, indices: object) -> Expr: ...

def indexed_add(x: Expr, indices: object, updates: object) -> Expr: ...

def indexed_put(x: Expr, indices: object, updates: object) -> Expr: ...

def sort(x: Expr, axis: int = 0, direction: str = 'asc', stable: bool = True, type: object = DType.s64) -> Expr: ...

def argsort(x: Expr, axis: int = 0, direction: str = 'asc', stable: bool = True, type: object = DType.s64) -> Expr: ...

def top_k(x: Expr, k: int) -> tuple:
    """The k largest along the last axis, largest first, and their indices."""

def conv(input: Expr, kernel: Expr, strides: Sequence[int] = [], padding: object = 'valid', input_dilation: Sequence[int] = [], kernel_dilation: Sequence[int] = [], feature_group_size: int = 1, batch_group_size: int = 1) -> Expr:
    """Nx.conv: padding "valid", "same" or (low, high) per spatial axis."""

def cholesky(a: Expr) -> Expr: ...

def solve(a: Expr, b: object) -> Expr: ...

def triangular_solve(a: Expr, b: object, left_side: bool = True, lower: bool = True, transform_a: str = 'none') -> Expr: ...

def qr(a: Expr, mode: str = 'reduced') -> tuple: ...

def lu(a: Expr) -> tuple:
    """p, l, u with a = p l u."""

def eigh(a: Expr) -> tuple:
    """Eigenvalues (ascending) and eigenvectors (columns) of a Hermitian a."""

class Function:
    """A traced computation: parameters' specs to output Exprs."""

    @property
    def inputs(self) -> list[Spec]: ...

    @property
    def outputs(self) -> list[Spec]: ...

    def __str__(self) -> str: ...

class Jitted:
    """A function traced and compiled per signature; see sluice.jit."""

    def __call__(self, *args) -> object: ...

    def trace(self, *args) -> Function:
        """
        The Function traced for these specs (or arrays of them), to read: str(f.trace(...)).
        """

    def stream(self, acc: object, max_pending: int = 64, discard_outputs: bool = False) -> Stream:
        """
        A Stream of this function over chunks: f(chunk..., acc...) returns (outputs..., new acc...).
        """

    @property
    def signatures(self) -> int:
        """How many signatures have been traced."""

def jit(fn: Callable, device: object | None = None) -> Jitted:
    """
    fn traced on its first call per signature (each argument's dtype and shape) and compiled for the device (default: sluice's default device), as jax.jit. fn takes Exprs and returns an Expr or a tuple of them.
    """

def grad(fn: Callable, argnums: object = 0, device: object | None = None) -> Jitted:
    """
    The gradient of fn's first output (a real scalar) with respect to the arguments argnums names.
    """

def value_and_grad(fn: Callable, argnums: object = 0, device: object | None = None) -> Jitted:
    """fn's outputs, then the gradients grad computes."""

def scan(f: Callable, init: object, xs: object | None = None, length: int | None = None, reverse: bool = False) -> tuple:
    """
    lax.scan: f(carry, x) -> (carry, y) over the rows of xs (or `length` steps without xs); returns (final carry, ys stacked).
    """

def while_loop(cond: Callable, body: Callable, init: object) -> object:
    """lax.while_loop: body(carry) while cond(carry), a pred scalar."""

def fori_loop(lower: int, upper: int, body: Callable, init: object) -> object:
    """lax.fori_loop: body(i, carry) for i in [lower, upper)."""

def reduce(x: Expr, init: object, fn: Callable, axes: object | None = None, keep_axes: bool = False) -> Expr:
    """
    Nx's reduce: fn(acc, element), associative and commutative, folds each output's elements from init.
    """

def window_reduce(x: Expr, init: object, fn: Callable, window: Sequence[int], strides: Sequence[int] = [], padding: object | None = None, window_dilations: Sequence[int] = []) -> Expr:
    """Nx's window_reduce: fn over each window of x, from init."""

def block(name: "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >", fallback: Callable, *args) -> object:
    """
    A named op with a traced fallback (Nx's block): a backend's native kernel for the name, or fallback.
    """

class Stream:
    """
    A compiled function run chunk by chunk with an accumulator: send / recv / done.
    """

    def send(self, chunk: object) -> None:
        """
        Enqueues a chunk (a tensor, or a tuple of them) and returns without waiting for it; blocks while max_pending outputs wait unreceived.
        """

    def recv(self) -> object:
        """The outputs of the oldest unreceived chunk, waiting for them."""

    def done(self) -> object:
        """Waits for every chunk sent; returns the final accumulator."""

    @property
    def sent(self) -> int: ...

    @property
    def received(self) -> int: ...

class Batches:
    """Batches of a tensor's rows, made as they are read."""

    def __len__(self) -> int: ...

    @property
    def batch_size(self) -> int: ...

    def __getitem__(self, arg: int, /) -> Tensor: ...

def to_batched(tensor: object, batch_size: int, leftover: str = 'repeat') -> Batches:
    """
    Batches of batch_size rows along axis 0; a last partial batch wraps around (repeat) or goes (discard).
    """

class Chunk:
    """
    A source's item with its tags: Chunk(arrays, tags), arrays an array or a tuple of them, tags a dict {key: value} for the whole chunk or {(key, row): value} at a row; values int, float, str or a small array. time_ns and sample_rate say when each row was sampled (zip_by_time, event_window).
    """

    def __init__(self, arrays: object, tags: object | None = None) -> None: ...

    @property
    def arrays(self) -> object: ...

    @property
    def tags(self) -> dict: ...

class Source:
    """Where a pipeline's messages come from (sluice.sources)."""

class Sink:
    """Where a pipeline's messages end (sluice.sinks)."""

class Collector(Sink):
    """A sink keeping every message, in arrival order."""

    def results(self) -> list:
        """Each message's tensors, as tuples."""

    def tags(self) -> list:
        """
        Each message's tags, as dicts {(key, offset): value} (offset -1: the whole message).
        """

class Node:
    """A node of a pipeline, as source, stage and sink return it."""

    @property
    def index(self) -> int: ...

class Placement:
    """Which processes run a partitioned pipeline, and where they meet."""

    @property
    def processes(self) -> list[str]: ...

def placement(given: str = '') -> Placement | None:
    """
    A placement from a file path or its text; given empty, from SLUICE_PLACEMENT; None without either.
    """

def local_placement(processes: Sequence[str], dir: str) -> Placement:
    """Every process on this host, over ipc sockets in dir."""

def role(placement: Placement, given: str = '') -> str | None:
    """
    This process's name in the placement: `given`, or the launcher's rank (mpirun, srun), or None.
    """

class Pipeline:
    """
    Compiled stages as nodes of a flow graph, fed by sources, drained by sinks.
    """

    def __init__(self, *, capacity: int = 64, on_error: str = 'stop', checkpoint_dir: str = '', checkpoint_every: int = 0, checkpoint_every_s: float = 0.0, checkpoint_retain: int = 3, at_most_once: Sequence[str] = [], process: str = '', placement: Placement | None = None, name: str = '', metrics_port: int = 0, run_log: str = '', trace: str = '', trace_max_events: int = 1048576) -> None: ...

    def source(self, name: str, data: object, *, process: str = '') -> Node:
        """
        A source of data's items (arrays, or tuples of them; a sequence replays after a restore), or a sluice.sources source.
        """

    def stage(self, name: str, fn: Callable, *, acc: object | None = None, input: object | None = None, device: str = 'host', concurrency: int = 1, ordered: bool = True, batch_size: int = 0, batch_timeout_s: float = 0.001, process: str = '') -> Node:
        """
        fn(message tensors..., acc...) -> (outputs..., new acc...), traced when the run starts and compiled.
        """

    def sink(self, name: str, fn: object, *, process: str = '', tags: bool = False) -> Node:
        """
        fn(*arrays) for each message, with read-only numpy views, the GIL held only inside it (tags=True: fn(*arrays, tags=dict), the message's tags as sluice.Chunk takes them); or a sluice.sinks sink.
        """

    def zip_by_time(self, name: str, *, tolerance_s: float = 0.0, lateness_s: float = 0.1, late: Sink | None = None, idle_s: float = 0.0, process: str = '') -> Node:
        """
        Aligns 2 to 4 streams by their rows' times (tags time_ns and sample_rate): the first input's rows, then each other input's nearest sample within tolerance_s and a bool mask of which matched. Late chunks go to `late` (a sluice.sinks sink), or are counted and logged. idle_s > 0: a stream that brought nothing for that long (wall clock) is waited for no longer.
        """

    def event_window(self, name: str, *, rows: int, every_rows: int = 0, length_s: float = 0.0, every_s: float = 0.0, late: Sink | None = None, idle_s: float = 0.0, process: str = '') -> Node:
        """
        Windows of one stream: `rows` rows every `every_rows` (length_s 0), or by time, [start, start + length_s) every every_s, zero-padded to `rows` rows with the count after. By time, idle_s > 0 emits the windows holding rows once the stream brought nothing for that long (wall clock).
        """

    def connect(self, source: Node, to: Node) -> None: ...

    def run(self) -> dict:
        """
        Runs until the sources end and everything drained; returns the accumulators and metrics.
        """

    def start(self) -> None: ...

    def wait(self) -> dict: ...

    def cancel(self) -> None: ...

    def restore(self, dir: str = '') -> tuple:
        """
        Loads the newest complete checkpoint: (its number or 0, what was skipped and why).
        """

    def to_dot(self) -> str:
        """
        The graph as DOT: nodes, the specs on each edge, each process a box (stages traced, not run).
        """

    def to_mermaid(self) -> str:
        """The graph as Mermaid's flowchart."""

    def metrics_json(self) -> str: ...

    def metrics_prometheus(self) -> str: ...

    @property
    def metrics_port(self) -> int: ...
