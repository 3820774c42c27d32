#!/usr/bin/env python3
# ===- export_torchscript_models.py - TorchScript test models + references -=== #
#
# Writes the end-to-end test models of the TorchScript frontend: for every
# model a traced and a scripted module (torch.jit.trace / torch.jit.script,
# eval mode, random weights from a fixed seed), and per batch size the input
# and torch eager's output as .npy files:
#
#   <out>/<model>/traced.pt  <out>/<model>/scripted.pt
#   <out>/<model>/input_<b>.npy  <out>/<model>/expected_<b>.npy
#   <out>/<model>/input_shape.txt    (the --input-shape for turbine compile,
#                                     batch dim as given at export: 1)
#   <out>/gpt/input_3x5.npy, expected_3x5.npy  (sequence length 5, for a
#                                     compile with a dynamic sequence dim)
#
# Models: mlp, cnn, gpt (decoder block: embedding, causal masked attention by
# hand, layer_norm, gelu), mha (nn.MultiheadAttention), control (a prim::If on the input's rank and a
# constant-trip prim::Loop, both resolved at import time), resnet18 and
# mobilenet_v2 (torchvision 0.14 architectures), lstm / gru / rnn (nn.LSTM,
# nn.GRU, nn.RNN: layers, directions, batch- and sequence-first, initial
# states), attention_scale (`1.0 / k.size(-1) ** 0.5`: arithmetic on a traced
# size), vit_train (a small torchvision ViT traced in training mode: dropout
# with p = 0, nn.MultiheadAttention's slow path).
#
# Also writes <out>/errors/*.pt, scripted modules the importer must reject
# with a clear message (tests/unit/TorchImporterTest.cpp): an unsupported op,
# a branch on a dynamic dim, a branch on tensor data, a loop over a dynamic
# dim, dropout with p = 0.5 traced in training mode, plus a file that is
# not a TorchScript archive, a truncated one and a torch.save() checkpoint.
#
# Usage: /usr/bin/python3 export_torchscript_models.py OUT_DIR [MODEL ...]
# Needs python3-torch 1.13, python3-torchvision 0.14, python3-numpy (Debian).
# ===---------------------------------------------------------------------=== #
import math
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZES = (1, 3)


class Mlp(nn.Module):
    """64-128-10 with ReLU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Cnn(nn.Module):
    """3x16x16 input: conv-bn-relu-maxpool, conv-relu, adaptive avgpool to
    3x3 over a 4x4 map (bins of unequal size), linear."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1)
        self.fc = nn.Linear(16 * 9, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, (3, 3))
        return self.fc(torch.flatten(x, 1))


class GptBlock(nn.Module):
    """Token + position embedding, one pre-norm decoder block, LM head."""

    def __init__(self, vocab=96, seq=16, d_model=64, heads=4, ffn=256):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, ffn)
        self.ff2 = nn.Linear(ffn, d_model)
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.register_buffer(
            "mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, ids):
        b, s = ids.size(0), ids.size(1)
        positions = torch.arange(0, s, dtype=torch.long)
        x = self.tok(ids) + self.pos(positions)
        h = self.ln1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:s, :s], float("-inf"))
        attn = torch.matmul(F.softmax(scores, dim=-1), v)
        attn = attn.transpose(1, 2).contiguous().view(b, s, self.heads * self.head_dim)
        x = x + self.proj(attn)
        x = x + self.ff2(F.gelu(self.ff1(self.ln2(x))))
        return self.head(self.ln_f(x))


class Mha(nn.Module):
    """Pre-norm self-attention with nn.MultiheadAttention: traced under
    no_grad it records aten::_native_multi_head_attention (the fast path);
    scripted it keeps the fast-path checks (strings, identity tests)."""

    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(32)
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        h = self.ln(x)
        return x + self.attn(h, h, h, need_weights=False)[0]


class LstmTagger(nn.Module):
    """Embedding -> 2-layer bidirectional batch-first LSTM -> linear: traced,
    freezing folds the weight list into a list constant (GenericList)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(96, 16)
        self.lstm = nn.LSTM(16, 12, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(24, 5)

    def forward(self, ids):
        y, _ = self.lstm(self.embed(ids))
        return self.out(y)


class GruSeqFirst(nn.Module):
    """2-layer bidirectional sequence-first GRU with a learned initial state;
    returns the last step's output next to the last layer's final states."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 10, num_layers=2, bidirectional=True)
        self.h0 = nn.Parameter(torch.randn(4, 1, 10))

    def forward(self, x):
        h0 = self.h0.expand(-1, x.size(0), -1).contiguous()
        y, h = self.gru(x.transpose(0, 1), h0)
        return torch.cat([y[-1], h[-2], h[-1]], dim=1)


class RnnPair(nn.Module):
    """nn.RNN with tanh (aten::rnn_tanh) feeding one with ReLU (aten::rnn_relu)."""

    def __init__(self):
        super().__init__()
        self.tanh = nn.RNN(8, 12, batch_first=True)
        self.relu = nn.RNN(12, 6, nonlinearity="relu", batch_first=True, bias=False)

    def forward(self, x):
        y, _ = self.tanh(x)
        z, h = self.relu(y)
        return torch.cat([z[:, -1], h[0]], dim=1)


class AttentionScale(nn.Module):
    """Scaled dot-product attention written `1.0 / k.size(-1) ** 0.5`:
    traced, that records aten::pow and aten::reciprocal of a number."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
        return F.softmax(scores, dim=-1) @ v


class TrainDropout(nn.Module):
    """Dropout with p = 0.5, traced in training mode: must be refused."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x) + 1.0


class Control(nn.Module):
    """prim::If on x.dim() and a prim::Loop over x.size(1) // 4: both are known
    only once the input shape is (at import), so the importer folds/unrolls."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        if x.dim() == 2:
            x = x * 2.0
        else:
            x = x.flatten(1)
        for i in range(x.size(1) // 4):
            x = torch.tanh(self.fc(x)) + i
        return x


class UnsupportedOp(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


class DynamicIf(nn.Module):
    def forward(self, x):
        if x.size(0) > 2:
            return x * 2.0
        return x


class DataDependentIf(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2.0
        return x


class DynamicLoop(nn.Module):
    def forward(self, x):
        y = x
        for _ in range(x.size(0)):
            y = y + 1.0
        return y


def export_error_models(out_dir):
    """Modules (and files) the importer must reject with a clear message."""
    error_dir = os.path.join(out_dir, "errors")
    os.makedirs(error_dir, exist_ok=True)
    for name, module in (("unsupported_op", UnsupportedOp()), ("dynamic_if", DynamicIf()),
                         ("data_dependent_if", DataDependentIf()),
                         ("dynamic_loop", DynamicLoop())):
        torch.jit.script(module.eval()).save(os.path.join(error_dir, name + ".pt"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(TrainDropout().train(), (torch.randn(2, 8),)).save(
            os.path.join(error_dir, "train_dropout.pt"))
    torch.save(nn.Linear(8, 2).state_dict(), os.path.join(error_dir, "checkpoint.pt"))
    with open(os.path.join(error_dir, "not_a_model.pt"), "wb") as f:
        f.write(b"this is not a TorchScript archive\n")
    with open(os.path.join(error_dir, "unsupported_op.pt"), "rb") as f:
        data = f.read()
    with open(os.path.join(error_dir, "truncated.pt"), "wb") as f:
        f.write(data[: len(data) // 2])


def randomize_batch_norms(model):
    """Gives BatchNorm layers non-trivial running statistics."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            with torch.no_grad():
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)


def make_model(name):
    """Returns (model, input shape without batch, input dtype)."""
    if name == "mlp":
        return Mlp(), (64,), torch.float32
    if name == "cnn":
        model = Cnn()
        randomize_batch_norms(model)
        return model, (3, 16, 16), torch.float32
    if name == "gpt":
        return GptBlock(), (16,), torch.int64
    if name == "control":
        return Control(), (8,), torch.float32
    if name == "mha":
        return Mha(), (10, 32), torch.float32
    if name == "lstm":
        return LstmTagger(), (6,), torch.int64
    if name == "gru":
        return GruSeqFirst(), (5, 8), torch.float32
    if name == "rnn":
        return RnnPair(), (4, 8), torch.float32
    if name == "attention_scale":
        return AttentionScale(), (6, 16), torch.float32
    import torchvision
    if name == "resnet18":
        model = torchvision.models.resnet18()
        randomize_batch_norms(model)
        return model, (3, 64, 64), torch.float32
    if name == "mobilenet_v2":
        model = torchvision.models.mobilenet_v2()
        randomize_batch_norms(model)
        return model, (3, 64, 64), torch.float32
    if name == "vit_train":
        # Traced in training mode (export() leaves it so): dropout with
        # p = 0, nn.MultiheadAttention off its fast path.
        from torchvision.models.vision_transformer import VisionTransformer
        model = VisionTransformer(image_size=32, patch_size=8, num_layers=1, num_heads=2,
                                  hidden_dim=16, mlp_dim=32, num_classes=10)
        nn.init.normal_(model.heads.head.weight, std=0.5)  # zero-initialized otherwise
        return model, (3, 32, 32), torch.float32
    raise SystemExit("unknown model '%s'" % name)


def make_input(shape, dtype):
    if dtype == torch.int64:
        return torch.randint(0, 96, shape, dtype=torch.int64)
    return torch.randn(shape)


def export(name, out_dir):
    model, shape, dtype = make_model(name)
    if not name.endswith("_train"):
        model.eval()
    model_dir = os.path.join(out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    example = make_input((1,) + shape, dtype)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.jit.trace(model, (example,)).save(os.path.join(model_dir, "traced.pt"))
        torch.jit.script(model).save(os.path.join(model_dir, "scripted.pt"))
    type_name = {torch.float32: "f32", torch.int64: "i64"}[dtype]
    with open(os.path.join(model_dir, "input_shape.txt"), "w") as f:
        f.write("x".join(str(d) for d in (1,) + shape) + "x" + type_name + "\n")
    if name == "gpt":
        # A shorter sequence for the dynamic-sequence-length test.
        inputs = make_input((3, 5), dtype)
        with torch.no_grad():
            expected = model(inputs)
        np.save(os.path.join(model_dir, "input_3x5.npy"), inputs.numpy())
        np.save(os.path.join(model_dir, "expected_3x5.npy"), expected.numpy().astype(np.float32))
    for batch in BATCH_SIZES:
        inputs = make_input((batch,) + shape, dtype)
        with torch.no_grad():
            expected = model(inputs)
        np.save(os.path.join(model_dir, "input_%d.npy" % batch), inputs.numpy())
        np.save(os.path.join(model_dir, "expected_%d.npy" % batch),
                expected.numpy().astype(np.float32))


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: export_torchscript_models.py OUT_DIR [MODEL ...]\n")
        return 2
    out_dir = argv[1]
    names = argv[2:] or ["mlp", "cnn", "gpt", "mha", "control", "resnet18", "mobilenet_v2",
                         "lstm", "gru", "rnn", "attention_scale", "vit_train", "errors"]
    torch.set_num_threads(1)
    for name in names:
        if name == "errors":
            export_error_models(out_dir)
            continue
        torch.manual_seed(0)
        export(name, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
