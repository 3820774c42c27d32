#!/usr/bin/python3
"""nested_models.py - deeply nested ONNX control flow for onnx-nested-control-flow.mlir.

  nested_models.py loops DEPTH TRIP OUT.onnx   Loop(TRIP) nested DEPTH deep; the
                                               innermost body adds 1 to x, so the
                                               result is x + TRIP**DEPTH
  nested_models.py ifs DEPTH OUT.onnx          If nested DEPTH deep (then-branch
                                               holds the next If)
"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper

vi = helper.make_tensor_value_info


def loops(depth, trip):
    def body(level):
        one = helper.make_tensor("one%d" % level, T.FLOAT, [1], [1.0])
        nodes = [helper.make_node("Identity", ["c%d" % level], ["co%d" % level])]
        if level == depth - 1:
            nodes.append(helper.make_node("Add", ["v%d" % level, "one%d" % level], ["vo%d" % level]))
        else:
            nodes.append(helper.make_node("Constant", [], ["tr%d" % level],
                                          value=helper.make_tensor("t", T.INT64, [], [trip])))
            nodes.append(helper.make_node("Constant", [], ["cc%d" % level],
                                          value=helper.make_tensor("b", T.BOOL, [], [True])))
            nodes.append(helper.make_node("Loop", ["tr%d" % level, "cc%d" % level, "v%d" % level],
                                          ["vo%d" % level], body=body(level + 1)))
        return helper.make_graph(
            nodes, "body%d" % level,
            [vi("i%d" % level, T.INT64, []), vi("c%d" % level, T.BOOL, []), vi("v%d" % level, T.FLOAT, [1])],
            [vi("co%d" % level, T.BOOL, []), vi("vo%d" % level, T.FLOAT, [1])], [one])

    trip_tensor = helper.make_tensor("trip", T.INT64, [], [trip])
    cond = helper.make_tensor("cond", T.BOOL, [], [True])
    g = helper.make_graph([helper.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body(0))], "g",
                          [vi("x", T.FLOAT, [1])], [vi("y", T.FLOAT, [1])], [trip_tensor, cond])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def ifs(depth):
    def make(level):
        out = "y%d" % level
        if level == depth:
            return helper.make_node("Identity", ["x"], [out])
        inner = make(level + 1)
        then_g = helper.make_graph([inner], "t%d" % level, [], [vi(inner.output[0], T.FLOAT, [1])])
        else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e%d" % level])], "e%d" % level, [],
                                   [vi("e%d" % level, T.FLOAT, [1])])
        return helper.make_node("If", ["c"], [out], then_branch=then_g, else_branch=else_g)

    g = helper.make_graph([make(0)], "g", [vi("x", T.FLOAT, [1]), vi("c", T.BOOL, [])],
                          [vi("y0", T.FLOAT, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    if sys.argv[1] == "loops":
        model = loops(int(sys.argv[2]), int(sys.argv[3]))
    else:
        model = ifs(int(sys.argv[2]))
    with open(sys.argv[-1], "wb") as f:
        f.write(model.SerializeToString())
