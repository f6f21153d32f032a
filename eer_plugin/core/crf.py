"""A linear-chain CRF with hard grammar constraints and partially observed tags.

Notation follows the paper (Effland & Collins, "Partially Supervised Named Entity Recognition via
the Expected Entity Ratio Loss", section "Tagging Model"). For one sequence of ``n`` positions,
emission scores ``phi(i, y)`` (``emissions[b, i, y]``) and transition scores ``T[y, y']``
(``transitions[y, y']``), a tagging ``y_1..y_n`` scores

    s(y) = sum_i phi(i, y_i) + sum_{i<n} T[y_i, y_{i+1}]

and ``p(y | x) = exp(s(y)) / Z``. There are no start/end states and no start/end scores. Grammar
constraints give zero probability to (a) transitions ``allowed_transitions[y, y'] == False``,
(b) first tags with ``allowed_start[y] == False`` and (c) last tags with ``allowed_end[y] == False``,
in training *and* decoding: every quantity below sums over valid taggings only.

Partial observations ("Supervised Marginal Tag Loss") are a boolean tensor ``allowed (B, n, K)``
saying which tags each position may take: a one-hot row is an observed tag, an all-True row a
latent tag, and any other set also works ("any entity tag", "O only", dictionary constraints).
:func:`observations_to_allowed` builds it from integer observations. ``allowed`` may also be a
float tensor of tag weights in [0, 1] (soft evidence, used by the CBL baseline): the restricted
sum then weighs each tagging by the product of its tags' weights, ``log sum_y p(y|x) prod_i w_i(y_i)``.

Batches are padded: ``mask (B, n)`` is True on the first ``length_b`` positions of row ``b``
and False after them. Rows may have length 0 (then ``log Z = 0`` and every marginal is 0).

Every function is vectorized over batch and tags; the only Python loop is over positions, and
the partial likelihood runs its constrained and unconstrained passes together in that one loop.
The recursion runs in float64 for float32 inputs (``ConstrainedCRF.recursion_dtype``), so float32
marginals are exact to rounding at any scale of the scores; :meth:`ConstrainedCRF.path_log_marginals`
gives the probability of any tag path (a predicted span) from the same one pass.
The fast forward-backward (:class:`~eer_plugin.core.forward_backward.ForwardBackward`, in its own
module: a factorised log-space recursion with a hand-written backward) is hard to read;
``tests/oracles.py`` has the textbook forward algorithm in ten lines (and the score and likelihood
of full taggings); the tests check the fast path against it and both against brute-force enumeration.
Disallowed configurations get the finite score :data:`IMPOSSIBLE` instead of ``-inf`` so that
values and gradients stay finite even when a row has no valid tagging at all.
"""

import logging
from typing import Optional, Sequence, Tuple

import torch

from eer_plugin.core.crf_paths import DEFAULT_CRF_PATH, check_crf_path, resolve_crf_path
from eer_plugin.core.forward_backward import IMPOSSIBLE, ForwardBackward, build_lattice, work_dtype
from eer_plugin.core.fused import fused_forward_backward, fused_viterbi
from eer_plugin.core.scan import scan_forward_backward, scan_viterbi

logger = logging.getLogger(__name__)

#: Integer codes for :func:`observations_to_allowed` (values >= 0 are observed tag indices).
LATENT = -1
ANY_ENTITY = -2


def observations_to_allowed(observations: torch.Tensor, num_tags: int, outside_index: int = 0) -> torch.Tensor:
    """Turns integer observations ``(B, n)`` into an allowed-tag mask ``(B, n, K)``.

    ``observations[b, i]`` is a tag index (observed), :data:`LATENT` (any tag) or
    :data:`ANY_ENTITY` (any tag but ``O``: a position known to be inside some entity).
    An observed ``O`` (``outside_index``) means "O only", i.e. a known negative.
    """
    if observations.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise TypeError(f"observations must be an integer tensor, got {observations.dtype}")
    if bool(((observations < ANY_ENTITY) | (observations >= num_tags)).any()):
        raise ValueError(f"observations must be in [{ANY_ENTITY}, {num_tags - 1}]")
    tags = torch.arange(num_tags, device=observations.device)
    obs = observations.long().unsqueeze(-1)
    allowed = obs == tags
    allowed |= obs == LATENT
    allowed |= (obs == ANY_ENTITY) & (tags != outside_index)
    return allowed


class ConstrainedCRF(torch.nn.Module):
    """Linear-chain CRF over ``K`` tags with learned transitions and fixed grammar constraints.

    Parameters
    ----------
    allowed_transitions : ``(K, K)`` bool tensor
        ``[y, y']`` is True when ``y'`` may follow ``y`` (for BILUO see
        :meth:`eer_plugin.core.tags.BiluoScheme.allowed_transitions`).
    allowed_start, allowed_end : ``(K,)`` bool tensors, optional
        Tags a sequence may start / end with. Default: all tags.
    init_std : float
        Standard deviation of the initial transition scores (the authors used 0.001).
    recursion_dtype : torch.dtype, optional
        The dtype the forward-backward recursion runs in (inputs of a more precise dtype keep
        theirs); outputs and gradients come back in the input dtype. The default float64 keeps
        float32 marginals exact to rounding whatever the scale of the scores: in float32 the
        log-space values ``alpha``, ``beta``, ``log Z`` grow like ``n * |scores|`` and each carries
        an absolute rounding error of about ``6e-8`` of that (emissions ~ N(0, 100^2), n = 512:
        marginals off by 0.14). ``None``: the input dtype (faster, for benchmarks).
    path : str
        How the forward-backward and Viterbi run (:data:`~eer_plugin.core.crf_paths.CRF_PATHS`):
        ``sequential`` (one step per position), ``scan`` (parallel log-space / max-plus scan in
        ``O(log n)`` steps, :mod:`eer_plugin.core.scan`), ``fused`` (each recursion one Triton kernel on
        a CUDA device, :mod:`eer_plugin.core.fused`) or ``auto`` (on CUDA devices, where each step is a
        kernel launch, the fused kernels where Triton runs and the tags are few, else the scan:
        :func:`~eer_plugin.core.crf_paths.resolve_crf_path`; the sequential path elsewhere).
        Same quantities on every path.
    """

    def __init__(
        self,
        allowed_transitions: torch.Tensor,
        allowed_start: Optional[torch.Tensor] = None,
        allowed_end: Optional[torch.Tensor] = None,
        init_std: float = 1e-3,
        recursion_dtype: Optional[torch.dtype] = torch.float64,
        path: str = DEFAULT_CRF_PATH,
    ):
        super().__init__()
        allowed_transitions = torch.as_tensor(allowed_transitions, dtype=torch.bool)
        num_tags = allowed_transitions.shape[0]
        if allowed_transitions.shape != (num_tags, num_tags):
            raise ValueError(f"allowed_transitions must be square, got {tuple(allowed_transitions.shape)}")
        if allowed_start is None:
            allowed_start = torch.ones(num_tags, dtype=torch.bool)
        if allowed_end is None:
            allowed_end = torch.ones(num_tags, dtype=torch.bool)
        self.num_tags = num_tags
        self.recursion_dtype = recursion_dtype
        self.path = check_crf_path(path)
        self._reported_path = None
        self.transitions = torch.nn.Parameter(torch.randn(num_tags, num_tags) * init_std)
        self.register_buffer("allowed_transitions", allowed_transitions.clone(), persistent=False)
        self.register_buffer(
            "allowed_start", torch.as_tensor(allowed_start, dtype=torch.bool).clone(), persistent=False
        )
        self.register_buffer("allowed_end", torch.as_tensor(allowed_end, dtype=torch.bool).clone(), persistent=False)

    # ------------------------------------------------------------------ potentials
    def _constrained_transitions(self, dtype: torch.dtype) -> torch.Tensor:
        # masked_fill with a Python number: no host tensor copied to the device (CUDA graphs can capture it)
        return self.transitions.to(dtype).masked_fill(~self.allowed_transitions, IMPOSSIBLE)

    def _boundary(self, allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill(~allowed, IMPOSSIBLE)

    @staticmethod
    def _restrict(emissions: torch.Tensor, allowed: Optional[torch.Tensor]) -> torch.Tensor:
        if allowed is None:
            return emissions
        if allowed.shape != emissions.shape:
            raise ValueError(f"allowed has shape {tuple(allowed.shape)}, emissions {tuple(emissions.shape)}")
        if allowed.dtype == torch.bool:
            return emissions.masked_fill(~allowed, IMPOSSIBLE)
        # soft evidence: tag weights in [0, 1] multiply the paths' probabilities (0 = not allowed)
        weights = allowed.to(emissions.dtype)
        return torch.where(
            weights > 0, emissions + weights.clamp(min=torch.finfo(weights.dtype).tiny).log(), IMPOSSIBLE
        )

    def _check(self, emissions: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if emissions.dim() != 3 or emissions.shape[-1] != self.num_tags:
            raise ValueError(f"emissions must be (batch, length, {self.num_tags}), got {tuple(emissions.shape)}")
        if mask.shape != emissions.shape[:2]:
            raise ValueError(f"mask must be {tuple(emissions.shape[:2])}, got {tuple(mask.shape)}")
        return mask.bool().sum(-1)

    # ------------------------------------------------------------------ forward-backward
    def _forward_backward(
        self, emissions: torch.Tensor, lengths: torch.Tensor, marginals: bool = True
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """``(log Z (R,), marginals (R, n, K))`` of (already restricted) emissions; differentiable
        in the emissions and the transitions, marginals included (see :class:`~eer_plugin.core.forward_backward.ForwardBackward`).
        Without ``marginals`` the scan path computes ``log Z`` alone (marginals ``None``); the
        sequential path computes both either way (its backward pass is the marginals)."""
        dtype = emissions.dtype
        path = self._path(emissions)
        if path != "sequential":
            work = work_dtype(dtype, self.recursion_dtype)
            potentials = (
                emissions.to(work),
                self._constrained_transitions(work),
                self._boundary(self.allowed_start, work),
                self._boundary(self.allowed_end, work),
                lengths,
            )
            if path == "fused":
                log_z, tag_marginals = fused_forward_backward(*potentials)
            else:
                log_z, tag_marginals = scan_forward_backward(*potentials, marginals=marginals)
            return log_z.to(dtype), None if tag_marginals is None else tag_marginals.to(dtype)
        return ForwardBackward.apply(
            emissions,
            self._constrained_transitions(dtype),
            self._boundary(self.allowed_start, dtype),
            self._boundary(self.allowed_end, dtype),
            lengths,
            self.recursion_dtype,
        )

    def _path(self, emissions: torch.Tensor) -> str:
        path = resolve_crf_path(self.path, emissions.device, emissions.shape[-1])
        choice = (self.path, emissions.device.type, path)
        if choice != getattr(self, "_reported_path", None):  # logged once per choice, not per batch
            self._reported_path = choice
            logger.info("CRF path on %s: %s (path=%r)", emissions.device.type, path, self.path)
        return path

    def log_partition(
        self, emissions: torch.Tensor, mask: torch.Tensor, allowed: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """``log Z`` per row ``(B,)``: log-sum of ``exp(s(y))`` over valid taggings ``y`` whose
        tags are all allowed by ``allowed`` (all tags when ``None``)."""
        lengths = self._check(emissions, mask)
        return self._forward_backward(self._restrict(emissions, allowed), lengths, marginals=False)[0]

    def marginals(
        self, emissions: torch.Tensor, mask: torch.Tensor, allowed: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """Tag marginals ``p(y_i = t | x)`` ``(B, n, K)``; with ``allowed``, the posterior given
        those observations. Padding positions get 0. Differentiable (exact second-order backward)."""
        lengths = self._check(emissions, mask)
        return self._forward_backward(self._restrict(emissions, allowed), lengths)[1]

    @torch.no_grad()
    def path_log_marginals(
        self,
        emissions: torch.Tensor,
        mask: torch.Tensor,
        paths: Sequence[Tuple[int, int, Sequence[int]]],
        allowed: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """``log p(y_s .. y_{s+l-1} = t_0 .. t_{l-1} | x)`` ``(P,)`` for each path ``(row, s, tags)``:
        the marginal log-probability that row ``row`` takes exactly these tags on positions
        ``s .. s+l-1`` (whatever it takes elsewhere), under the constrained lattice restricted by
        ``allowed`` (``p(. | x, allowed)``). For the BILUO path of a span (``B I .. I L`` or ``U``)
        it is the probability that exactly this span is an entity of this type: the grammar makes
        the tags around it end the previous entity and start nothing that continues into it.

        One forward-backward pass over the rows serves every path, with no pass per path:

            log p = alpha_s(t_0) + sum_{j>=1} (T[t_{j-1}, t_j] + phi(s+j, t_j)) + beta_{s+l-1}(t_{l-1}) - log Z

        (``alpha`` includes ``phi(s, .)``, ``beta`` excludes ``phi(s+l-1, .)``), in the recursion
        dtype. A path through a forbidden tag or transition gets about :data:`IMPOSSIBLE`."""
        lengths = self._check(emissions, mask)
        dtype = emissions.dtype
        if not len(paths):
            return emissions.new_zeros(0)
        rows = torch.tensor([p[0] for p in paths], dtype=torch.long)
        starts = torch.tensor([p[1] for p in paths], dtype=torch.long)
        sizes = torch.tensor([len(p[2]) for p in paths], dtype=torch.long)
        if bool((sizes < 1).any()) or bool((rows < 0).any()) or bool((rows >= emissions.shape[0]).any()):
            raise ValueError("every path needs a row in range and at least one tag")
        if bool((starts < 0).any()) or bool((starts + sizes > lengths.cpu()[rows]).any()):
            raise ValueError("every path must lie inside its row's length")
        width = int(sizes.max())
        tags = torch.zeros(len(paths), width, dtype=torch.long)
        for index, (_, _, path) in enumerate(paths):
            tags[index, : len(path)] = torch.as_tensor(list(path), dtype=torch.long)
        if bool(((tags < 0) | (tags >= self.num_tags)).any()):
            raise ValueError(f"path tags must be in [0, {self.num_tags - 1}]")
        device = emissions.device
        rows, starts, sizes, tags = rows.to(device), starts.to(device), sizes.to(device), tags.to(device)
        work = work_dtype(dtype, self.recursion_dtype)
        restricted = self._restrict(emissions, allowed).to(work)
        trans = self._constrained_transitions(work)
        lattice = build_lattice(
            restricted, trans, self._boundary(self.allowed_start, work), self._boundary(self.allowed_end, work), lengths
        )
        inside = torch.arange(width, device=device) < sizes[:, None]  # (P, W)
        positions = torch.where(inside, starts[:, None] + torch.arange(width, device=device), starts[:, None])
        rows_w = rows[:, None].expand_as(positions)
        unary = restricted[rows_w, positions, tags]  # (P, W)
        pair = trans[tags[:, :-1], tags[:, 1:]]  # (P, W-1)
        inner = ((unary[:, 1:] + pair) * inside[:, 1:]).sum(1)
        last_pos = starts + sizes - 1
        last_tag = tags.gather(1, (sizes - 1)[:, None]).squeeze(1)
        log_p = (
            lattice.alpha[rows, starts, tags[:, 0]]
            + inner
            + lattice.beta[rows, last_pos, last_tag]
            - lattice.log_z[rows]
        )
        return log_p.clamp(max=0.0).to(dtype)

    def partial_log_likelihood(
        self, emissions: torch.Tensor, mask: torch.Tensor, allowed: torch.Tensor
    ) -> torch.Tensor:
        """``log p(y_O | x)`` per row ``(B,)``: the log of the total probability of the valid
        taggings consistent with the observations (paper eq. 2). It equals
        ``log Z(restricted) - log Z``: 0 when nothing is observed, the ordinary CRF
        log-likelihood when every position is observed."""
        lengths = self._check(emissions, mask)
        both = torch.cat([emissions, self._restrict(emissions, allowed)], 0)
        log_z = self._forward_backward(both, lengths.repeat(2), marginals=False)[0]
        return log_z[emissions.shape[0] :] - log_z[: emissions.shape[0]]

    def partial_log_likelihood_and_marginals(
        self, emissions: torch.Tensor, mask: torch.Tensor, allowed: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """The partial log-likelihood ``(B,)`` and the model's (unrestricted) tag marginals
        ``p(y_i = t | x)`` ``(B, n, K)``, both from one batched forward-backward pass over the
        unrestricted and the restricted lattice."""
        lengths = self._check(emissions, mask)
        batch = emissions.shape[0]
        # one pass over both lattices stacked: on a GPU two passes (the restricted one's log Z alone) did
        # less work but issued more launches, and took longer (benchmarks/gpu/README.md, 2026-11-27)
        both = torch.cat([emissions, self._restrict(emissions, allowed)], 0)
        log_z, marginals = self._forward_backward(both, lengths.repeat(2))
        return log_z[batch:] - log_z[:batch], marginals[:batch]

    # ------------------------------------------------------------------ decoding
    @torch.no_grad()
    def viterbi(
        self,
        emissions: torch.Tensor,
        mask: torch.Tensor,
        allowed: Optional[torch.Tensor] = None,
        o_cost: float = 0.0,
        outside_index: int = 0,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Best valid tagging per row: ``(tags (B, n), scores (B,))``. Padding positions get tag
        ``outside_index``. ``o_cost`` (``b_O``, the Raw+CD baseline) is subtracted from the ``O``
        emission at every position before decoding; ``scores`` include it. ``allowed`` restricts
        the tags per position as in :meth:`log_partition`."""
        lengths = self._check(emissions, mask)
        batch, n, k = emissions.shape
        if n == 0:
            return torch.zeros(batch, 0, dtype=torch.long, device=emissions.device), emissions.new_zeros(batch)
        if o_cost:
            emissions = emissions.clone()
            emissions[..., outside_index] -= o_cost
        emissions = self._restrict(emissions, allowed)
        trans = self._constrained_transitions(emissions.dtype)
        path = self._path(emissions)
        if path != "sequential":
            start, end = (
                self._boundary(self.allowed_start, emissions.dtype),
                self._boundary(self.allowed_end, emissions.dtype),
            )
            decode = fused_viterbi if path == "fused" else scan_viterbi
            return decode(emissions, trans, start, end, lengths, outside_index)
        steps = emissions.unbind(1)
        score = steps[0] + self._boundary(self.allowed_start, emissions.dtype)
        scores, pointers = [score], []
        for emit in steps[1:]:
            best, pointer = (score.unsqueeze(2) + trans).max(dim=1)
            score = best + emit
            scores.append(score)
            pointers.append(pointer)
        scores = torch.stack(scores, 1)
        last = (lengths - 1).clamp(min=0)
        final = scores.gather(1, last.view(batch, 1, 1).expand(batch, 1, k)).squeeze(1)
        final = final + self._boundary(self.allowed_end, emissions.dtype)
        best_score, tag = final.max(-1)
        tags = torch.full((batch, n), outside_index, dtype=torch.long, device=emissions.device)
        # Walk back from each row's own last position: position i takes the pointer stored at i+1.
        for i in range(n - 1, -1, -1):
            at_end = (last == i) & (lengths > 0)  # a row of length 0 keeps outside_index everywhere
            inside = last > i
            if i < n - 1:
                prev = pointers[i].gather(1, tags[:, i + 1].unsqueeze(1)).squeeze(1)
                tag = torch.where(inside, prev, tag)
            tags[:, i] = torch.where(at_end | inside, tag, tags[:, i])
        best_score = torch.where(lengths > 0, best_score, torch.zeros_like(best_score))
        return tags, best_score
