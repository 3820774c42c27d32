"""Writes ONNX op cases for the onnx_ops e2e tests: CASE.onnx plus
CASE_in<i>.npy inputs and CASE_out<i>.npy expected outputs.

References are independent of Turbine:
- RNN/GRU/LSTM: PyTorch modules (exported with torch.onnx: bidirectional GRU
  with linear_before_reset=1, bidirectional LSTM, batch-first LSTM, ReLU RNN)
  and a plain NumPy loop for what the exporter never emits (sequence_lens,
  reverse direction, clip, LeakyRelu with alpha; a bidirectional batch-first
  LSTM with peepholes, input_forget and HardSigmoid alpha/beta).
- Loop run in the host program (run-time trip count, early stop by the
  condition, no trip count, scan outputs): a plain Python/NumPy loop.
- Random ops (RandomUniform/Normal(Like), Bernoulli): exact cases
  (Bernoulli of 0/1 probabilities, equal seeds draw equally) and statistics
  of 10^5 draws (mean, variance, range, hit rate; checked with tolerances).
- Dropout in training mode: exact cases (ratio 0 keeps x, ratio 1 drops all,
  training_mode false is the identity) and the kept fraction of a large
  tensor, which must be close to 1 - ratio (checked with a tolerance).
Usage: make_cases.py OUTPUT_DIR
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def save_arrays(out_dir, case, inputs, outputs):
    for i, v in enumerate(inputs):
        np.save(os.path.join(out_dir, f"{case}_in{i}.npy"), v)
    for i, v in enumerate(outputs):
        np.save(os.path.join(out_dir, f"{case}_out{i}.npy"), v)


class Unpack(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x):
        y, h = self.cell(x)
        return (y, h[0], h[1]) if isinstance(h, tuple) else (y, h)


def torch_cases(out_dir):
    torch.manual_seed(0)
    cases = [("gru_bidirectional", torch.nn.GRU(3, 4, bidirectional=True), (5, 2, 3)),
             ("lstm_bidirectional", torch.nn.LSTM(3, 4, bidirectional=True), (5, 2, 3)),
             ("rnn_relu_bidirectional", torch.nn.RNN(3, 4, bidirectional=True, nonlinearity="relu"), (5, 2, 3)),
             ("lstm_batch_first", torch.nn.LSTM(3, 5, batch_first=True), (2, 4, 3))]
    for case, cell, shape in cases:
        model = Unpack(cell).eval()
        x = torch.randn(*shape)
        torch.onnx.export(model, (x,), os.path.join(out_dir, case + ".onnx"), opset_version=14)
        with torch.no_grad():
            outs = model(x)
        save_arrays(out_dir, case, [x.numpy()], [o.numpy() for o in outs])


def numpy_rnn_case(out_dir, direction):
    """RNN with sequence_lens, initial_h, clip and LeakyRelu(alpha=0.2)."""
    rng = np.random.default_rng(1)
    T, B, I, H = 4, 3, 2, 3
    node = helper.make_node("RNN", ["X", "W", "R", "B", "L", "H0"], ["Y", "Y_h"], hidden_size=H,
                            direction=direction, clip=0.7, activations=["LeakyRelu"],
                            activation_alpha=[0.2])
    f32 = TensorProto.FLOAT
    inputs = [("X", f32, [T, B, I]), ("W", f32, [1, H, I]), ("R", f32, [1, H, H]),
              ("B", f32, [1, 2 * H]), ("L", TensorProto.INT32, [B]), ("H0", f32, [1, B, H])]
    graph = helper.make_graph(
        [node], "rnn", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("Y", f32, [T, 1, B, H]),
         helper.make_tensor_value_info("Y_h", f32, [1, B, H])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    case = f"rnn_{direction}_sequence_lens"
    onnx.save(model, os.path.join(out_dir, case + ".onnx"))
    X = rng.standard_normal((T, B, I), dtype=np.float32)
    W = rng.standard_normal((1, H, I), dtype=np.float32)
    R = rng.standard_normal((1, H, H), dtype=np.float32)
    Bias = rng.standard_normal((1, 2 * H), dtype=np.float32)
    L = np.array([4, 2, 1], np.int32)
    H0 = rng.standard_normal((1, B, H), dtype=np.float32)
    Y = np.zeros((T, 1, B, H), np.float32)
    Yh = np.zeros((1, B, H), np.float32)
    for b in range(B):
        h = H0[0, b]
        steps = range(L[b]) if direction == "forward" else range(L[b] - 1, -1, -1)
        for t in steps:
            pre = np.clip(X[t, b] @ W[0].T + h @ R[0].T + Bias[0, :H] + Bias[0, H:], -0.7, 0.7)
            h = np.where(pre < 0, 0.2 * pre, pre)
            Y[t, 0, b] = h
        Yh[0, b] = h
    save_arrays(out_dir, case, [X, W, R, Bias, L, H0], [Y, Yh])


def numpy_lstm_case(out_dir):
    """Bidirectional LSTM, batch-first (layout 1), with sequence_lens,
    initial_h/initial_c, peepholes, clip, input_forget and HardSigmoid gates."""
    rng = np.random.default_rng(4)
    T, B, I, H, D = 3, 2, 2, 3, 2
    node = helper.make_node("LSTM", ["X", "W", "R", "B", "L", "H0", "C0", "P"], ["Y", "Y_h", "Y_c"],
                            hidden_size=H, direction="bidirectional", layout=1, clip=1.5,
                            input_forget=1, activations=["HardSigmoid", "Tanh", "Tanh"] * 2,
                            activation_alpha=[0.3, 0.25], activation_beta=[0.4, 0.6])
    f32 = TensorProto.FLOAT
    inputs = [("X", f32, [B, T, I]), ("W", f32, [D, 4 * H, I]), ("R", f32, [D, 4 * H, H]),
              ("B", f32, [D, 8 * H]), ("L", TensorProto.INT32, [B]), ("H0", f32, [B, D, H]),
              ("C0", f32, [B, D, H]), ("P", f32, [D, 3 * H])]
    graph = helper.make_graph(
        [node], "lstm", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("Y", f32, [B, T, D, H]),
         helper.make_tensor_value_info("Y_h", f32, [B, D, H]),
         helper.make_tensor_value_info("Y_c", f32, [B, D, H])])
    save_model(out_dir, "lstm_bidirectional_full", graph, opset=14)
    X = rng.standard_normal((B, T, I), dtype=np.float32)
    W = rng.standard_normal((D, 4 * H, I), dtype=np.float32)
    R = rng.standard_normal((D, 4 * H, H), dtype=np.float32)
    Bias = rng.standard_normal((D, 8 * H), dtype=np.float32)
    L = np.array([3, 2], np.int32)
    H0 = rng.standard_normal((B, D, H), dtype=np.float32)
    C0 = rng.standard_normal((B, D, H), dtype=np.float32)
    P = rng.standard_normal((D, 3 * H), dtype=np.float32)
    Y = np.zeros((B, T, D, H), np.float32)
    Yh = np.zeros((B, D, H), np.float32)
    Yc = np.zeros((B, D, H), np.float32)
    alphas, betas = [0.3, 0.25], [0.4, 0.6]
    clip = lambda v: np.clip(v, -1.5, 1.5)
    for d in range(D):
        f = lambda v: np.clip(alphas[d] * clip(v) + betas[d], 0, 1)  # HardSigmoid
        g = lambda v: np.tanh(clip(v))
        Wi, Wo, Wf, Wc = np.split(W[d], 4)
        Ri, Ro, Rf, Rc = np.split(R[d], 4)
        wb, rb = np.split(Bias[d], 2)
        bi, bo, bf, bc = np.split(wb + rb, 4)
        Pi, Po, Pf = np.split(P[d], 3)
        for b in range(B):
            h, c = H0[b, d], C0[b, d]
            steps = range(L[b]) if d == 0 else range(L[b] - 1, -1, -1)
            for t in steps:
                x = X[b, t]
                i = f(x @ Wi.T + h @ Ri.T + Pi * c + bi)
                fg = 1 - i  # input_forget
                cand = g(x @ Wc.T + h @ Rc.T + bc)
                c = fg * c + i * cand
                o = f(x @ Wo.T + h @ Ro.T + Po * c + bo)
                h = o * np.tanh(c)
                Y[b, t, d] = h
            Yh[b, d], Yc[b, d] = h, c
    save_arrays(out_dir, "lstm_bidirectional_full", [X, W, R, Bias, L, H0, C0, P], [Y, Yh, Yc])


def dropout_cases(out_dir):
    f32, b1 = TensorProto.FLOAT, TensorProto.BOOL
    shape = [100, 100]
    # y and mask of Dropout(x, ratio, training_mode).
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], seed=3)
    graph = helper.make_graph(
        [node], "dropout",
        [helper.make_tensor_value_info("x", f32, shape), helper.make_tensor_value_info("r", f32, []),
         helper.make_tensor_value_info("t", b1, [])],
        [helper.make_tensor_value_info("y", f32, shape), helper.make_tensor_value_info("m", b1, shape)])
    save_model(out_dir, "dropout_training", graph)
    x = np.random.default_rng(2).standard_normal(shape, dtype=np.float32)
    keep_all = np.ones(shape, bool)
    save_arrays(out_dir, "dropout_training_ratio0", [x, np.float32(0), np.bool_(True)], [x, keep_all])
    save_arrays(out_dir, "dropout_training_ratio1", [x, np.float32(1), np.bool_(True)],
                [np.zeros(shape, np.float32), ~keep_all])
    save_arrays(out_dir, "dropout_not_training", [x, np.float32(0.75), np.bool_(False)], [x, keep_all])
    # Kept fraction: mean(Cast(mask)) over 10^4 elements, expected 1 - ratio.
    nodes = [helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], seed=3),
             helper.make_node("Cast", ["m"], ["mf"], to=f32),
             helper.make_node("ReduceMean", ["mf"], ["kept"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "dropout_kept",
        [helper.make_tensor_value_info("x", f32, shape), helper.make_tensor_value_info("r", f32, []),
         helper.make_tensor_value_info("t", b1, [])],
        [helper.make_tensor_value_info("kept", f32, [])])
    save_model(out_dir, "dropout_kept_fraction", graph)
    save_arrays(out_dir, "dropout_kept_fraction", [x, np.float32(0.75), np.bool_(True)], [np.float32(0.25)])


def random_cases(out_dir):
    f32, i32 = TensorProto.FLOAT, TensorProto.INT32
    shape = [200, 500]
    # Bernoulli of probabilities 0 and 1 is exact, in the requested dtype.
    p = (np.arange(100) % 3 == 0).astype(np.float32).reshape(4, 25)
    graph = helper.make_graph(
        [helper.make_node("Bernoulli", ["p"], ["y"], dtype=i32, seed=2.0)], "bernoulli_exact",
        [helper.make_tensor_value_info("p", f32, [4, 25])], [helper.make_tensor_value_info("y", i32, [4, 25])])
    save_model(out_dir, "bernoulli_exact", graph, opset=15)
    save_arrays(out_dir, "bernoulli_exact", [p], [p.astype(np.int32)])
    # Hit rate of Bernoulli(0.3) over 10^5 draws.
    graph = helper.make_graph(
        [helper.make_node("Bernoulli", ["p"], ["y"]),
         helper.make_node("ReduceMean", ["y"], ["rate"], keepdims=0)], "bernoulli_rate",
        [helper.make_tensor_value_info("p", f32, shape)], [helper.make_tensor_value_info("rate", f32, [])])
    save_model(out_dir, "bernoulli_rate", graph, opset=15)
    save_arrays(out_dir, "bernoulli_rate", [np.full(shape, 0.3, np.float32)], [np.float32(0.3)])
    # RandomUniformLike in [-2, 3): mean 0.5, min -2, max 3 (10^5 draws).
    graph = helper.make_graph(
        [helper.make_node("RandomUniformLike", ["x"], ["u"], low=-2.0, high=3.0, seed=5.0),
         helper.make_node("ReduceMean", ["u"], ["mean"], keepdims=0),
         helper.make_node("ReduceMin", ["u"], ["min"], keepdims=0),
         helper.make_node("ReduceMax", ["u"], ["max"], keepdims=0)], "uniform_stats",
        [helper.make_tensor_value_info("x", f32, shape)],
        [helper.make_tensor_value_info(n, f32, []) for n in ("mean", "min", "max")])
    save_model(out_dir, "random_uniform_like_stats", graph)
    save_arrays(out_dir, "random_uniform_like_stats", [np.zeros(shape, np.float32)],
                [np.float32(0.5), np.float32(-2.0), np.float32(3.0)])
    # RandomNormal(mean 1, scale 2): mean 1, variance 4; two nodes with the
    # same seed draw the same values (their difference is exactly 0).
    nodes = [helper.make_node("RandomNormal", [], ["z"], shape=shape, mean=1.0, scale=2.0, seed=7.0),
             helper.make_node("RandomNormal", [], ["z2"], shape=shape, mean=1.0, scale=2.0, seed=7.0),
             helper.make_node("ReduceMean", ["z"], ["mean"], keepdims=0),
             helper.make_node("Sub", ["z", "mean"], ["d"]),
             helper.make_node("Mul", ["d", "d"], ["d2"]),
             helper.make_node("ReduceMean", ["d2"], ["var"], keepdims=0),
             helper.make_node("Sub", ["z", "z2"], ["same"]),
             helper.make_node("ReduceL1", ["same"], ["diff"], keepdims=0)]
    graph = helper.make_graph(nodes, "normal_stats", [],
                              [helper.make_tensor_value_info(n, f32, []) for n in ("mean", "var", "diff")])
    save_model(out_dir, "random_normal_stats", graph)
    save_arrays(out_dir, "random_normal_stats", [], [np.float32(1.0), np.float32(4.0), np.float32(0.0)])


def loop_cases(out_dir):
    """Loop with a constant trip count and a condition that is run-time data
    (an input, then computed from the carried value): Turbine unrolls it and
    keeps the carried values only while the condition holds. Reference: the
    same loop in plain Python/NumPy."""
    f32, i64, b1 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Mul", ["acc", "two"], ["doubled"]),
         helper.make_node("Add", ["doubled", "one"], ["acc_next"]),
         helper.make_node("Add", ["count", "one_i"], ["count_next"]),
         helper.make_node("ReduceSum", ["acc_next"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_next"])],
        "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b1, []),
         helper.make_tensor_value_info("acc", f32, [3]),
         helper.make_tensor_value_info("count", i64, [])],
        [helper.make_tensor_value_info("cond_next", b1, []),
         helper.make_tensor_value_info("acc_next", f32, [3]),
         helper.make_tensor_value_info("count_next", i64, [])],
        [helper.make_tensor("two", f32, [], [2.0]), helper.make_tensor("one", f32, [], [1.0]),
         helper.make_tensor("one_i", i64, [], [1])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "go", "x", "zero"], ["y", "iterations"], body=body)],
        "loop_runtime_condition",
        [helper.make_tensor_value_info("x", f32, [3]), helper.make_tensor_value_info("go", b1, []),
         helper.make_tensor_value_info("limit", f32, [])],
        [helper.make_tensor_value_info("y", f32, [3]),
         helper.make_tensor_value_info("iterations", i64, [])],
        [helper.make_tensor("M", i64, [], [6]), helper.make_tensor("zero", i64, [], [0])])
    save_model(out_dir, "loop_runtime_condition", graph)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    for case, go, limit in [("loop_condition_stops_early", True, 40.0),
                            ("loop_condition_runs_to_trip_count", True, 1e9),
                            ("loop_condition_false_at_start", False, 1e9)]:
        acc, count, cond = x.copy(), 0, go
        for _ in range(6):
            if not cond:
                break
            acc = acc * np.float32(2) + np.float32(1)
            count += 1
            cond = bool(acc.sum() < limit)
        save_arrays(out_dir, case, [x, np.bool_(go), np.float32(limit)],
                    [acc.astype(np.float32), np.int64(count)])


def runtime_loop_cases(out_dir):
    """Loop run in the host program: the trip count M is a graph input (or
    absent) and the condition is run-time data. Two scan outputs (the
    carried vector and the iteration number, one slice per iteration run)
    and a body that reads `offset`, a buffer computed before the loop, in
    every iteration. Reference: the same loop in plain Python/NumPy."""
    f32, i64, b1 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Mul", ["acc", "two"], ["doubled"]),
         helper.make_node("Add", ["doubled", "offset"], ["acc_next"]),
         helper.make_node("Add", ["count", "one_i"], ["count_next"]),
         helper.make_node("ReduceSum", ["acc_next"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_next"]),
         helper.make_node("Identity", ["acc_next"], ["acc_scan"]),
         helper.make_node("Mul", ["i", "i"], ["i_squared"])],
        "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b1, []),
         helper.make_tensor_value_info("acc", f32, [3]),
         helper.make_tensor_value_info("count", i64, [])],
        [helper.make_tensor_value_info("cond_next", b1, []),
         helper.make_tensor_value_info("acc_next", f32, [3]),
         helper.make_tensor_value_info("count_next", i64, []),
         helper.make_tensor_value_info("acc_scan", f32, [3]),
         helper.make_tensor_value_info("i_squared", i64, [])],
        [helper.make_tensor("two", f32, [], [2.0]), helper.make_tensor("one_i", i64, [], [1])])
    outputs = [helper.make_tensor_value_info("y", f32, [3]),
               helper.make_tensor_value_info("iterations", i64, []),
               helper.make_tensor_value_info("ys", f32, ["k", 3]),
               helper.make_tensor_value_info("squares", i64, ["k"])]
    before = [helper.make_node("Mul", ["x", "half"], ["offset"])]
    half = helper.make_tensor("half", f32, [], [0.5])
    zero = helper.make_tensor("zero", i64, [], [0])
    x_info = helper.make_tensor_value_info("x", f32, [3])
    go_info = helper.make_tensor_value_info("go", b1, [])
    limit_info = helper.make_tensor_value_info("limit", f32, [])
    graph = helper.make_graph(
        before + [helper.make_node("Loop", ["M", "go", "x", "zero"],
                                   ["y", "iterations", "ys", "squares"], body=body)],
        "loop_runtime_trip_count",
        [helper.make_tensor_value_info("M", i64, []), go_info, x_info, limit_info], outputs,
        [half, zero])
    save_model(out_dir, "loop_runtime_trip_count", graph)
    graph = helper.make_graph(
        before + [helper.make_node("Loop", ["", "go", "x", "zero"],
                                   ["y", "iterations", "ys", "squares"], body=body)],
        "loop_no_trip_count", [go_info, x_info, limit_info], outputs, [half, zero])
    save_model(out_dir, "loop_no_trip_count", graph)
    # No trip count and a condition that starts as the constant true: the
    # importer starts unrolling, finds the body's condition is run-time data,
    # and builds a host loop instead.
    graph = helper.make_graph(
        before + [helper.make_node("Loop", ["", "true", "x", "zero"],
                                   ["y", "iterations", "ys", "squares"], body=body)],
        "loop_while_data", [x_info, limit_info], outputs,
        [half, zero, helper.make_tensor("true", b1, [], [True])])
    save_model(out_dir, "loop_while_data", graph)

    def reference(m, go, x, limit):
        offset = x * np.float32(0.5)
        acc, count, cond, ys, squares = x.copy(), 0, go, [], []
        i = 0
        while cond and (m is None or i < m):
            acc = acc * np.float32(2) + offset
            count += 1
            cond = bool(acc.sum() < limit)
            ys.append(acc.copy())
            squares.append(i * i)
            i += 1
        return [acc.astype(np.float32), np.int64(count),
                np.array(ys, np.float32).reshape(len(ys), 3), np.array(squares, np.int64)]

    x = np.array([0.5, -1.0, 2.0], np.float32)
    for case, m, go, limit in [("loop_trip_count_zero", 0, True, 1e9),
                               ("loop_trip_count_one", 1, True, 1e9),
                               ("loop_trip_count_many", 7, True, 1e9),
                               ("loop_trip_count_cond_stops_early", 50, True, 100.0),
                               ("loop_trip_count_cond_false_at_start", 5, False, 1e9)]:
        save_arrays(out_dir, case, [np.int64(m), np.bool_(go), x, np.float32(limit)],
                    reference(m, go, x, limit))
    save_arrays(out_dir, "loop_no_trip_count_cond_stops", [np.bool_(True), x, np.float32(500.0)],
                reference(None, True, x, 500.0))
    save_arrays(out_dir, "loop_while_data_stops", [x, np.float32(60.0)],
                reference(None, True, x, 60.0))

    # Nested: an outer Loop of M iterations whose body runs an inner Loop of
    # N iterations (both graph inputs) reading the outer graph's x.
    scalar = lambda name, t: helper.make_tensor_value_info(name, t, [])
    vec = lambda name: helper.make_tensor_value_info(name, f32, [2])
    inner = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["ci_out"]),
         helper.make_node("Add", ["a", "x"], ["a_out"])],
        "inner", [scalar("j", i64), scalar("ci", b1), vec("a")], [scalar("ci_out", b1), vec("a_out")])
    outer = helper.make_graph(
        [helper.make_node("Identity", ["co"], ["co_out"]),
         helper.make_node("Loop", ["N", "", "acc"], ["acc_in"], body=inner),
         helper.make_node("Mul", ["acc_in", "two"], ["acc_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan"])],
        "outer", [scalar("i", i64), scalar("co", b1), vec("acc")],
        [scalar("co_out", b1), vec("acc_out"), vec("scan")],
        [helper.make_tensor("two", f32, [], [2.0])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], body=outer)], "loop_nested",
        [scalar("M", i64), scalar("N", i64), vec("x")],
        [vec("y"), helper.make_tensor_value_info("ys", f32, ["k", 2])])
    save_model(out_dir, "loop_nested", graph)
    x2 = np.array([1.0, -2.0], np.float32)
    # uint8 carried through a host loop (wrapping adds): the result keeps
    # its unsigned dtype through the loop's moves.
    u8 = TensorProto.UINT8
    body_u8 = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Add", ["a", "step"], ["a_out"]),
         helper.make_node("Identity", ["a_out"], ["a_scan"])],
        "body_u8", [scalar("i", i64), scalar("c", b1), helper.make_tensor_value_info("a", u8, [2])],
        [scalar("c_out", b1), helper.make_tensor_value_info("a_out", u8, [2]),
         helper.make_tensor_value_info("a_scan", u8, [2])],
        [helper.make_tensor("step", u8, [], [100])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y", "ys"], body=body_u8)], "loop_uint8",
        [scalar("M", i64), helper.make_tensor_value_info("x", u8, [2])],
        [helper.make_tensor_value_info("y", u8, [2]), helper.make_tensor_value_info("ys", u8, ["k", 2])])
    save_model(out_dir, "loop_uint8", graph)
    xu = np.array([200, 1], np.uint8)
    acc, ys = xu.copy(), []
    for _ in range(3):
        acc = (acc + np.uint8(100)).astype(np.uint8)
        ys.append(acc.copy())
    save_arrays(out_dir, "loop_uint8_wraps", [np.int64(3), xu], [acc, np.array(ys, np.uint8)])
    for case, m, n in [("loop_nested_3x2", 3, 2), ("loop_nested_inner_zero", 2, 0)]:
        acc, ys = x2.copy(), []
        for _ in range(m):
            for _ in range(n):
                acc = acc + x2
            acc = acc * np.float32(2)
            ys.append(acc.copy())
        save_arrays(out_dir, case, [np.int64(m), np.int64(n), x2],
                    [acc, np.array(ys, np.float32).reshape(len(ys), 2)])


def sequence_position_cases(out_dir):
    """SequenceInsert/Erase/At with positions that are run-time inputs
    (Turbine selects among equally typed candidates elementwise), including
    negative positions. Reference: Python list operations."""
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceInsert", ["s", "d", "p_insert"], ["s1"]),
             helper.make_node("SequenceErase", ["s1", "p_erase"], ["s2"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["all"], axis=0, new_axis=1),
             helper.make_node("SequenceAt", ["s1", "p_at"], ["picked"])]
    graph = helper.make_graph(
        nodes, "sequence_runtime_positions",
        [helper.make_tensor_value_info(n, f32, [2]) for n in "abcd"] +
        [helper.make_tensor_value_info(n, i64, []) for n in ("p_insert", "p_erase", "p_at")],
        [helper.make_tensor_value_info("all", f32, [3, 2]),
         helper.make_tensor_value_info("picked", f32, [2])])
    save_model(out_dir, "sequence_runtime_positions", graph)
    a, b, c, d = (np.array([k, 10 * k], np.float32) for k in (1, 2, 3, 4))
    for case, pi, pe, pa in [("sequence_positions_front", 0, 1, 0),
                             ("sequence_positions_back", 3, -1, 3),
                             ("sequence_positions_negative", -1, -4, -2),
                             ("sequence_positions_middle", 2, 2, 1)]:
        s1 = [a, b, c]
        s1.insert(pi if pi >= 0 else pi + 3, d)
        s2 = list(s1)
        del s2[pe]
        save_arrays(out_dir, case, [a, b, c, d, np.int64(pi), np.int64(pe), np.int64(pa)],
                    [np.stack(s2, axis=0), s1[pa]])


def np_conv_nchw(x, w, pad):
    """Plain NCHW convolution, stride 1 (integer-valued data: exact)."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out.astype(np.float32)


def concat_cases(out_dir):
    """Concat written in place by its producers (ConcatSlices.h): small
    integer-valued data, so every reference is exact (NumPy)."""
    rng = np.random.default_rng(7)
    ints = lambda *shape: rng.integers(-3, 4, size=shape).astype(np.float32)
    f32 = TensorProto.FLOAT
    # Channels of NCHW convolution outputs (channels-last inside): operands
    # of different widths from a 1x1 and a 3x3 convolution, the model input
    # itself, a ReLU used twice by the concat and once more elsewhere; the
    # concat feeds a 1x1 convolution and a second concat (DenseNet's
    # pattern); a concat whose only user is elementwise (not fused into it).
    # Dynamic batch.
    w1, w3, w5 = ints(6, 4, 1, 1), ints(3, 4, 3, 3), ints(5, 21, 1, 1)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["y1"]),
             helper.make_node("Relu", ["x"], ["y2"]),
             helper.make_node("Conv", ["x", "w3"], ["y3"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["y1", "x", "y2", "y2", "y3"], ["cat"], axis=1),
             helper.make_node("Conv", ["cat", "w5"], ["next"]),
             helper.make_node("Concat", ["cat", "next"], ["cat2"], axis=1),
             helper.make_node("Neg", ["y2"], ["other"]),
             helper.make_node("Concat", ["y3", "y1"], ["cat3"], axis=1),
             helper.make_node("Neg", ["cat3"], ["negcat"])]
    graph = helper.make_graph(
        nodes, "concat_channels", [helper.make_tensor_value_info("x", f32, ["N", 4, 5, 5])],
        [helper.make_tensor_value_info("cat", f32, ["N", 21, 5, 5]),
         helper.make_tensor_value_info("cat2", f32, ["N", 26, 5, 5]),
         helper.make_tensor_value_info("other", f32, ["N", 4, 5, 5]),
         helper.make_tensor_value_info("negcat", f32, ["N", 9, 5, 5])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w3, "w3"),
         numpy_helper.from_array(w5, "w5")])
    save_model(out_dir, "concat_channels", graph)
    for case, n in (("concat_channels_b1", 1), ("concat_channels_b2", 2)):
        x = ints(n, 4, 5, 5)
        y2 = np.maximum(x, 0)
        cat = np.concatenate([np_conv_nchw(x, w1, 0), x, y2, y2, np_conv_nchw(x, w3, 1)], axis=1)
        cat2 = np.concatenate([cat, np_conv_nchw(cat, w5, 0)], axis=1)
        y1, y3 = np_conv_nchw(x, w1, 0), np_conv_nchw(x, w3, 1)
        save_arrays(out_dir, case, [x], [cat, cat2, -y2, -np.concatenate([y3, y1], axis=1)])
    # Along H of NCHW convolution outputs (a spatial axis inside, not the
    # channels), and along the last axis of rank-3 tensors of widths 2, 5, 1.
    wa, wb = ints(3, 2, 1, 1), ints(3, 2, 3, 3)
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"]),
             helper.make_node("Conv", ["x", "wb"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a", "b", "a"], ["rows"], axis=2),
             helper.make_node("Mul", ["p", "p"], ["p2"]),
             helper.make_node("Neg", ["q"], ["q2"]),
             helper.make_node("Concat", ["p2", "q2", "r"], ["cols"], axis=-1)]
    graph = helper.make_graph(
        nodes, "concat_other_axes",
        [helper.make_tensor_value_info("x", f32, ["N", 2, 4, 3]),
         helper.make_tensor_value_info("p", f32, ["M", 3, 2]),
         helper.make_tensor_value_info("q", f32, ["M", 3, 5]),
         helper.make_tensor_value_info("r", f32, ["M", 3, 1])],
        [helper.make_tensor_value_info("rows", f32, ["N", 3, 12, 3]),
         helper.make_tensor_value_info("cols", f32, ["M", 3, 8])],
        [numpy_helper.from_array(wa, "wa"), numpy_helper.from_array(wb, "wb")])
    save_model(out_dir, "concat_other_axes", graph)
    x, p, q, r = ints(2, 2, 4, 3), ints(3, 3, 2), ints(3, 3, 5), ints(3, 3, 1)
    a, b = np_conv_nchw(x, wa, 0), np_conv_nchw(x, wb, 1)
    save_arrays(out_dir, "concat_other_axes", [x, p, q, r],
                [np.concatenate([a, b, a], axis=2), np.concatenate([p * p, -q, r], axis=-1)])
    # Along the dynamic batch axis (no static extents: the gather stays).
    nodes = [helper.make_node("Relu", ["u"], ["u2"]),
             helper.make_node("Concat", ["u2", "v"], ["batch"], axis=0)]
    graph = helper.make_graph(
        nodes, "concat_batch_axis",
        [helper.make_tensor_value_info("u", f32, ["N", 3]),
         helper.make_tensor_value_info("v", f32, [2, 3])],
        [helper.make_tensor_value_info("batch", f32, ["B", 3])])
    save_model(out_dir, "concat_batch_axis", graph)
    u, v = ints(3, 3), ints(2, 3)
    save_arrays(out_dir, "concat_batch_axis", [u, v], [np.concatenate([np.maximum(u, 0), v])])


def save_model(out_dir, name, graph, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch_cases(out_dir)
    loop_cases(out_dir)
    runtime_loop_cases(out_dir)
    sequence_position_cases(out_dir)
    concat_cases(out_dir)
    numpy_rnn_case(out_dir, "forward")
    numpy_rnn_case(out_dir, "reverse")
    numpy_lstm_case(out_dir)
    dropout_cases(out_dir)
    random_cases(out_dir)


if __name__ == "__main__":
    main()
