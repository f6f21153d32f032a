"""The GPU paths of the CRF against the sequential one: the parallel scan (:mod:`eer_plugin.core.scan`) and
the fused Triton kernels (:mod:`eer_plugin.core.fused`, run by Triton's interpreter on CPU tensors),
beyond the brute-force, oracle and float32 large-scale tests of ``test_crf.py`` (which run on every
path): long ragged lattices, float64 gradients of the full EER loss, Viterbi paths, impossible and
non-finite inputs, the number of operations, and the choice of path. Tests marked with a device run
on CUDA too when a GPU is present (the fused kernels compiled there)."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest
import torch

import eer_plugin.core.crf_paths as crf_paths
import eer_plugin.core.fused as fused
import eer_plugin.core.scan as scan
from eer_plugin.core.crf import LATENT, ConstrainedCRF, observations_to_allowed
from eer_plugin.core.losses import eer_objective
from eer_plugin.core.tags import BiluoScheme

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")),
]
SCHEME = BiluoScheme(["PER", "LOC", "ORG", "MISC"])
NEEDS_TRITON = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed")
#: the parallel paths each comparison runs on (the fused kernels in the interpreter take seconds a test: CI
#: runs them, ``make test`` runs test_fused_kernels_on_a_small_batch)
PATHS = ["scan", pytest.param("fused", marks=[NEEDS_TRITON, pytest.mark.integration])]


#: the fused kernels on CPU tensors run in Triton's interpreter, which tests/conftest.py chooses where no GPU is
INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


#: on a GPU machine Triton compiles (tests/conftest.py): the fused path's CPU tests run where there is no GPU
CPU_FUSED = pytest.mark.skipif(not INTERPRETED, reason="Triton compiles on this machine (a GPU machine)")


@pytest.fixture(autouse=True)
def fused_on_this_device(request):
    """A comparison on the fused path runs on CPU tensors only in Triton's interpreter (see CPU_FUSED)."""
    params = request.node.callspec.params if hasattr(request.node, "callspec") else {}
    if params.get("path") == "fused" and params.get("device", "cpu") == "cpu" and "cuda" not in request.node.name:
        if not INTERPRETED:
            pytest.skip("Triton compiles on this machine (a GPU machine): CPU copies run where there is no GPU")


def crf_pair(seed=0, dtype=torch.float64, device="cpu", constrained=True, scale=1.0, path="scan", **kwargs):
    """The same CRF (17 BILUO tags, random transitions) on the sequential path and on ``path``."""
    k = SCHEME.num_tags
    transitions = torch.randn(k, k, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * scale
    grammar = (
        (SCHEME.allowed_transitions(), SCHEME.allowed_start(), SCHEME.allowed_end())
        if constrained
        else (torch.ones(k, k, dtype=torch.bool),)
    )
    pair = []
    for name in ("sequential", path):
        crf = ConstrainedCRF(*grammar, path=name, **kwargs)
        with torch.no_grad():
            crf.transitions.copy_(transitions)
        pair.append(crf.to(device=device, dtype=dtype))
    return pair


def ragged_batch(seed=0, n=70, dtype=torch.float64, device="cpu", scale=3.0, observed=0.3):
    gen = torch.Generator().manual_seed(seed)
    k = SCHEME.num_tags
    lengths = torch.tensor([n, 1, 0, n // 2 + 2, n - 1])
    mask = torch.arange(n) < lengths[:, None]
    emissions = torch.randn(len(lengths), n, k, generator=gen, dtype=torch.float64) * scale
    truth, _ = crf_pair(seed + 100)[0].viterbi(
        torch.randn(len(lengths), n, k, generator=gen, dtype=torch.float64), mask
    )
    observations = torch.where(
        torch.rand(len(lengths), n, generator=gen) < observed, truth, torch.full_like(truth, LATENT)
    )
    allowed = observations_to_allowed(observations, k)
    return emissions.to(device=device, dtype=dtype), mask.to(device), allowed.to(device)


def loss_and_grads(crf, emissions, mask, allowed, **kwargs):
    emissions = emissions.clone().requires_grad_()
    crf.zero_grad()
    out = eer_objective(
        crf,
        emissions,
        mask,
        allowed,
        SCHEME.entity_mask().to(emissions.device),
        entity_ratio=0.9,
        ratio_margin=0.01,
        **kwargs,
    )
    out.loss.backward()
    return out, emissions.grad, crf.transitions.grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("constrained,per_sequence", [(True, False), (False, True)])
@pytest.mark.parametrize("path", PATHS)
def test_float64_loss_marginals_and_gradients_equal_the_sequential_path(path, device, constrained, per_sequence):
    """The full EER loss (partial NLL, marginals, active ratio hinge) and its gradients in the emissions
    and the transitions agree to 1e-9 (the issue asks 1e-6), with the grammar and without it
    (``train_constraints=False``)."""
    sequential, scanned = crf_pair(1, device=device, constrained=constrained, path=path)
    emissions, mask, allowed = ragged_batch(1, device=device)
    ref, ref_em, ref_tr = loss_and_grads(sequential, emissions, mask, allowed, per_sequence=per_sequence)
    out, em, tr = loss_and_grads(scanned, emissions, mask, allowed, per_sequence=per_sequence)
    torch.testing.assert_close(out.loss, ref.loss, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(out.partial_nll, ref.partial_nll, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(out.marginals, ref.marginals, atol=1e-9, rtol=0)
    assert ref.ratio_loss > 0  # the hinge is active: the marginals' gradient is exercised
    torch.testing.assert_close(em, ref_em, atol=1e-9, rtol=1e-9)
    torch.testing.assert_close(tr, ref_tr, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("path", PATHS)
def test_viterbi_equals_the_sequential_path(path, device, seed):
    """Tags and scores on long ragged lattices, with observations and an O cost."""
    sequential, scanned = crf_pair(seed, device=device, path=path)
    emissions, mask, allowed = ragged_batch(seed, n=97, device=device)
    for kwargs in ({}, {"allowed": allowed, "o_cost": 0.7}, {"outside_index": 3}):
        tags, scores = scanned.viterbi(emissions, mask, **kwargs)
        ref_tags, ref_scores = sequential.viterbi(emissions, mask, **kwargs)
        assert torch.equal(tags, ref_tags)
        torch.testing.assert_close(scores, ref_scores, atol=1e-9, rtol=1e-12)


@pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device (on the CPU: test_crf.py's float32 test runs on both paths)"
)
@pytest.mark.parametrize("path", PATHS)
def test_float32_large_scale_marginals_match_float64_on_cuda(path):
    """Issue 13.8 on the scan path on a GPU: float32 inputs, emissions ~ N(0, 100^2), n = 512, marginals
    within 1e-4 of float64 (the recursion runs in float64 on both paths)."""
    sequential, scanned = crf_pair(0, dtype=torch.float32, device="cuda", path=path)
    emissions, mask, allowed = ragged_batch(0, n=512, dtype=torch.float32, device="cuda", scale=100.0, observed=0.1)
    pll, marginals = scanned.partial_log_likelihood_and_marginals(emissions, mask, allowed)
    ref_pll, ref_marginals = sequential.double().partial_log_likelihood_and_marginals(emissions.double(), mask, allowed)
    assert marginals.dtype == torch.float32
    torch.testing.assert_close(marginals.double(), ref_marginals, atol=1e-4, rtol=0)
    torch.testing.assert_close(pll.double(), ref_pll, atol=1e-2, rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("path", PATHS)
def test_impossible_and_non_finite_inputs_stay_finite(path, device, dtype):
    """A position where no tag is allowed, a row whose observations no valid tagging meets, rows of
    length 0 and 1, a float32 recursion (``recursion_dtype=None``): loss, gradients, marginals and
    Viterbi scores stay finite and equal the sequential path's where there is a valid tagging. And
    ``-inf`` emissions on the tags ``allowed`` rules out (what a caller may mask with) give the same
    finite restricted quantities and gradients as the sequential path."""
    for recursion_dtype in (torch.float64, None):
        sequential, scanned = crf_pair(3, dtype=dtype, device=device, recursion_dtype=recursion_dtype, path=path)
        emissions, mask, allowed = ragged_batch(3, n=12, dtype=dtype, device=device)
        tolerance = 1e-9 if dtype == torch.float64 and recursion_dtype is not None else 1e-3
        # -inf on the disallowed tags: the restricted lattice never sees them
        masked = emissions.masked_fill(~allowed, float("-inf")).requires_grad_()
        values = []
        for crf in (sequential, scanned):
            log_z = crf.log_partition(masked, mask, allowed)
            posterior = crf.marginals(masked, mask, allowed)
            (grad,) = torch.autograd.grad(log_z.sum() + (posterior**2).sum(), masked)
            values.append((log_z, posterior, grad, crf.viterbi(masked.detach(), mask, allowed)))
        for got, ref in zip(values[1], values[0]):
            got, ref = (got[0], ref[0]) if isinstance(got, tuple) else (got, ref)
            assert torch.isfinite(got.float()).all()
            torch.testing.assert_close(got, ref, atol=tolerance, rtol=tolerance)
        # rows with no valid tagging: very negative, finite likelihood; finite gradients everywhere
        allowed = allowed.clone()
        allowed[3, 2] = False  # nothing allowed at one position
        allowed[4, 0] = False
        allowed[4, 0, SCHEME.index["I-PER"]] = True  # a row cannot start with I-
        out, em, tr = loss_and_grads(scanned, emissions, mask, allowed)
        assert torch.isfinite(out.loss) and torch.isfinite(em).all() and torch.isfinite(tr).all()
        assert torch.isfinite(out.marginals).all()
        pll = scanned.partial_log_likelihood(emissions, mask, allowed)
        assert torch.isfinite(pll).all() and (pll[3:] < -1e8).all()
        ref_pll = sequential.partial_log_likelihood(emissions, mask, allowed)
        torch.testing.assert_close(pll[:3], ref_pll[:3], atol=tolerance, rtol=tolerance)
        tags, scores = scanned.viterbi(emissions, mask, allowed)
        assert torch.isfinite(scores).all()
        ref_tags, _ = sequential.viterbi(emissions, mask, allowed)
        assert torch.equal(tags[:3], ref_tags[:3])
        assert tags[2].tolist() == [0] * 12  # length 0: outside everywhere


@NEEDS_TRITON
@CPU_FUSED
def test_fused_kernels_on_a_small_batch():
    """The fused path's loss, marginals, gradients and Viterbi equal the sequential path's (the quick
    version of the comparisons above, for ``make test``)."""
    sequential, kernels = crf_pair(5, path="fused")
    emissions, mask, allowed = ragged_batch(5, n=9)
    ref, ref_em, ref_tr = loss_and_grads(sequential, emissions, mask, allowed)
    out, em, tr = loss_and_grads(kernels, emissions, mask, allowed)
    assert ref.ratio_loss > 0
    for got, want in ((out.loss, ref.loss), (out.marginals, ref.marginals), (em, ref_em), (tr, ref_tr)):
        torch.testing.assert_close(got, want, atol=1e-9, rtol=1e-9)
    tags, scores = kernels.viterbi(emissions, mask, allowed)
    ref_tags, ref_scores = sequential.viterbi(emissions, mask, allowed)
    assert torch.equal(tags, ref_tags)
    torch.testing.assert_close(scores, ref_scores, atol=1e-9, rtol=1e-12)


@NEEDS_TRITON
@pytest.mark.integration
@pytest.mark.parametrize("dtype", ["fp64", "fp32"])
def test_the_fused_kernels_compile_for_a_hopper_gpu(dtype):
    """What the interpreter does not check (types, globals, layouts), checked without a GPU: the kernels
    compile to a cubin for compute capability 9.0 (H100, H200) with Triton's own ptxas, for the 17
    BILUO tags of CoNLL and for 5, in float64 (the recursion dtype) and float32."""
    # a process of its own: this one may run Triton's interpreter (tests/conftest.py)
    env = {name: value for name, value in os.environ.items() if name != "TRITON_INTERPRET"}
    code = f"import json; from eer_plugin.core import fused; print(json.dumps([fused.compile_for(90, tags=t, dtype={dtype!r}) for t in (17, 5)]))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for sizes in json.loads(done.stdout.strip().splitlines()[-1]):
        assert set(sizes) == {"forward_backward", "conditional_sums", "viterbi"} and min(sizes.values()) > 1000


def test_products_in_pieces_equal_one_piece(monkeypatch):
    """A batch too big for one ``K^3`` temporary is multiplied in pieces: same values and gradients."""
    sequential, scanned = crf_pair(4)
    emissions, mask, allowed = ragged_batch(4, n=20)
    ref, ref_em, ref_tr = loss_and_grads(scanned, emissions, mask, allowed)
    monkeypatch.setattr(scan, "_MAX_TERMS", 3 * SCHEME.num_tags**3)
    out, em, tr = loss_and_grads(scanned, emissions, mask, allowed)
    torch.testing.assert_close(out.loss, ref.loss, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(em, ref_em, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(tr, ref_tr, atol=1e-12, rtol=1e-12)
    assert torch.equal(scanned.viterbi(emissions, mask)[0], sequential.viterbi(emissions, mask)[0])


def test_log_mat_mul_gradients_match_finite_differences():
    gen = torch.Generator().manual_seed(5)
    a = (torch.randn(3, 4, 4, generator=gen, dtype=torch.float64) * 5).requires_grad_()
    b = (torch.randn(3, 4, 4, generator=gen, dtype=torch.float64) * 5).requires_grad_()
    assert torch.autograd.gradcheck(scan.LogMatMul.apply, (a, b))
    torch.testing.assert_close(scan.LogMatMul.apply(a, b), torch.logsumexp(a.unsqueeze(-1) + b.unsqueeze(-3), -2))


def test_path_choice(monkeypatch):
    """``auto`` is the fused path on CUDA where Triton runs (else the scan) and the sequential path
    elsewhere; a wrong name is refused."""
    assert crf_paths.DEFAULT_CRF_PATH == "auto"
    assert crf_paths.resolve_crf_path("auto", torch.device("cpu")) == "sequential"
    on_cuda = "fused" if importlib.util.find_spec("triton") is not None else "scan"
    assert crf_paths.resolve_crf_path("auto", torch.device("cuda", 0)) == on_cuda
    assert crf_paths.resolve_crf_path("auto", torch.device("cuda", 0), num_tags=17) == on_cuda
    assert crf_paths.resolve_crf_path("auto", torch.device("cuda", 0), num_tags=73) == "scan"  # OntoNotes' BILUO tags
    if on_cuda == "fused":  # a GPU older than Triton's oldest: the scan, and the fused path says why
        monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the tests run Triton's interpreter
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (6, 1))
        assert crf_paths.resolve_crf_path("auto", torch.device("cuda", 0)) == "scan"
        assert "compute capability 7.0 or newer" in fused.fused_unavailable_reason(torch.device("cuda", 0))
        monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "triton", None)  # without Triton: the scan
    assert crf_paths.resolve_crf_path("auto", torch.device("cuda", 0)) == "scan"
    monkeypatch.undo()
    assert crf_paths.resolve_crf_path("scan", torch.device("cpu")) == "scan"
    assert crf_paths.resolve_crf_path("fused", torch.device("cuda", 0)) == "fused"
    assert ConstrainedCRF(SCHEME.allowed_transitions()).path == "auto"
    with pytest.raises(ValueError, match="crf path must be one of"):
        ConstrainedCRF(SCHEME.allowed_transitions(), path="parallel")
    assert scan.sequential_depth(512) == 10 and scan.sequential_depth(0) == 0


def test_a_crf_logs_the_path_it_takes_once(caplog):
    """The path ``auto`` resolves to is logged at the first batch, not at every one, and again when it changes."""
    crf = ConstrainedCRF(SCHEME.allowed_transitions())
    emissions, mask, _ = ragged_batch(0, n=5)
    with caplog.at_level("INFO", logger="eer_plugin.core.crf"):
        for _ in range(3):
            crf.log_partition(emissions, mask)
        crf.path = "scan"
        crf.log_partition(emissions, mask)
    messages = [r.getMessage() for r in caplog.records if r.name == "eer_plugin.core.crf"]
    assert messages == ["CRF path on cpu: sequential (path='auto')", "CRF path on cpu: scan (path='scan')"]


def test_the_fused_path_says_where_it_cannot_run(monkeypatch):
    """On a CPU tensor outside Triton's interpreter, or without Triton, the fused path stops with the reason."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    crf = ConstrainedCRF(SCHEME.allowed_transitions(), path="fused")
    emissions, mask, _ = ragged_batch(0, n=5)
    if importlib.util.find_spec("triton") is not None:
        with pytest.raises(fused.FusedUnavailable, match="runs on CUDA devices, not cpu .TRITON_INTERPRET=1"):
            crf.log_partition(emissions.float(), mask)
    monkeypatch.setitem(__import__("sys").modules, "triton", None)  # import triton fails
    assert "needs Triton" in fused.fused_unavailable_reason(torch.device("cuda", 0))
    with pytest.raises(fused.FusedUnavailable, match="needs Triton"):
        crf.viterbi(emissions.float(), mask)


def operations_of_one_step(path, n):
    """The ATen operations (each a kernel launch on a GPU) that the EER loss forward+backward and Viterbi
    issue on ``path`` (5 tags, 1 row of length ``n``)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Counter(TorchDispatchMode):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Counter.count += 1
            return func(*args, **(kwargs or {}))

    scheme = BiluoScheme(["PER"])
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end(), path=path)
    emissions = torch.randn(1, n, 5, requires_grad=True)
    mask = torch.ones(1, n, dtype=torch.bool)
    allowed = observations_to_allowed(torch.full((1, n), LATENT), 5)
    with Counter():
        eer_objective(crf, emissions, mask, allowed, scheme.entity_mask()).loss.backward()
        crf.viterbi(emissions.detach(), mask)
    return Counter.count


@pytest.mark.integration
def test_the_package_imports_without_its_optional_dependencies():
    """Triton (the fused kernels; a CPU install has none) and the extras' packages are optional:
    ``--include-package eer_plugin`` imports every module of the package without them, and a CRF on the
    fused path says why it cannot run."""
    optional = ["triton", "triton.language", "fastapi", "uvicorn", "starlette", "skopt", "matplotlib", "onnxruntime"]
    code = (
        f"import sys; sys.modules.update(dict.fromkeys({optional!r}))\n"
        "import torch\n"
        "from allennlp.common.util import import_module_and_submodules\n"
        "import_module_and_submodules('eer_plugin')\n"
        "from eer_plugin.core.crf import ConstrainedCRF\n"
        "from eer_plugin.core.fused import FusedUnavailable\n"
        "crf = ConstrainedCRF(torch.ones(3, 3, dtype=torch.bool), path='fused')\n"
        "try:\n"
        "    crf.log_partition(torch.zeros(1, 2, 3), torch.ones(1, 2, dtype=torch.bool))\n"
        "except FusedUnavailable as err:\n"
        "    print('refused:', err)\n"
    )
    env = {name: value for name, value in os.environ.items() if name != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "refused: the fused CRF path needs Triton" in done.stdout


def test_the_scan_issues_logarithmically_many_operations():
    """What sets the GPU step: the operations issued by the loss forward+backward and Viterbi grow like n on
    the sequential path and like log n on the scan (n = 64 and 512)."""
    counts = {(path, n): operations_of_one_step(path, n) for path in ("sequential", "scan") for n in (64, 512)}
    assert counts["sequential", 512] > 6 * counts["sequential", 64]  # one step per position
    assert counts["scan", 512] < 1.6 * counts["scan", 64]  # log2(513) / log2(65) = 1.5 steps
    assert counts["sequential", 512] > 10 * counts["scan", 512]


@NEEDS_TRITON
@CPU_FUSED
@pytest.mark.integration
def test_the_fused_path_issues_as_many_operations_at_any_length(monkeypatch):
    """The fused path's loss forward+backward and Viterbi issue three kernel launches whatever n, and other
    operations whose number grows only with the traceback's scan over the backpointer maps (log2 n steps)
    (n = 16 and 64: Triton's interpreter takes seconds per launch)."""
    launches = []
    launch = fused._launch
    monkeypatch.setattr(
        fused, "_launch", lambda index, *args, **kwargs: launches.append(index) or launch(index, *args, **kwargs)
    )
    counts = {}
    for n in (16, 64):
        launches.clear()
        counts[n] = operations_of_one_step("fused", n)
        assert launches == [0, 1, 2]  # forward-backward, conditional sums, Viterbi
    assert counts[16] < counts[64] < 1.1 * counts[16]  # 2 more traceback steps


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("path", PATHS)
def test_log_partition_alone_and_partial_likelihood_equal_the_sequential_path(path, device):
    """The scan's log-Z-only pass (no suffix scan: log_partition, partial_log_likelihood, and the
    restricted lattice of partial_log_likelihood_and_marginals) gives the sequential path's values and
    gradients, and a pass without marginals returns none."""
    sequential, scanned = crf_pair(3, device=device, path=path)
    emissions, mask, allowed = ragged_batch(3, n=40, device=device)
    for method in ("log_partition", "partial_log_likelihood"):
        values = []
        for crf in (sequential, scanned):
            scores = emissions.clone().requires_grad_()
            args = (scores, mask) if method == "log_partition" else (scores, mask, allowed)
            value = getattr(crf, method)(*args)
            (grad,) = torch.autograd.grad(value.sum(), scores)
            values.append((value.detach(), grad))
        torch.testing.assert_close(values[1][0], values[0][0], rtol=0, atol=1e-9)
        torch.testing.assert_close(values[1][1], values[0][1], rtol=0, atol=1e-9)
    lengths = mask.sum(-1)
    log_z, none = scanned._forward_backward(emissions, lengths, marginals=False)
    assert none is None or path == "fused"  # the fused pass computes beta beside alpha, in the same launch
    torch.testing.assert_close(log_z, scanned._forward_backward(emissions, lengths)[0], rtol=0, atol=1e-12)
