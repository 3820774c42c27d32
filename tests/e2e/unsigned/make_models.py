"""Writes tiny ONNX models on unsigned integers for the e2e.unsigned tests.

Each model is one node whose result differs between signed and unsigned
semantics for the values the tests feed (e.g. 65000 / 2 on uint16 is 32500,
but -268 if the bits were read as int16), so a signedness bug fails the test.
Usage: make_models.py OUTPUT_DIR
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def save(out_dir, name, node, inputs, outputs, initializers=()):
    graph = helper.make_graph([node], name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def tensor(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    u16, u32, u64, u8 = TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64, TensorProto.UINT8
    save(out_dir, "div_u16", helper.make_node("Div", ["x", "y"], ["z"]),
         [tensor("x", u16, [4]), tensor("y", u16, [4])], [tensor("z", u16, [4])])
    save(out_dir, "max_u32", helper.make_node("Max", ["x", "y"], ["z"]),
         [tensor("x", u32, [3]), tensor("y", u32, [3])], [tensor("z", u32, [3])])
    save(out_dir, "less_u64", helper.make_node("Less", ["x", "y"], ["z"]),
         [tensor("x", u64, [3]), tensor("y", u64, [3])], [tensor("z", TensorProto.BOOL, [3])])
    save(out_dir, "cast_u32_f64", helper.make_node("Cast", ["x"], ["z"], to=TensorProto.DOUBLE),
         [tensor("x", u32, [2])], [tensor("z", TensorProto.DOUBLE, [2])])
    save(out_dir, "cast_u8_i32", helper.make_node("Cast", ["x"], ["z"], to=TensorProto.INT32),
         [tensor("x", u8, [2])], [tensor("z", TensorProto.INT32, [2])])
    save(out_dir, "mod_u8", helper.make_node("Mod", ["x", "y"], ["z"]),
         [tensor("x", u8, [2]), tensor("y", u8, [2])], [tensor("z", u8, [2])])
    bounds = [helper.make_tensor("lo", u8, [], [10]), helper.make_tensor("hi", u8, [], [250])]
    save(out_dir, "clip_u8", helper.make_node("Clip", ["x", "lo", "hi"], ["z"]),
         [tensor("x", u8, [3])], [tensor("z", u8, [3])], bounds)
    save(out_dir, "reducemax_u32", helper.make_node("ReduceMax", ["x"], ["z"], keepdims=0),
         [tensor("x", u32, [3])], [tensor("z", u32, [])])
    save(out_dir, "argmax_u16", helper.make_node("ArgMax", ["x"], ["z"], axis=0, keepdims=0),
         [tensor("x", u16, [3])], [tensor("z", TensorProto.INT64, [])])


if __name__ == "__main__":
    main()
