"""Writes the ONNX Loop models of onnx-loop-runtime.mlir: Loops with a
run-time trip count M (a graph input) that Turbine refuses at compile time
or checks at run time.
Usage: loop_models.py KIND OUTPUT.onnx
  carried-shape   the loop-carried value grows every iteration (Concat)
  carried-seq     a sequence is carried (SequenceInsert in the body)
  scan-shape      a scan output's slice grows every iteration (Slice to i+1)
"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper


def main(kind, path):
    f32, i64, b1 = T.FLOAT, T.INT64, T.BOOL
    scalar = lambda name, t: helper.make_tensor_value_info(name, t, [])
    cond = helper.make_node("Identity", ["c"], ["c_out"])
    if kind == "carried-shape":
        nodes = [cond, helper.make_node("Concat", ["v", "v"], ["v_out"], axis=0)]
        carried_in = [helper.make_tensor_value_info("v", f32, ["n"])]
        body_out = [helper.make_tensor_value_info("v_out", f32, ["m"])]
        loop_inputs, outputs = ["x"], [helper.make_tensor_value_info("y", f32, ["k"])]
        graph_inputs, inits, opset = [helper.make_tensor_value_info("x", f32, [2])], [], 13
    elif kind == "carried-seq":
        nodes = [cond, helper.make_node("SequenceInsert", ["s", "x"], ["s_out"])]
        seq = helper.make_tensor_sequence_value_info
        carried_in = [seq("s", f32, [2])]
        body_out = [seq("s_out", f32, [2])]
        loop_inputs, outputs = ["empty"], [seq("y", f32, [2])]
        nodes_outer = [helper.make_node("SequenceEmpty", [], ["empty"], dtype=f32)]
        graph_inputs, inits, opset = [helper.make_tensor_value_info("x", f32, [2])], [], 13
    else:
        nodes = [cond, helper.make_node("Add", ["i", "one"], ["end"]),
                 helper.make_node("Unsqueeze", ["end", "axes"], ["ends"]),
                 helper.make_node("Slice", ["data", "starts", "ends"], ["part"])]
        carried_in, body_out = [], [helper.make_tensor_value_info("part", f32, ["p"])]
        loop_inputs = []
        outputs = [helper.make_tensor_value_info("parts", f32, ["k", "p"])]
        graph_inputs = []
        inits = [helper.make_tensor("data", f32, [4], [1, 2, 3, 4]),
                 helper.make_tensor("one", i64, [], [1]),
                 helper.make_tensor("axes", i64, [1], [0]),
                 helper.make_tensor("starts", i64, [1], [0])]
        opset = 13
    body = helper.make_graph(nodes, "body", [scalar("i", i64), scalar("c", b1)] + carried_in,
                             [scalar("c_out", b1)] + body_out)
    loop = helper.make_node("Loop", ["M", "go"] + loop_inputs, [o.name for o in outputs],
                            body=body, name="the_loop")
    outer = nodes_outer if kind == "carried-seq" else []
    graph = helper.make_graph(outer + [loop], kind,
                              [scalar("M", i64), scalar("go", b1)] + graph_inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
