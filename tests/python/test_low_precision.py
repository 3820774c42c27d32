# ===- test_low_precision.py - f16 / bf16 models against f32 arithmetic ----=== #
#
# Models whose weights and inputs are f16 or bf16 (scripted: torch 1.13 has
# no f16 matmul on CPU to trace with) compiled by turbine_torch.export and
# compared with the same model in f32 on the very same (rounded) values: the
# only differences allowed are roundings of intermediate results to the low
# precision type (atol/rtol 2e-2 for bf16, 5e-3 for f16, on outputs of
# magnitude ~1). A long reduction (K = 2048) checks that matmuls accumulate
# in f32 (turbine-accumulate-in-f32): summed in bf16, 2048 x 0.01 stalls
# near 2 instead of reaching 20.5.
# Environment (set by ctest): TURBINE_TORCH_LIBRARY, PYTHONPATH.
# ===---------------------------------------------------------------------=== #
import pytest
import torch

import turbine_torch

TOLERANCE = {torch.bfloat16: 2e-2, torch.float16: 5e-3}


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(96, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):
        return self.depthwise(torch.relu(self.conv(x))).mean((2, 3))


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-1, -2)) * 0.25
        return torch.matmul(torch.softmax(scores.float(), -1).to(q.dtype), v)


def compiled(model, *inputs):
    return turbine_torch.export(torch.jit.script(model), *inputs).compile(device="local-sync")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("case", ["mlp", "conv", "attention"])
def test_low_precision_model_matches_f32_arithmetic(dtype, case):
    torch.manual_seed(0)
    if case == "mlp":
        model, inputs = Mlp(), [torch.randn(4, 96)]
    elif case == "conv":
        model, inputs = ConvNet(), [torch.randn(2, 3, 16, 16)]
    else:
        model, inputs = Attention(), [torch.randn(2, 6, 16), torch.randn(2, 9, 16),
                                      torch.randn(2, 9, 16)]
    model = model.eval().to(dtype)
    low = [x.to(dtype) for x in inputs]
    with torch.no_grad():
        want = model.float()(*[x.float() for x in low])
    model = model.to(dtype)
    got = compiled(model, *low)(*low)
    assert got.dtype == dtype
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(got.float(), want, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_matmul_accumulates_in_f32(dtype):
    linear = torch.nn.Linear(2048, 4, bias=False).eval()
    with torch.no_grad():
        linear.weight.fill_(0.01)
    linear = linear.to(dtype)
    x = torch.ones(1, 2048, dtype=dtype)
    got = compiled(linear, x)(x).float()
    exact = 2048 * float(torch.tensor(0.01, dtype=dtype))  # the rounded weight, summed exactly
    torch.testing.assert_close(got, torch.full((1, 4), exact), atol=0.0, rtol=TOLERANCE[dtype])


@pytest.mark.parametrize("rows", [2, 5, 13, 40])
def test_bf16_gemm_matches_f32_arithmetic(rows):
    # Prefill-like GEMMs (rows not a multiple of the 8-row tile, K odd, N a
    # few 32-column panels): vdpbf16ps tiles on a CPU with AVX512-BF16
    # (Bf16MatmulCodegen.cpp), the f32 strategy elsewhere. Reference: the
    # same bf16 values multiplied in f32 by torch; the output is rounded to
    # bf16 (relative 2^-8), hence the bf16 tolerance.
    torch.manual_seed(rows)
    linear = torch.nn.Linear(67, 96).eval().to(torch.bfloat16)
    x = torch.randn(rows, 67).to(torch.bfloat16)
    with torch.no_grad():
        want = torch.nn.functional.linear(x.float(), linear.weight.float(), linear.bias.float())
    got = compiled(linear, x)(x)
    assert got.dtype == torch.bfloat16
    tol = TOLERANCE[torch.bfloat16]
    torch.testing.assert_close(got.float(), want, atol=tol, rtol=tol)
