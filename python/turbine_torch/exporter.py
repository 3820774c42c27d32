# ===- exporter.py - iree-turbine's aot.export workflow on TorchScript ---=== #
#
#   exported = turbine_torch.export(model, example_input, dynamic_dims={0: [0]})
#   exported.print_readable()            # the imported IR (input phase)
#   exported.import_to("global-opt")     # IR after any compiler phase, as text
#   exported.save_mlir("model.mlir")
#   compiled = exported.compile(save_to="model.tmod")   # or save_to=None
#   compiled(example_input)              # torch tensors in, torch tensors out
#   exported.compile(save_to="m.tmod", externalize_params="m.irpa")  # weights
#                                        # in m.irpa (or .safetensors), by name
#   exported.compile(save_to="m.tmod", externalize_params="m.irpa",
#                    externalize=["fc.weight"],              # only these move
#                    rename={"fc.weight.T": "layer0.w"})    # names in the file
#
# Custom ops defined in Python (turbine_torch.CustomOp) compile the same way.
#
# A model may call Turbine's kernel ops (torch.ops.turbine.softmax, ...): each
# call compiles into that kernel's own dispatch, specialized to the static
# shapes at that point (a dynamic dim reaching such a call is an error).
#
# torch 1.13 has no torch.export: the module is traced (or taken as is when
# it is already a ScriptModule), saved with torch.jit.save, and compiled in
# this process by torch.ops.turbine.compile_torchscript (the TorchScript
# frontend and the compiler inside libturbine_torch.so).
# ===---------------------------------------------------------------------=== #
import io
import os
import tempfile

import torch

from .runtime import CompiledModule, load_library

_DTYPE_NAMES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
    torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "i1",
}


def dtype_name(dtype):
    """Turbine's name of a torch dtype ("f32", "i64", ...)."""
    if dtype not in _DTYPE_NAMES:
        raise TypeError("dtype %s is not supported by Turbine" % dtype)
    return _DTYPE_NAMES[dtype]


def _input_spec(index, value):
    if not isinstance(value, torch.Tensor):
        raise TypeError("example input %d is a %s; export takes tensors"
                        % (index, type(value).__name__))
    if value.dtype not in _DTYPE_NAMES:
        raise TypeError("example input %d has dtype %s, which Turbine does not support"
                        % (index, value.dtype))
    dims = [str(d) for d in value.shape]
    return "x".join(dims + [_DTYPE_NAMES[value.dtype]])


def _dynamic_dim_specs(dynamic_dims):
    """{input index or name: dim or [dims]} -> ["0:0", "x:1", ...]."""
    specs = []
    for key, dims in (dynamic_dims or {}).items():
        for dim in (dims if isinstance(dims, (list, tuple)) else [dims]):
            specs.append("%s:%d" % (key, dim))
    return specs


class ExportedProgram:
    """A module captured as TorchScript, ready to be compiled by Turbine."""

    def __init__(self, archive, input_shapes, dynamic_dims, state_dict=None,
                 function_shapes=(), externalize=(), immutable_globals=()):
        self._archive = archive
        self._input_shapes = input_shapes
        self._dynamic_dims = dynamic_dims
        self._state_dict = state_dict or {}
        # A program of several procedures (aot.py): "METHOD:SHAPE,..." each.
        self._function_shapes = list(function_shapes)
        # What goes to the parameter file when compile() names none.
        self._externalize = list(externalize)
        # Globals declared immutable (aot.export_global(mutable=False)).
        self._immutable_globals = list(immutable_globals)

    def _compile(self, compile_to, externalize_params="", externalize_min_bytes=256,
                 options=None, externalize_names=(), renames=()):
        load_library()
        data = torch.frombuffer(bytearray(self._archive), dtype=torch.uint8)
        flags = ["%s=%s" % (name, value) for name, value in (options or {}).items()]
        out = torch.ops.turbine.compile_torchscript(
            data, self._input_shapes, self._dynamic_dims, compile_to,
            externalize_params, externalize_min_bytes, flags, list(externalize_names),
            list(renames), self._function_shapes)
        return out.numpy().tobytes()

    def _state_key(self, tensor):
        """The state_dict key of a parameter or buffer of the module."""
        for key, value in self._state_dict.items():
            if value is tensor or (value.data_ptr() == tensor.data_ptr() and
                                   value.shape == tensor.shape and value.dtype == tensor.dtype):
                return key
        raise ValueError("externalize: a tensor of shape %s is not a parameter or buffer of "
                         "the exported module" % list(tensor.shape))

    def import_to(self, phase="input", **options):
        """The IR after compiler phase `phase` (input, global-opt, dispatch,
        codegen, link), as text; keyword arguments are compile options (see
        compile)."""
        return self._compile(phase, options=options).decode("utf-8")

    def print_readable(self):
        print(self.import_to("input"))

    def save_mlir(self, path):
        with open(path, "w") as f:
            f.write(self.import_to("input"))

    def compile(self, save_to=None, device="local-task", externalize_params=None,
                externalize_min_bytes=256, externalize=None, rename=None, weights_from=None,
                parameter_name_map=None, **options):
        """Compiles to an artifact; writes it to `save_to` when given. Returns
        the loaded module, callable on torch tensors. With `externalize_params`
        (a .irpa or .safetensors path) the weights of at least
        `externalize_min_bytes` bytes are written there instead of into the
        artifact, named after the module's parameters (state_dict keys), and
        the returned module is loaded with that file; load the artifact later
        with turbine_torch.load(path, parameters=[externalize_params]).

        `externalize` marks which weights go out instead of a size threshold:
        a list of state_dict keys or of the module's parameter tensors (a
        weight the importer stored rearranged, `fc.weight.T`, goes with its
        key); `rename` ({compiled name: name in the file}) renames what goes
        out, in the file and in the artifact.

        `weights_from` (a GGUF file, as `turbine compile --weights-from`):
        the weights the file holds become external parameters named as its
        tensors and read in the file's own types (F32 / F16 / BF16 rows,
        Q8_0 / Q4_0 blocks; matmul weights, the token embedding's table and
        norm weights), so the artifact does not carry them; the returned
        module is loaded with the file. `parameter_name_map` (a file of
        `GGUF_NAME = STATE_DICT_KEY` rules, e.g. examples/llm/llama.names)
        renames the file's tensors to the module's keys. Load a saved
        artifact later with turbine_torch.load(path, parameters=[weights_from]).

        Other keyword arguments are compile options, as `turbine compile`
        has them: target, target_cpu, opt_level, matmul_data_tiling and
        matmul_kernel_pack ("auto", "off", "all"), quantize_weights ("none",
        "int8", "int4"), group_size, quantize_exclude (a regular expression
        over parameter names: those weights stay f32), dump_phases."""
        if externalize_params is not None:
            externalize_params = os.fspath(externalize_params)
        if externalize_min_bytes < 0:
            raise ValueError("externalize_min_bytes must be >= 0")
        if externalize is None and externalize_params:
            externalize = self._externalize
        names = [k if isinstance(k, str) else self._state_key(k) for k in (externalize or [])]
        renames = ["%s=%s" % (k, v) for k, v in (rename or {}).items()]
        if (names or renames) and not externalize_params:
            raise ValueError("externalize / rename need externalize_params (the file to write)")
        if parameter_name_map is not None and weights_from is None:
            raise ValueError("parameter_name_map renames the tensors of weights_from, which "
                             "is not given")
        if weights_from is not None:
            weights_from = os.fspath(weights_from)
            options = dict(options, weights_from=weights_from)
            if parameter_name_map is not None:
                options["parameter_name_map"] = os.fspath(parameter_name_map)
        artifact = self._compile("", externalize_params or "", externalize_min_bytes,
                                 options, names, renames)
        parameters = [externalize_params] if externalize_params else []
        if weights_from is not None:
            parameters.append(weights_from)
        # The runtime reads the whole file at load; the copy can go after.
        fd, path = tempfile.mkstemp(suffix=".tmod")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(artifact)
            compiled = CompiledModule(path, device, parameters)
        finally:
            os.unlink(path)
        written = [g.name for g in compiled.globals()
                   if g.mutable and g.name in self._immutable_globals]
        if written:
            raise ValueError("global(s) %s are declared export_global(mutable=False) but a "
                             "procedure writes them" % ", ".join(written))
        if save_to is not None:
            with open(save_to, "wb") as f:
                f.write(artifact)
        return compiled


def export(module, *example_args, dynamic_dims=None):
    """Captures `module` (an nn.Module, traced on `example_args`, or a
    ScriptModule) for Turbine. `dynamic_dims` marks dims left symbolic:
    {input index or forward argument name: dim or [dims]}."""
    shapes = [_input_spec(i, a) for i, a in enumerate(example_args)]
    if isinstance(module, torch.jit.ScriptModule):
        scripted = module
    else:
        module = module.eval()
        with torch.no_grad():
            scripted = torch.jit.trace(module, example_args)
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    state = {k: v for k, v in module.state_dict(keep_vars=True).items()}
    return ExportedProgram(buffer.getvalue(), shapes, _dynamic_dim_specs(dynamic_dims), state)
