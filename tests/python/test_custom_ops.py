# ===- test_custom_ops.py - Custom ops defined in Python ------------------=== #
#
# turbine_torch.CustomOp subclasses, registered with torch.library and with
# Turbine's custom-op registry, with no C++ change:
#  * a kernel-language body: eager calls vs torch; inside a model exported
#    with turbine_torch.export it is its own dispatch (the dispatch-phase IR
#    shows it apart from the model's own kernels) and the compiled model
#    matches the eager module;
#  * a number argument of the schema reaches select and generate;
#  * a tensor-level MLIR body: eager vs torch, and in a model it is fused
#    into its neighbour's dispatch (no dispatch of its own);
#  * a hand-written vector-level kernel body;
#  * errors: wrong rank or dtype (named by select), a bad class, a duplicate.
# ===---------------------------------------------------------------------=== #
import math

import pytest
import torch

import turbine_torch
import turbine_torch.kernel as tk
from turbine_torch.custom_op import next_power_of_two

M, N, BLOCK_N = tk.symbols("M N BLOCK_N")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TURBINE_CACHE_DIR", str(tmp_path / "cache"))


def scaled_softmax_kernel(scale):
    @tk.kernel(M, name="scaled_softmax")
    def kernel(x: tk.InputBuffer[M, N], y: tk.OutputBuffer[M, N]):
        row = tk.program_id(0)
        t = tk.load(x, (row, 0), (1, BLOCK_N), tk.masked(-math.inf)) * scale
        e = tk.exp(t - tk.max(t))
        tk.store(y, (row, 0), e / tk.sum(e), tk.masked())

    return kernel


@turbine_torch.CustomOp.register(library="pyk_ops")
class scaled_softmax(turbine_torch.CustomOp):
    signature = "scaled_softmax(Tensor x, float scale=1.0) -> Tensor"

    def select(self, ksel):
        x = ksel.arg(0).require(rank=2, dtype=tk.f32)
        ksel.return_tensor(x.shape, tk.f32)
        ksel.specialize(BLOCK_N=next_power_of_two(x.shape[1]))

    def generate(self, ksel):
        return scaled_softmax_kernel(ksel.attr("scale"))


@turbine_torch.CustomOp.register(library="pyk_ops")
class gelu_plus_one(turbine_torch.CustomOp):
    """x * sigmoid(1.702 x) + 1 as linalg on tensors: the compiler fuses it."""
    signature = "gelu_plus_one(Tensor x) -> Tensor"

    def select(self, ksel):
        x = ksel.arg(0).require(dtype=tk.f32)
        ksel.return_tensor(x.shape, tk.f32)

    def generate_tensor_mlir(self, ksel):
        shape = ksel.arg(0).shape
        t = "tensor<%sxf32>" % "x".join(str(d) for d in shape)
        ids = ", ".join("d%d" % i for i in range(len(shape)))
        par = ", ".join(['"parallel"'] * len(shape))
        return """
func.func @gelu(%x: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [affine_map<({ids}) -> ({ids})>, affine_map<({ids}) -> ({ids})>],
                        iterator_types = [{par}]}} ins(%x : {t}) outs(%e : {t}) {{
  ^bb0(%a: f32, %o: f32):
    %k = arith.constant 1.702 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.mulf %a, %k : f32
    %n = arith.negf %s : f32
    %x2 = math.exp %n : f32
    %d = arith.addf %one, %x2 : f32
    %g = arith.divf %a, %d : f32
    %p = arith.addf %g, %one : f32
    linalg.yield %p : f32
  }} -> {t}
  return %r : {t}
}}""".format(t=t, ids=ids, par=par)


@turbine_torch.CustomOp.register(library="pyk_ops")
class double_1d(turbine_torch.CustomOp):
    """y = 2x, a hand-written vector-level kernel: one workgroup per element."""
    signature = "double_1d(Tensor x) -> Tensor"

    def select(self, ksel):
        x = ksel.arg(0).require(rank=1, dtype=tk.f32)
        ksel.return_tensor(x.shape, tk.f32)

    def generate_mlir(self, ksel):
        m = "memref<%dxf32>" % ksel.arg(0).shape[0]
        text = ("func.func @kernel(%state: !llvm.ptr, %x: index, %y: index, %z: index) {\n"
                "  %in = turbine.binding %state[0] : " + m + "\n"
                "  %out = turbine.binding %state[1] : " + m + "\n"
                "  %v = memref.load %in[%x] : " + m + "\n"
                "  %r = arith.addf %v, %v : f32\n"
                "  memref.store %r, %out[%x] : " + m + "\n"
                "  return\n}\n")
        return text, (ksel.arg(0).shape[0],)


def gelu_reference(x):
    return x * torch.sigmoid(1.702 * x) + 1


def test_kernel_body_eager():
    torch.manual_seed(0)
    for shape in [(5, 20), (3, 100), (1, 1)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(torch.ops.pyk_ops.scaled_softmax(x, 0.5),
                                   torch.softmax(0.5 * x, -1), atol=1e-6, rtol=1e-5)
    # The schema default.
    x = torch.randn(4, 9)
    torch.testing.assert_close(torch.ops.pyk_ops.scaled_softmax(x),
                               torch.softmax(x, -1), atol=1e-6, rtol=1e-5)


class WithCustomOp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 24)

    def forward(self, x):
        return torch.ops.pyk_ops.scaled_softmax(self.fc(x), 0.25) * 2.0


def test_kernel_body_in_exported_model_is_its_own_dispatch():
    torch.manual_seed(1)
    model = WithCustomOp().eval()
    x = torch.randn(6, 16)
    exported = turbine_torch.export(model, x)
    imported = exported.import_to("input")
    assert 'turbine.custom_op = "pyk_ops.scaled_softmax"' in imported
    assert "turbine.custom_op_attributes = {scale = 2.500000e-01 : f64}" in imported
    dispatch = exported.import_to("dispatch")
    kernels = [line.split("@")[1].split("[")[0] for line in dispatch.splitlines()
               if "turbine.dispatch @" in line]
    own = [k for k in kernels if k.startswith("pyk_ops_scaled_softmax_scaled_softmax")]
    assert len(own) == 1, kernels        # the custom op: one dispatch of its own
    assert len(kernels) >= 2, kernels    # beside the model's linear (and scale)
    compiled = exported.compile()
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(compiled(x), expected, atol=1e-6, rtol=1e-5)


class WithTensorOp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 12)

    def forward(self, x):
        return torch.ops.pyk_ops.gelu_plus_one(self.fc(x))


def test_tensor_body_eager_and_fused_in_a_model():
    torch.manual_seed(2)
    x = torch.randn(3, 7)
    torch.testing.assert_close(torch.ops.pyk_ops.gelu_plus_one(x), gelu_reference(x),
                               atol=1e-5, rtol=1e-5)
    model = WithTensorOp().eval()
    xin = torch.randn(5, 8)
    exported = turbine_torch.export(model, xin)
    dispatch = exported.import_to("dispatch")
    dispatches = [line for line in dispatch.splitlines() if "turbine.dispatch @" in line]
    # The linear's matmul + bias and the op's elementwise body: one kernel.
    assert len(dispatches) == 1, dispatch
    assert "gelu" not in dispatches[0]
    with torch.no_grad():
        expected = model(xin)
    torch.testing.assert_close(exported.compile()(xin), expected, atol=1e-5, rtol=1e-5)


def test_hand_written_kernel_body():
    x = torch.tensor([1.0, -2.0, 3.5, 4.0, 5.0])
    assert torch.equal(torch.ops.pyk_ops.double_1d(x), x * 2)

    class M1(torch.nn.Module):
        def forward(self, x):
            return torch.ops.pyk_ops.double_1d(x) + x

    compiled = turbine_torch.export(M1(), x).compile()
    assert torch.equal(compiled(x), x * 3)


def test_select_errors_name_op_and_argument():
    with pytest.raises(RuntimeError, match="custom op 'pyk_ops.scaled_softmax': argument 'x': "
                                           "expected rank 2, got 3"):
        torch.ops.pyk_ops.scaled_softmax(torch.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="custom op 'pyk_ops.scaled_softmax': argument 'x': "
                                           "expected dtype f32, got f64"):
        torch.ops.pyk_ops.scaled_softmax(torch.randn(2, 3).double())

    class Bad(torch.nn.Module):
        def forward(self, x):
            return torch.ops.pyk_ops.double_1d(x)

    with pytest.raises(RuntimeError, match="argument 'x': expected rank 1, got 2"):
        turbine_torch.export(Bad(), torch.randn(2, 2)).compile()


def test_registration_errors():
    class no_signature(turbine_torch.CustomOp):
        def select(self, ksel):
            pass

        def generate(self, ksel):
            pass

    with pytest.raises(TypeError, match="needs a signature"):
        turbine_torch.register_custom_op(no_signature, "pyk_ops")

    class two_bodies(turbine_torch.CustomOp):
        signature = "two_bodies(Tensor x) -> Tensor"

        def generate(self, ksel):
            pass

        def generate_mlir(self, ksel):
            pass

    with pytest.raises(TypeError, match="exactly one of generate"):
        turbine_torch.register_custom_op(two_bodies, "pyk_ops")

    with pytest.raises(ValueError, match="'pyk_ops.scaled_softmax' is already registered"):
        turbine_torch.register_custom_op(scaled_softmax, "pyk_ops")

    @turbine_torch.CustomOp.register(library="pyk_ops")
    class no_result(turbine_torch.CustomOp):
        signature = "no_result(Tensor x) -> Tensor"

        def select(self, ksel):
            pass

        def generate(self, ksel):
            pass

    with pytest.raises(RuntimeError, match="select chose no results"):
        torch.ops.pyk_ops.no_result(torch.randn(2))

    @turbine_torch.CustomOp.register(library="pyk_ops")
    class not_a_kernel(turbine_torch.CustomOp):
        signature = "not_a_kernel(Tensor x) -> Tensor"

        def select(self, ksel):
            ksel.return_tensor(ksel.arg(0).shape, tk.f32)

        def generate(self, ksel):
            return "oops"

    with pytest.raises(RuntimeError, match="generate must return a kernel"):
        torch.ops.pyk_ops.not_a_kernel(torch.randn(2))
