"""The CRF's recursions as Triton kernels: one launch per recursion, the loop over positions inside it.

:mod:`eer_plugin.core.fused` imports this module when the fused path first runs and holds the arithmetic
around the kernels. ``triton.jit`` compiles them for CUDA devices, or under ``TRITON_INTERPRET=1`` (set
before Triton is first imported: Triton takes its mode for the whole process then) runs them in Triton's
interpreter on CPU tensors, which is how the tests check them without a GPU. One program runs one row of the batch in one direction (grid
``(rows, 2)``); a step is a ``BK x BK`` tile (``K`` tags padded to a power of two) in registers:

* :func:`forward_backward` writes ``alpha_i(b) = phi_i(b) + log sum_a exp(alpha_{i-1}(a) + T(a, b))``
  (``alpha_0 = phi_0 + start``) for direction 0 and ``beta_i(a) = log sum_b exp(T(a, b) + phi_{i+1}(b) +
  beta_{i+1}(b))`` (``beta_{L-1} = end``) for direction 1: the definitions of
  :mod:`eer_plugin.core.forward_backward`, each ``logsumexp`` exact (shifted by its maximum).
* :func:`conditional_sums` writes, for upstream gradients ``G``, ``H_j(l) = G_j(l) + sum_a P(y_{j-1} = a |
  y_j = l) H_{j-1}(a)`` (direction 0) and ``Rt_j(l) = G_j(l) + sum_b P(y_{j+1} = b | y_j = l) Rt_{j+1}(b)``
  (direction 1), with the conditionals ``exp(alpha_{j-1}(a) + T(a, l) + phi_j(l) - alpha_j(l))`` and
  ``exp(T(l, b) + phi_{j+1}(b) + beta_{j+1}(b) - beta_j(l))`` (stochastic: the normalisers are the
  forward pass's own ``logsumexp``): the covariance backward of :class:`~eer_plugin.core.forward_backward.ForwardBackward`.
* :func:`viterbi` writes ``delta_i(b) = phi_i(b) + max_a (delta_{i-1}(a) + T(a, b))`` and the backpointers
  ``argmax_a`` (the first of equal maxima, as ``torch.max``).

Padding lanes (tags ``K..BK-1``) hold :data:`PAD` and take no part; emissions below :data:`PAD` (``-inf``)
are read as :data:`PAD`, so every quantity stays finite.
"""

from types import SimpleNamespace

try:
    import triton
    import triton.language as tl
except ImportError:  # Triton is optional: this module still imports (AllenNLP's --include-package imports every
    # module of the package), its kernels stay plain functions that nothing calls (fused.require_fused says why)
    triton = SimpleNamespace(jit=lambda fn: fn)
    tl = SimpleNamespace(constexpr=lambda value=None: value)

#: the score of a padding lane (and the floor of an emission): far below any reachable score
#: (:data:`~eer_plugin.core.step_constants.IMPOSSIBLE` is -1e9 per step), far above float32's range end
PAD = tl.constexpr(-1.0e30)


@triton.jit
def _row(trans, lengths, K: tl.constexpr, BK: tl.constexpr):
    """This program's row, its length, the tag lanes, which are tags, and ``T[a, b]`` as a ``BK x BK`` tile."""
    row = tl.program_id(0)
    lane = tl.arange(0, BK)
    valid = lane < K
    pairs = valid[:, None] & valid[None, :]
    steps = tl.load(trans + lane[:, None] * K + lane[None, :], mask=pairs, other=PAD)
    return row, tl.load(lengths + row), lane, valid, pairs, steps


@triton.jit
def _emission(phi, base, i, lane, valid, K: tl.constexpr):
    """``phi_i`` over the tag lanes, read as at least :data:`PAD` (``-inf`` included)."""
    return tl.maximum(tl.load(phi + base + i * K + lane, mask=valid, other=PAD), PAD)


@triton.jit
def forward_backward(phi, trans, start, end, lengths, alpha, beta, n, K: tl.constexpr, BK: tl.constexpr):
    row, length, lane, valid, pairs, steps = _row(trans, lengths, K, BK)
    direction = tl.program_id(1)
    base = row * n * K
    if direction == 0:
        first = _emission(phi, base, 0, lane, valid, K)
        forward = tl.where(valid, first + tl.load(start + lane, mask=valid, other=PAD), PAD)
        tl.store(alpha + base + lane, forward, mask=valid & (length > 0))
        for i in range(1, n):
            scores = forward[:, None] + steps
            top = tl.max(scores, axis=0)
            total = tl.sum(tl.exp(scores - top[None, :]), axis=0)
            emit = _emission(phi, base, i, lane, valid, K)
            forward = tl.where(valid, emit + top + tl.log(total), PAD)
            tl.store(alpha + base + i * K + lane, forward, mask=valid & (i < length))
    else:
        # beta_{L-1} = end, then positions L-2 .. 0: the loop walks n-2 .. 0 and starts below L-1
        backward = tl.where(valid, tl.load(end + lane, mask=valid, other=PAD), PAD)
        tl.store(beta + base + (length - 1) * K + lane, backward, mask=valid & (length > 0))
        for j in range(1, n):
            i = n - 1 - j
            emit = _emission(phi, base, i + 1, lane, valid, K)
            scores = steps + (emit + backward)[None, :]
            top = tl.max(scores, axis=1)
            total = tl.sum(tl.exp(scores - top[:, None]), axis=1)
            inside = i < length - 1
            backward = tl.where(valid & inside, top + tl.log(total), tl.where(valid, backward, PAD))
            tl.store(beta + base + i * K + lane, backward, mask=valid & inside)


@triton.jit
def conditional_sums(phi, trans, alpha, beta, grad, lengths, prefix, suffix, n, K: tl.constexpr, BK: tl.constexpr):
    row, length, lane, valid, pairs, steps = _row(trans, lengths, K, BK)
    direction = tl.program_id(1)
    base = row * n * K
    if direction == 0:
        state = tl.load(grad + base + lane, mask=valid, other=0.0)
        tl.store(prefix + base + lane, state, mask=valid & (length > 0))
        before = tl.load(alpha + base + lane, mask=valid, other=PAD)
        for i in range(1, n):
            here = tl.load(alpha + base + i * K + lane, mask=valid, other=PAD)
            emit = _emission(phi, base, i, lane, valid, K)
            log_p = before[:, None] + steps + (emit - here)[None, :]  # [a, l]: P(y_{i-1} = a | y_i = l)
            p = tl.where(pairs, tl.exp(tl.minimum(log_p, 0.0)), 0.0)
            state = tl.load(grad + base + i * K + lane, mask=valid, other=0.0) + tl.sum(p * state[:, None], axis=0)
            state = tl.where(valid, state, 0.0)
            tl.store(prefix + base + i * K + lane, state, mask=valid & (i < length))
            before = here
    else:
        last = tl.maximum(length - 1, 0)
        state = tl.load(grad + base + last * K + lane, mask=valid, other=0.0)
        tl.store(suffix + base + last * K + lane, state, mask=valid & (length > 0))
        after = tl.load(beta + base + last * K + lane, mask=valid, other=PAD)
        for j in range(1, n):
            i = n - 1 - j
            inside = i < length - 1
            here = tl.load(beta + base + i * K + lane, mask=valid & inside, other=PAD)
            emit = _emission(phi, base, i + 1, lane, valid, K)
            log_p = steps + (emit + after)[None, :] - here[:, None]  # [l, b]: P(y_{i+1} = b | y_i = l)
            p = tl.where(pairs, tl.exp(tl.minimum(log_p, 0.0)), 0.0)
            update = tl.load(grad + base + i * K + lane, mask=valid, other=0.0) + tl.sum(p * state[None, :], axis=1)
            state = tl.where(valid & inside, update, state)
            after = tl.where(inside, here, after)
            tl.store(suffix + base + i * K + lane, state, mask=valid & inside)


@triton.jit
def viterbi(phi, trans, start, lengths, delta, pointers, n, K: tl.constexpr, BK: tl.constexpr):
    row, length, lane, valid, pairs, steps = _row(trans, lengths, K, BK)
    base = row * n * K
    first = _emission(phi, base, 0, lane, valid, K)
    best = tl.where(valid, first + tl.load(start + lane, mask=valid, other=PAD), PAD)
    tl.store(delta + base + lane, best, mask=valid & (length > 0))
    for i in range(1, n):
        scores = best[:, None] + steps
        top = tl.max(scores, axis=0)
        pointer = tl.argmax(scores, axis=0)
        emit = _emission(phi, base, i, lane, valid, K)
        best = tl.where(valid, emit + top, PAD)
        tl.store(delta + base + i * K + lane, best, mask=valid & (i < length))
        tl.store(pointers + base - row * K + (i - 1) * K + lane, pointer, mask=valid & (i < length))
