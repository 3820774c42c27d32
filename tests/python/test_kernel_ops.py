# ===- test_kernel_ops.py - Turbine Kernels as torch ops -----------------=== #
#
# torch.ops.turbine.{softmax, layer_norm, matmul, attention}: the kernel
# library's kernels compiled on first call and cached, checked against torch
# (atol 1e-5, f16 matmul against an f32 product of the same f16 values), on
# shapes that are not multiples of the tile sizes; compile once, then cache
# hits; errors.
# ===---------------------------------------------------------------------=== #
import os

import pytest
import torch

import turbine_torch


@pytest.fixture(scope="module", autouse=True)
def library(tmp_path_factory):
    # A private disk cache: the test must not depend on earlier runs.
    os.environ["TURBINE_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernel-cache"))
    turbine_torch.load_library()


def test_softmax():
    torch.manual_seed(0)
    for shape in [(37, 100), (5, 128), (1, 3)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(torch.ops.turbine.softmax(x), torch.softmax(x, -1),
                                   atol=1e-5, rtol=1e-5)


def test_layer_norm():
    torch.manual_seed(1)
    x, w, b = torch.randn(9, 50), torch.randn(50), torch.randn(50)
    expected = torch.nn.functional.layer_norm(x, (50,), w, b, eps=1e-3)
    torch.testing.assert_close(torch.ops.turbine.layer_norm(x, w, b, 1e-3), expected,
                               atol=1e-5, rtol=1e-4)


def test_matmul_f32_and_f16():
    torch.manual_seed(2)
    a, b = torch.randn(33, 70), torch.randn(70, 45)
    torch.testing.assert_close(torch.ops.turbine.matmul(a, b), a @ b, atol=1e-4, rtol=1e-4)
    ah, bh = a.half(), b.half()
    got = torch.ops.turbine.matmul(ah, bh)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, ah.float() @ bh.float(), atol=1e-4, rtol=1e-4)


def test_attention():
    torch.manual_seed(3)
    q, k, v = torch.randn(2, 20, 64), torch.randn(2, 30, 64), torch.randn(2, 30, 64)
    expected = torch.softmax(q @ k.transpose(1, 2) / 8.0, dim=-1) @ v
    torch.testing.assert_close(torch.ops.turbine.attention(q, k, v), expected,
                               atol=1e-5, rtol=1e-4)


def test_errors():
    with pytest.raises(RuntimeError, match="custom op 'turbine.softmax': x must be f32, got f64"):
        torch.ops.turbine.softmax(torch.randn(2, 3).double())
    with pytest.raises(RuntimeError, match="custom op 'turbine.softmax': x must have rank 2, got 3"):
        torch.ops.turbine.softmax(torch.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"turbine.matmul': expected a \[M, K\] and b \[K, N\], "
                                           r"got \[2, 3\] and \[4, 5\]"):
        torch.ops.turbine.matmul(torch.randn(2, 3), torch.randn(4, 5))
    with pytest.raises(RuntimeError, match="must have x.size\\(1\\) = 5 elements"):
        torch.ops.turbine.layer_norm(torch.randn(2, 5), torch.randn(4), torch.randn(5), 1e-5)
    with pytest.raises(RuntimeError, match="eps must be >= 0"):
        torch.ops.turbine.layer_norm(torch.randn(2, 5), torch.randn(5), torch.randn(5), -1.0)
