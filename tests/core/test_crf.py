"""The constrained CRF checked against brute-force enumeration of every tagging.

For small lattices we enumerate all K^n taggings, keep the valid ones (BILUO grammar, start/end
rule, per-position allowed sets) and compute every quantity directly from its definition.
"""

import functools
import importlib.util
import itertools
import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import log_likelihood, reference_log_partition, sequence_score

from eer_plugin.core.crf import ANY_ENTITY, IMPOSSIBLE, LATENT, ConstrainedCRF, observations_to_allowed
from eer_plugin.core.losses import eer_objective, expected_entity_counts
from eer_plugin.core.tags import BiluoScheme

SCHEMES = {5: BiluoScheme(["PER"]), 9: BiluoScheme(["PER", "LOC"])}
NEEDS_TRITON = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")


CRF_PATHS = ["sequential", "scan", pytest.param("fused", marks=[NEEDS_TRITON, pytest.mark.integration])]
#: for the long lattices (hundreds of positions): the scan there takes seconds on a CPU (it is the GPU's path, 300x
#: slower than the sequential recursion here), so it runs with the integration tests, as the fused kernels do
LONG_LATTICE_PATHS = ["sequential", pytest.param("scan", marks=pytest.mark.integration), CRF_PATHS[2]]


@pytest.fixture(autouse=True, params=CRF_PATHS)
def crf_path(request, monkeypatch):
    """Every test of this file runs on every implementation of the CRF (issue 52): the sequential
    recursion, the parallel scan (:mod:`eer_plugin.core.scan`) and the fused kernels
    (:mod:`eer_plugin.core.fused`, in Triton's interpreter on CPU tensors: minutes, so with the integration
    tests), whatever each CRF's ``path``."""
    import eer_plugin.core.crf as crf_module

    if request.param == "fused" and os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        pytest.skip("Triton compiles on this machine (tests/conftest.py): these CPU tests run where there is no GPU")
    monkeypatch.setattr(crf_module, "resolve_crf_path", lambda path, device, num_tags=None: request.param)
    return request.param


def make_crf(num_tags, seed=0, dtype=torch.float64, scale=1.0):
    scheme = SCHEMES[num_tags]
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    with torch.no_grad():
        crf.transitions.copy_(torch.randn(num_tags, num_tags, generator=torch.Generator().manual_seed(seed)) * scale)
    return crf.to(dtype), scheme


@functools.lru_cache(maxsize=None)
def valid_sequences(scheme, length):
    """Every valid tagging of ``length`` positions ``(S, length)``, enumerated once per scheme and length
    (9 tags, 6 positions: 531,441 candidates checked in Python). Callers index it, never change it."""
    seqs = [s for s in itertools.product(range(scheme.num_tags), repeat=length) if scheme.is_valid(scheme.decode(s))]
    return torch.tensor(seqs, dtype=torch.long).view(len(seqs), length)


def brute_force(crf, scheme, emissions, length, allowed=None):
    """(log Z, marginals (length, K), best tagging, sequence log-probs) for one row by enumeration."""
    seqs = valid_sequences(scheme, length)
    if allowed is not None:
        ok = allowed[torch.arange(length), seqs].all(1) if length else torch.ones(len(seqs), dtype=torch.bool)
        seqs = seqs[ok]
    if length == 0:
        return torch.tensor(0.0, dtype=emissions.dtype), emissions.new_zeros(0, scheme.num_tags), [], None
    scores = emissions[torch.arange(length), seqs].sum(1)
    if length > 1:
        scores = scores + crf.transitions[seqs[:, :-1], seqs[:, 1:]].sum(1)
    log_z = torch.logsumexp(scores, 0)
    probs = torch.exp(scores - log_z)
    marginals = torch.zeros(length, scheme.num_tags, dtype=emissions.dtype)
    for i in range(length):
        marginals[i].index_add_(0, seqs[:, i], probs)
    best = seqs[scores.argmax()].tolist()
    return log_z, marginals, best, scores


def use_transitions(crf, trans):
    """Makes ``crf`` use the tensor ``trans`` (with its autograd history) as transition scores."""
    crf._parameters.pop("transitions", None)
    crf.transitions = trans


def random_batch(num_tags, batch=4, n=5, seed=0, dtype=torch.float64, observed_fraction=0.4):
    gen = torch.Generator().manual_seed(seed)
    emissions = torch.randn(batch, n, num_tags, generator=gen, dtype=dtype) * 2
    lengths = torch.randint(0, n + 1, (batch,), generator=gen)
    lengths[0] = n
    mask = torch.arange(n) < lengths[:, None]
    # Observations: sample a valid tagging per row, then reveal a random subset of its tags;
    # some revealed tags are weakened to "any entity" or kept as known "O".
    scheme = SCHEMES[num_tags]
    obs = torch.full((batch, n), LATENT)
    for b in range(batch):
        length = int(lengths[b])
        if length == 0:
            continue
        seqs = valid_sequences(scheme, length)
        truth = seqs[torch.randint(len(seqs), (1,), generator=gen)].squeeze(0)
        reveal = torch.rand(length, generator=gen) < observed_fraction
        weaken = torch.rand(length, generator=gen) < 0.2
        for i in range(length):
            if reveal[i]:
                obs[b, i] = ANY_ENTITY if (weaken[i] and truth[i] != 0) else truth[i]
    return emissions, mask, lengths, observations_to_allowed(obs, num_tags)


@pytest.mark.parametrize("num_tags,n", [(5, 6), (9, 5)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quantities_match_enumeration(num_tags, n, seed):
    crf, scheme = make_crf(num_tags, seed)
    emissions, mask, lengths, allowed = random_batch(num_tags, batch=4, n=n, seed=seed)
    log_z = crf.log_partition(emissions, mask)
    marginals = crf.marginals(emissions, mask)
    pll, marginals2 = crf.partial_log_likelihood_and_marginals(emissions, mask, allowed)
    posterior = crf.marginals(emissions, mask, allowed)
    tags, best_scores = crf.viterbi(emissions, mask)
    counts = expected_entity_counts(marginals, mask, scheme.entity_mask())
    for b in range(emissions.shape[0]):
        length = int(lengths[b])
        bf_log_z, bf_marg, bf_best, bf_scores = brute_force(crf, scheme, emissions[b], length)
        bf_log_z_obs, bf_post, _, _ = brute_force(crf, scheme, emissions[b], length, allowed[b, :length])
        torch.testing.assert_close(log_z[b], bf_log_z, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(pll[b], bf_log_z_obs - bf_log_z, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(marginals[b, :length], bf_marg, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(marginals2[b], marginals[b], atol=1e-12, rtol=0)
        torch.testing.assert_close(posterior[b, :length], bf_post, atol=1e-5, rtol=1e-5)
        assert torch.all(marginals[b, length:] == 0)
        torch.testing.assert_close(counts[b], bf_marg[:, 1:].sum(), atol=1e-5, rtol=1e-5)
        assert tags[b, :length].tolist() == bf_best
        assert torch.all(tags[b, length:] == scheme.outside_index)
        if length:
            torch.testing.assert_close(best_scores[b], bf_scores.max(), atol=1e-5, rtol=1e-5)


def test_viterbi_respects_observations_and_o_cost():
    crf, scheme = make_crf(9, seed=3)
    emissions, mask, lengths, allowed = random_batch(9, batch=4, n=5, seed=3)
    tags, _ = crf.viterbi(emissions, mask, allowed=allowed, o_cost=0.7)
    shifted = emissions.clone()
    shifted[..., 0] -= 0.7
    for b in range(4):
        length = int(lengths[b])
        _, _, best, _ = brute_force(crf, scheme, shifted[b], length, allowed[b, :length])
        assert tags[b, :length].tolist() == best
        assert scheme.is_valid(scheme.decode(tags[b, :length].tolist()))


def test_fully_observed_equals_ordinary_likelihood_and_unobserved_is_zero():
    crf, scheme = make_crf(9, seed=4)
    emissions, mask, lengths, _ = random_batch(9, batch=5, n=6, seed=4)
    gold = torch.zeros(5, 6, dtype=torch.long)
    for b in range(5):
        length = int(lengths[b])
        if length:
            seqs = valid_sequences(scheme, length)
            gold[b, :length] = seqs[(b * 7919) % len(seqs)]
    one_hot = observations_to_allowed(gold, 9)
    torch.testing.assert_close(
        crf.partial_log_likelihood(emissions, mask, one_hot), log_likelihood(crf, emissions, gold, mask)
    )
    latent = torch.ones_like(one_hot)
    torch.testing.assert_close(crf.partial_log_likelihood(emissions, mask, latent), torch.zeros(5, dtype=torch.float64))
    # and log_likelihood agrees with enumeration
    for b in range(5):
        length = int(lengths[b])
        bf_log_z, _, _, _ = brute_force(crf, scheme, emissions[b], length)
        score = sequence_score(crf, emissions[b : b + 1], gold[b : b + 1], mask[b : b + 1])
        torch.testing.assert_close(log_likelihood(crf, emissions, gold, mask)[b], score[0] - bf_log_z)


def full_loss(crf, emissions, mask, allowed, scheme, per_sequence=False, entity_ratio=0.9):
    # entity_ratio far from the model's ratio so the hinge is active and its gradient is exercised
    return eer_objective(
        crf,
        emissions,
        mask,
        allowed,
        scheme.entity_mask(),
        entity_ratio=entity_ratio,
        ratio_margin=0.01,
        ratio_loss_weight=10.0,
        per_sequence=per_sequence,
    ).loss


@pytest.mark.parametrize("per_sequence", [False, True])
@pytest.mark.parametrize("num_tags", [5, 9])
def test_full_loss_gradients_match_finite_differences(num_tags, per_sequence, crf_path):
    crf, scheme = make_crf(num_tags, seed=5)
    emissions, mask, _, allowed = random_batch(num_tags, batch=3, n=5, seed=5)
    emissions.requires_grad_()

    def fn(em, trans):
        use_transitions(crf, trans)
        return full_loss(crf, em, mask, allowed, scheme, per_sequence)

    trans = crf.transitions.detach().clone().requires_grad_()
    # every entry of the Jacobian on the smaller lattice by the sequential recursion; else a random projection
    # of it (gradcheck's fast mode: the same check of the backward pass at a fraction of the forward calls)
    fast = num_tags > 5 or crf_path != "sequential"
    assert torch.autograd.gradcheck(fn, (emissions, trans), eps=1e-6, atol=1e-5, rtol=1e-4, fast_mode=fast)


@pytest.mark.parametrize("num_tags", [5, 9])
def test_marginal_gradients_match_finite_differences(num_tags):
    """Second-order path: gradients of an arbitrary function of the marginals and log Z."""
    crf, scheme = make_crf(num_tags, seed=6)
    emissions, mask, _, allowed = random_batch(num_tags, batch=3, n=4, seed=6)
    weights = torch.randn(3, 4, num_tags, dtype=torch.float64)

    def fn(em, trans):
        use_transitions(crf, trans)
        log_z, marginals = crf._forward_backward(crf._restrict(em, allowed), mask.sum(1))
        return (weights * marginals).sum() + 0.3 * log_z.sum() + (marginals**2).sum()

    trans = crf.transitions.detach().clone().requires_grad_()
    fast = num_tags > 5  # every entry of the Jacobian on the smaller lattice, on every path
    assert torch.autograd.gradcheck(
        fn, (emissions.requires_grad_(), trans), eps=1e-6, atol=1e-5, rtol=1e-4, fast_mode=fast
    )


def _assert_finite_loss_and_grads(crf, scheme, emissions, mask, allowed):
    emissions = emissions.clone().requires_grad_()
    crf.zero_grad()
    loss = full_loss(crf, emissions, mask, allowed, scheme)
    loss.backward()
    assert torch.isfinite(loss)
    assert torch.isfinite(emissions.grad).all()
    assert torch.isfinite(crf.transitions.grad).all()
    marginals = crf.marginals(emissions.detach(), mask)
    assert torch.isfinite(marginals).all()
    tags, scores = crf.viterbi(emissions.detach(), mask)
    assert torch.isfinite(scores).all()
    return loss


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_degenerate_rows_stay_finite(dtype):
    crf, scheme = make_crf(9, seed=7, dtype=dtype)
    n = 6
    emissions = torch.randn(5, n, 9, dtype=dtype)
    lengths = torch.tensor([n, 1, 0, n, 3])
    mask = torch.arange(n) < lengths[:, None]
    obs = torch.full((5, n), LATENT)
    obs[3] = torch.tensor(scheme.encode(["O", "B-PER", "I-PER", "L-PER", "U-LOC", "O"]))  # fully observed row
    obs[4, 1] = ANY_ENTITY
    allowed = observations_to_allowed(obs, 9)
    loss = _assert_finite_loss_and_grads(crf, scheme, emissions, mask, allowed)
    # the padding-only row contributes nothing; its emissions get zero gradient
    emissions = emissions.clone().requires_grad_()
    full_loss(crf, emissions, mask, allowed, scheme).backward()
    assert torch.all(emissions.grad[2] == 0)
    assert torch.all(emissions.grad[1, 1:] == 0)
    assert torch.isfinite(loss)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extreme_emissions_stay_finite(dtype):
    crf, scheme = make_crf(9, seed=8, dtype=dtype)
    gen = torch.Generator().manual_seed(8)
    emissions = (torch.randint(0, 2, (4, 7, 9), generator=gen) * 2 - 1).to(dtype) * 1e4
    mask = torch.ones(4, 7, dtype=torch.bool)
    mask[1, 4:] = False
    obs = torch.full((4, 7), LATENT)
    obs[0, 2] = scheme.index["U-LOC"]
    obs[2, 0] = 0
    obs[2, 3] = scheme.index["B-PER"]
    _assert_finite_loss_and_grads(crf, scheme, emissions, mask, observations_to_allowed(obs, 9))


def test_single_valid_path():
    """Observations that leave exactly one valid tagging: log p(y_O|x) = log p(y|x), posterior one-hot."""
    crf, scheme = make_crf(9, seed=9)
    labels = ["B-PER", "I-PER", "L-PER", "O", "U-LOC"]
    gold = torch.tensor([scheme.encode(labels)])
    # observe only B at 0 and U at 4, O at 3: I/L forced by the grammar? no -- observe all but position 1
    obs = gold.clone()
    obs[0, 1] = LATENT  # B-PER _ L-PER forces I-PER
    emissions = torch.randn(1, 5, 9, dtype=torch.float64)
    mask = torch.ones(1, 5, dtype=torch.bool)
    allowed = observations_to_allowed(obs, 9)
    torch.testing.assert_close(
        crf.partial_log_likelihood(emissions, mask, allowed), log_likelihood(crf, emissions, gold, mask)
    )
    posterior = crf.marginals(emissions, mask, allowed)
    torch.testing.assert_close(posterior[0], torch.nn.functional.one_hot(gold[0], 9).double())
    _assert_finite_loss_and_grads(crf, scheme, emissions, mask, allowed)


def test_impossible_observations_give_finite_very_negative_likelihood():
    crf, scheme = make_crf(5, seed=10)
    obs = torch.tensor([[scheme.index["I-PER"], LATENT, LATENT]])  # cannot start with I-
    emissions = torch.randn(1, 3, 5, dtype=torch.float64)
    pll = crf.partial_log_likelihood(emissions, torch.ones(1, 3, dtype=torch.bool), observations_to_allowed(obs, 5))
    assert torch.isfinite(pll).all() and pll.item() < IMPOSSIBLE / 2


def test_observations_to_allowed_codes():
    allowed = observations_to_allowed(torch.tensor([[LATENT, ANY_ENTITY, 0, 3]]), 5)
    assert allowed[0, 0].all()
    assert allowed[0, 1].tolist() == [False, True, True, True, True]
    assert allowed[0, 2].tolist() == [True, False, False, False, False]
    assert allowed[0, 3].tolist() == [False, False, False, True, False]
    with pytest.raises(ValueError):
        observations_to_allowed(torch.tensor([[5]]), 5)


@settings(max_examples=25, deadline=None)
@given(
    batch=st.integers(1, 3),
    n=st.integers(1, 5),
    num_tags=st.sampled_from([5, 9]),
    seed=st.integers(0, 10_000),
    observed_fraction=st.floats(0, 1),
)
def test_property_random_shapes(batch, n, num_tags, seed, observed_fraction):
    crf, scheme = make_crf(num_tags, seed)
    emissions, mask, lengths, allowed = random_batch(num_tags, batch, n, seed, observed_fraction=observed_fraction)
    log_z = crf.log_partition(emissions, mask)
    pll, marginals = crf.partial_log_likelihood_and_marginals(emissions, mask, allowed)
    assert (pll <= 1e-9).all()  # a probability
    sums = marginals.sum(-1)
    torch.testing.assert_close(sums, mask.double())  # marginals sum to 1 at real positions, 0 at padding
    for b in range(batch):
        length = int(lengths[b])
        bf_log_z, bf_marg, _, _ = brute_force(crf, scheme, emissions[b], length)
        torch.testing.assert_close(log_z[b], bf_log_z, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(marginals[b, :length], bf_marg, atol=1e-5, rtol=1e-5)
    _assert_finite_loss_and_grads(crf, scheme, emissions, mask, allowed)


def test_soft_evidence_weights_match_enumeration():
    """Float ``allowed``: log sum_y p(y|x) prod_i w_i(y_i), against enumeration; bool is the 0/1 case."""
    crf, scheme = make_crf(5, seed=11)
    gen = torch.Generator().manual_seed(11)
    emissions = torch.randn(2, 4, 5, dtype=torch.float64, generator=gen)
    mask = torch.ones(2, 4, dtype=torch.bool)
    weights = torch.rand(2, 4, 5, dtype=torch.float64, generator=gen)
    weights[0, 1] = 0.0
    weights[0, 1, 2] = 1.0  # one position with a single allowed tag
    pll = crf.partial_log_likelihood(emissions, mask, weights)
    for b in range(2):
        log_z, _, _, scores = brute_force(crf, scheme, emissions[b], 4)
        seqs = valid_sequences(scheme, 4)
        evidence = weights[b, torch.arange(4), seqs].prod(1)
        expected = torch.log((torch.exp(scores - log_z) * evidence).sum())
        torch.testing.assert_close(pll[b], expected)
    hard = torch.rand(2, 4, 5, generator=gen) > 0.4
    hard[..., 0] = True
    torch.testing.assert_close(
        crf.partial_log_likelihood(emissions, mask, hard), crf.partial_log_likelihood(emissions, mask, hard.double())
    )


# ----------------------------------------------------------------------------------- reference
def test_reference_forward_algorithm_matches_enumeration():
    for num_tags, seed in [(5, 0), (9, 1)]:
        crf, scheme = make_crf(num_tags, seed)
        emissions, mask, lengths, allowed = random_batch(num_tags, batch=4, n=5, seed=seed)
        ref = reference_log_partition(crf, emissions, mask)
        ref_obs = reference_log_partition(crf, emissions, mask, allowed)
        for b in range(4):
            length = int(lengths[b])
            torch.testing.assert_close(ref[b], brute_force(crf, scheme, emissions[b], length)[0], atol=1e-9, rtol=1e-9)
            bf_obs = brute_force(crf, scheme, emissions[b], length, allowed[b, :length])[0]
            torch.testing.assert_close(ref_obs[b], bf_obs, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("crf_path", LONG_LATTICE_PATHS, indirect=True)
@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_matches_reference_on_long_lattices(seed):
    """17 BILUO tags (4 types), 70 positions, ragged rows: too big to enumerate, so the optimized
    forward-backward is checked against the textbook recursion, values and gradients of the loss."""
    scheme = BiluoScheme(["PER", "LOC", "ORG", "MISC"])
    k, n, batch = scheme.num_tags, 70, 5
    gen = torch.Generator().manual_seed(seed)
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end()).double()
    with torch.no_grad():
        crf.transitions.copy_(torch.randn(k, k, generator=gen, dtype=torch.float64))
    emissions = (torch.randn(batch, n, k, generator=gen, dtype=torch.float64) * 3).requires_grad_()
    lengths = torch.tensor([n, 1, 0, 37, n - 1])
    mask = torch.arange(n) < lengths[:, None]
    # observations: reveal 30% of the tags of a valid tagging (Viterbi of unrelated scores)
    truth, _ = crf.viterbi(torch.randn(batch, n, k, generator=gen, dtype=torch.float64), mask)
    observations = torch.where(torch.rand(batch, n, generator=gen) < 0.3, truth, torch.full_like(truth, LATENT))
    allowed = observations_to_allowed(observations, k)

    log_z = reference_log_partition(crf, emissions, mask)
    (ref_marginals,) = torch.autograd.grad(log_z.sum(), emissions, create_graph=True)
    ref_pll = reference_log_partition(crf, emissions, mask, allowed) - log_z
    pll, marginals = crf.partial_log_likelihood_and_marginals(emissions, mask, allowed)
    torch.testing.assert_close(crf.log_partition(emissions, mask), log_z, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(pll, ref_pll, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(marginals, ref_marginals, atol=1e-9, rtol=1e-9)
    entity = scheme.entity_mask()

    def loss(pll_, marginals_):  # the EER objective's two terms, with an active hinge
        rho_hat = (marginals_[..., entity].sum(-1) * mask).sum() / mask.sum()
        return -pll_.sum() + 10 * torch.relu((rho_hat - 0.05).abs() - 0.01)

    ours = torch.autograd.grad(loss(pll, marginals), [emissions, crf.transitions])
    reference = torch.autograd.grad(loss(ref_pll, ref_marginals), [emissions, crf.transitions])
    for a, b in zip(ours, reference):
        assert torch.isfinite(a).all()
        torch.testing.assert_close(a, b, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("outside_index", [0, 3])
def test_viterbi_pads_rows_of_length_zero_with_outside(outside_index):
    """Issue 13.9: a row of length 0 decodes to ``outside_index`` everywhere (it had the best
    first tag at position 0)."""
    crf, _ = make_crf(5, seed=1)
    emissions = torch.randn(3, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    emissions[..., outside_index] -= 10  # every real position prefers another tag
    mask = torch.arange(4) < torch.tensor([4, 0, 2])[:, None]
    tags, scores = crf.viterbi(emissions, mask, outside_index=outside_index)
    assert tags[1].tolist() == [outside_index] * 4 and scores[1] == 0
    assert tags[2, 2:].tolist() == [outside_index] * 2
    assert (tags[0] != outside_index).any()


@pytest.mark.parametrize("crf_path", LONG_LATTICE_PATHS, indirect=True)
@pytest.mark.parametrize("scale", [10.0, 100.0])
def test_float32_marginals_match_float64_at_large_scales(scale, monkeypatch):
    """Issue 13.8: float32 inputs, emissions ~ N(0, scale^2), n = 512: marginals (and the
    partial likelihood) within 1e-4 of the float64 computation (they were off by 0.14). The float64 reference
    is the sequential recursion's (exact against enumeration above; on a CPU 100x faster than the scan)."""
    import eer_plugin.core.crf as crf_module

    scheme = BiluoScheme(["PER", "LOC", "ORG", "MISC"])
    k, n = scheme.num_tags, 512
    gen = torch.Generator().manual_seed(0)
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    with torch.no_grad():
        crf.transitions.copy_(torch.randn(k, k, generator=gen))
    emissions = torch.randn(3, n, k, generator=gen) * scale
    mask = torch.arange(n) < torch.tensor([n, 300, 1])[:, None]
    observations = torch.full((3, n), LATENT).masked_fill(torch.rand(3, n, generator=gen) < 0.1, 0)
    allowed = observations_to_allowed(observations, k)
    pll, marginals = crf.partial_log_likelihood_and_marginals(emissions, mask, allowed)
    monkeypatch.setattr(crf_module, "resolve_crf_path", lambda path, device, num_tags=None: "sequential")
    crf64 = crf.double()
    ref_pll, ref_marginals = crf64.partial_log_likelihood_and_marginals(emissions.double(), mask, allowed)
    assert marginals.dtype == torch.float32 and pll.dtype == torch.float32
    torch.testing.assert_close(marginals.double(), ref_marginals, atol=1e-4, rtol=0)
    torch.testing.assert_close(marginals.sum(-1), mask.float(), atol=1e-4, rtol=0)
    torch.testing.assert_close(pll.double(), ref_pll, atol=1e-4 * scale * n * 1e-3, rtol=1e-6)


def _biluo_path(scheme, label, size):
    from eer_plugin.core.tags import spans_to_biluo

    return scheme.encode(spans_to_biluo([(0, size, label)], size))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_path_marginals_match_enumeration_and_forced_partition(seed):
    """Issue 14.1: the span probabilities from one forward-backward (``alpha . path . beta / Z``)
    equal brute force and the per-span constrained partition ``Z(span forced) / Z`` (the old way)."""
    crf, scheme = make_crf(9, seed)
    emissions, mask, lengths, _ = random_batch(9, batch=4, n=6, seed=seed)
    # a bookend-like restriction: first and last real position O
    allowed = torch.ones(4, 6, 9, dtype=torch.bool)
    for b, length in enumerate(lengths.tolist()):
        if length:
            allowed[b, [0, length - 1], 1:] = False
    gen = torch.Generator().manual_seed(seed)
    paths = []
    for b, length in enumerate(lengths.tolist()):
        for start in range(length):
            for size in range(1, length - start + 1):
                label = ["PER", "LOC"][int(torch.randint(2, (), generator=gen))]
                paths.append((b, start, _biluo_path(scheme, label, size)))
            paths.append((b, start, [int(torch.randint(9, (), generator=gen))]))  # any single tag
    paths.append((0, 1, [1, 1]))  # B B: not a valid path
    log_p = crf.path_log_marginals(emissions, mask, paths, allowed)
    log_z = crf.log_partition(emissions, mask, allowed)
    for (row, start, tags), value in zip(paths, log_p):
        length = int(lengths[row])
        seqs = valid_sequences(scheme, length)
        seqs = seqs[allowed[row, torch.arange(length), seqs].all(1)]
        scores = emissions[row, torch.arange(length), seqs].sum(1) + crf.transitions[seqs[:, :-1], seqs[:, 1:]].sum(1)
        chosen = (seqs[:, start : start + len(tags)] == torch.tensor(tags)).all(1)
        expected = torch.softmax(scores, 0)[chosen].sum()
        torch.testing.assert_close(value.exp(), expected, atol=1e-9, rtol=1e-7)
        observations = torch.full((1, emissions.shape[1]), LATENT)
        observations[0, start : start + len(tags)] = torch.tensor(tags)
        forced = crf.log_partition(
            emissions[row : row + 1],
            mask[row : row + 1],
            observations_to_allowed(observations, 9) & allowed[row : row + 1],
        )
        torch.testing.assert_close(value.exp(), (forced - log_z[row]).exp().clamp(max=1.0)[0], atol=1e-9, rtol=1e-7)
    with pytest.raises(ValueError):
        crf.path_log_marginals(emissions, mask, [(1, int(lengths[1]), [0])])
