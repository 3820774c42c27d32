#!/usr/bin/env python3
"""Copies ONNX backend node tests with some graph inputs folded into constants.

Many node tests pass values that fix an output shape (Resize scales/sizes,
TopK's K, a window's size, STFT's frame_step) as graph inputs, so the
test's model cannot be compiled ahead of time for static shapes. This
script makes a variant of such a test in which those inputs are initializers
holding the test's own data (from each data set: a data set whose folded
values differ from the first one's is dropped), with the remaining inputs
renumbered. The op's semantics are then checked against ONNX's reference
outputs unchanged. With the suffix "@dynamic" the remaining inputs and the
outputs also get symbolic dims, so the model is compiled for dynamic shapes
(paths that compute sizes and coordinates at run time) and run on the
test's data.

Usage: fold_inputs.py SRC_DATA_DIR OUT_DATA_DIR TEST=INPUT[,INPUT...][@dynamic] ...
Writes OUT_DATA_DIR/node/<TEST>_const_inputs[_dynamic_dims]/.
"""
import glob
import os
import shutil
import sys

import onnx
from onnx import numpy_helper


def make_dims_symbolic(values):
    for value in values:
        for k, dim in enumerate(value.type.tensor_type.shape.dim):
            dim.Clear()
            dim.dim_param = f"{value.name}_d{k}"


def fold(src_root, out_root, test, names, dynamic):
    src = os.path.join(src_root, "node", test)
    suffix = "_const_inputs_dynamic_dims" if dynamic else "_const_inputs"
    dst = os.path.join(out_root, "node", test + suffix)
    model = onnx.load(os.path.join(src, "model.onnx"))
    graph = model.graph
    inputs = [i.name for i in graph.input]
    missing = [n for n in names if n not in inputs]
    if missing:
        sys.exit(f"{test}: no graph input named {missing}")
    folded_positions = [inputs.index(n) for n in names]
    data_sets = sorted(glob.glob(os.path.join(src, "test_data_set_*")))
    first = {}
    for pos, name in zip(folded_positions, names):
        tensor = onnx.TensorProto()
        with open(os.path.join(data_sets[0], f"input_{pos}.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        tensor.name = name
        first[name] = tensor
    kept_inputs = [i for i in graph.input if i.name not in names]
    del graph.input[:]
    graph.input.extend(kept_inputs)
    graph.initializer.extend(first.values())
    if dynamic:
        make_dims_symbolic(graph.input)
        make_dims_symbolic(graph.output)
        del graph.value_info[:]
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    for k, data_set in enumerate(data_sets):
        same = all(
            open(os.path.join(data_set, f"input_{pos}.pb"), "rb").read()
            == open(os.path.join(data_sets[0], f"input_{pos}.pb"), "rb").read()
            for pos in folded_positions)
        if not same:
            continue
        out_set = os.path.join(dst, os.path.basename(data_set))
        os.makedirs(out_set)
        kept = [p for p in range(len(inputs)) if p not in folded_positions]
        for new, old in enumerate(kept):
            shutil.copy(os.path.join(data_set, f"input_{old}.pb"),
                        os.path.join(out_set, f"input_{new}.pb"))
        for out in glob.glob(os.path.join(data_set, "output_*.pb")):
            shutil.copy(out, out_set)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src_root, out_root = sys.argv[1], sys.argv[2]
    for spec in sys.argv[3:]:
        test, _, names = spec.partition("=")
        names, _, flag = names.partition("@")
        fold(src_root, out_root, test, names.split(","), flag == "dynamic")


if __name__ == "__main__":
    main()
