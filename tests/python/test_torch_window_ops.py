# ===- test_torch_window_ops.py - transposed convolution, average pooling -=== #
#
# TorchScript importer coverage checked against torch eager (atol 1e-5):
# nn.ConvTranspose1d/2d (traced: aten::_convolution with transposed=True;
# scripted: aten::conv_transpose1d/2d) with stride, padding larger than the
# kernel span, output_padding, groups, dilation, no bias, a filter that is a
# forward input instead of a parameter, a dynamic batch; and avg_pool2d with
# count_include_pad=False over padding, ceil_mode windows that overhang the
# input, divisor_override, and dynamic spatial dims.
# ===---------------------------------------------------------------------=== #
import pytest
import torch
import torch.nn.functional as F

import turbine_torch

ATOL, RTOL = 1e-5, 1e-4


def compare(module, *inputs, dynamic_dims=None, runs=None, scripted=False):
    module = module.eval()
    captured = torch.jit.script(module) if scripted else module
    compiled = turbine_torch.export(captured, *inputs, dynamic_dims=dynamic_dims).compile()
    for args in runs or [inputs]:
        with torch.no_grad():
            torch.testing.assert_close(compiled(*args), module(*args), atol=ATOL, rtol=RTOL)


TRANSPOSED = [
    (dict(in_channels=3, out_channels=4, kernel_size=3), (2, 3, 5, 5)),
    (dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1, output_padding=1),
     (1, 3, 5, 6)),
    (dict(in_channels=4, out_channels=6, kernel_size=(3, 2), stride=(2, 3), padding=(2, 0),
          groups=2, dilation=(1, 2)), (1, 4, 4, 5)),
    # padding 3 > dilation * (k - 1) = 3? equal: no zero border; 4x4 kernel
    (dict(in_channels=4, out_channels=2, kernel_size=4, stride=2, padding=3, bias=False),
     (1, 4, 6, 6)),
]


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("args,shape", TRANSPOSED)
def test_conv_transpose2d(args, shape, scripted):
    torch.manual_seed(0)
    compare(torch.nn.ConvTranspose2d(**args), torch.randn(*shape), scripted=scripted)


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
def test_conv_transpose1d(scripted):
    torch.manual_seed(1)
    compare(torch.nn.ConvTranspose1d(3, 5, 3, stride=2, padding=1), torch.randn(2, 3, 7),
            scripted=scripted)


def test_conv_transpose_filter_input_and_dynamic_batch():
    class WithFilter(torch.nn.Module):
        def forward(self, x, w):
            return F.conv_transpose2d(x, w, stride=2, padding=1)

    torch.manual_seed(2)
    compare(WithFilter(), torch.randn(1, 3, 5, 5), torch.randn(3, 2, 3, 3))
    m = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
    compare(m, torch.randn(1, 3, 5, 6), dynamic_dims={0: 0},
            runs=[(torch.randn(1, 3, 5, 6),), (torch.randn(3, 3, 5, 6),)])


POOLS = [
    (dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), (2, 3, 7, 8)),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), (1, 2, 6, 6)),
    (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
     (1, 2, 6, 7)),
    (dict(kernel_size=2, stride=2, padding=1, divisor_override=3), (1, 2, 5, 5)),
]


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
@pytest.mark.parametrize("args,shape", POOLS)
def test_avg_pool2d(args, shape, scripted):
    torch.manual_seed(3)
    compare(torch.nn.AvgPool2d(**args), torch.randn(*shape), scripted=scripted)


def test_avg_pool2d_dynamic_spatial_dims():
    torch.manual_seed(4)
    m = torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
    compare(m, torch.randn(2, 3, 7, 8), dynamic_dims={0: [2, 3]},
            runs=[(torch.randn(2, 3, 7, 8),), (torch.randn(2, 3, 9, 6),)])
