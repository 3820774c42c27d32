#!/usr/bin/env python3
# ===- zoo_models.py - the model zoo: definitions, export, torch timing ---=== #
#
# The models of `make bench-zoo` (issue 16), built from PyTorch with random
# weights and a fixed seed, and the two things the runner needs from Python:
#
#   zoo_models.py list [--models=REGEX] [--quick] [--all]
#       prints one model name per line (the ones the options select).
#   zoo_models.py export OUT_DIR [--models=REGEX] [--quick] [--all] [--script]
#       per model, OUT_DIR/<model>/: model.onnx (opset 17, dynamic batch),
#       traced.pt (torch.jit.trace; scripted.pt with --script), eager.pth
#       (the eager module, pickled, for timing), in<I>_b<B>.npy / out_b<B>.npy
#       (inputs and torch eager's first output at batch 1 and 2) and
#       meta.json (input names, shapes, dtypes). A model that torch itself
#       cannot export gets export_error.txt instead of the file it lacks.
#   zoo_models.py torch OUT_DIR MODEL THREADS REPS WARMUP
#       loads eager.pth, runs it on the batch-1 inputs under no_grad with
#       torch.set_num_threads(THREADS), prints "median_ms <ms>".
#
# Families: every classification model of torchvision 0.14 at 3x224x224
# (ViT, Swin and MaxViT need 224 anyway), in two tiers: "zoo" (the default:
# the families issue 16 names) and "large" (--all adds them: the bigger
# variants, minutes per compile on 2 cores). Two do not fit: vit_h_14 and
# regnet_y_128gf have over 2 GB of weights, past protobuf's limit for one
# ONNX file (listed by `list --all` as excluded). Sequence models: LSTM,
# GRU and RNN-tanh taggers (embedding -> recurrence -> linear; 1 and 2
# layers, uni- and bidirectional), a BERT-style encoder (erf GELU, an
# attention mask input) and a GPT-style decoder (causal attention).
# Run with /usr/bin/python3 (Debian's python3-torch 1.13 and torchvision).
# ===---------------------------------------------------------------------=== #
import argparse
import json
import math
import os
import re
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 17
BATCHES = (1, 2)
SEED = 0


# --- sequence models ------------------------------------------------------ #

class RecurrentTagger(nn.Module):
    """Token ids -> embedding -> LSTM/GRU/RNN -> per-token tag logits."""

    def __init__(self, cell, layers, bidirectional, vocab=4000, embed=128, hidden=256,
                 tags=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        kind = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[cell]
        self.rnn = kind(embed, hidden, num_layers=layers, bidirectional=bidirectional,
                        batch_first=True)
        self.out = nn.Linear(hidden * (2 if bidirectional else 1), tags)

    def forward(self, ids):
        y, _ = self.rnn(self.embed(ids))
        return self.out(y)


class BertLayer(nn.Module):
    """Post-norm encoder layer as BERT writes it: erf GELU, additive mask."""

    def __init__(self, d_model, heads, ffn):
        super().__init__()
        self.heads = heads
        self.head_dim = d_model // heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.o = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model, eps=1e-12)
        self.ff1 = nn.Linear(d_model, ffn)
        self.ff2 = nn.Linear(ffn, d_model)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-12)

    def forward(self, x, additive_mask):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores + additive_mask, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BertEncoder(nn.Module):
    """Token, position and segment embeddings, 4 layers; (ids, mask) in."""

    def __init__(self, vocab=8000, seq=128, d_model=256, heads=4, ffn=1024, layers=4):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(seq, d_model)
        self.ln = nn.LayerNorm(d_model, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(d_model, heads, ffn) for _ in range(layers)])

    def forward(self, ids, attention_mask):
        s = ids.shape[1]
        positions = torch.arange(s, device=ids.device).unsqueeze(0)
        x = self.ln(self.tokens(ids) + self.positions(positions))
        # HF BERT's extended mask: 0 where attended, a large negative where padded.
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive)
        return x


class GptBlock(nn.Module):
    """Pre-norm decoder block, minGPT style: causal mask buffer, tanh GELU."""

    def __init__(self, d_model, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.fc_out = nn.Linear(4 * d_model, d_model)
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        # Traced, `1.0 / size ** 0.5` records aten::reciprocal of a number.
        att = (q @ k.transpose(-2, -1)) * (1.0 / k.size(-1) ** 0.5)
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc_out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GptDecoder(nn.Module):
    """Token + position embeddings, 2 decoder blocks, final norm, LM head."""

    def __init__(self, vocab=8000, seq=64, d_model=256, heads=4, layers=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(seq, d_model)
        self.blocks = nn.ModuleList([GptBlock(d_model, heads, seq) for _ in range(layers)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, ids):
        t = ids.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=ids.device).unsqueeze(0)
        x = self.tokens(ids) + self.positions(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


# --- the registry --------------------------------------------------------- #

def image_input():
    return [("input", (3, 224, 224), "f32")]


def ids_input(seq, vocab):
    return [("ids", (seq,), "i64", vocab)]


class Spec:
    def __init__(self, name, family, tier, builder, inputs, excluded=None):
        self.name = name
        self.family = family
        self.tier = tier            # "zoo", "large" or "quick"+"zoo"
        self.builder = builder
        self.inputs = inputs        # [(name, shape without batch, dtype[, vocab])]
        self.excluded = excluded    # why it does not fit, or None


def torchvision_builder(name):
    def build():
        import torchvision
        model = getattr(torchvision.models, name)()
        if name.startswith("vit"):
            # ViT's head is zero-initialized: its output would be all zeros.
            nn.init.normal_(model.heads.head.weight, std=0.02)
        return model
    return build


def family_of(name):
    for prefix in ("resnext", "wide_resnet", "resnet", "mobilenet_v2", "mobilenet_v3",
                   "shufflenet", "squeezenet", "efficientnet_v2", "efficientnet", "mnasnet",
                   "regnet", "densenet", "googlenet", "inception", "convnext", "vit",
                   "swin_v2", "swin", "maxvit", "vgg", "alexnet"):
        if name.startswith(prefix):
            return prefix
    return name


# The default zoo: the families issue 16 names, the smaller members of each.
ZOO_VISION = [
    "resnet18", "resnet34", "resnet50", "resnext50_32x4d", "wide_resnet50_2",
    "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
    "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
    "squeezenet1_0", "squeezenet1_1",
    "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3",
    "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
    "regnet_x_400mf", "regnet_x_800mf", "regnet_y_400mf", "regnet_y_800mf",
    "regnet_x_1_6gf", "regnet_y_1_6gf",
    "densenet121", "googlenet", "convnext_tiny", "vit_b_16", "alexnet",
]
# One small model per family: --quick.
QUICK = ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x1_0",
         "squeezenet1_1", "efficientnet_b0", "mnasnet0_5", "regnet_y_400mf", "googlenet",
         "lstm_tagger", "gru_tagger", "bert_encoder", "gpt_decoder"]
# Over 2 GB of weights: one ONNX protobuf cannot hold them.
TOO_LARGE = {"vit_h_14": "632M parameters (2.5 GB): over protobuf's 2 GB limit for one ONNX file",
             "regnet_y_128gf": "645M parameters (2.6 GB): over protobuf's 2 GB limit for one ONNX file"}


def all_specs():
    import torchvision
    names = sorted(n for n in dir(torchvision.models)
                   if n[0].islower() and not n.startswith("get_") and n != "list_models"
                   and callable(getattr(torchvision.models, n))
                   and not isinstance(getattr(torchvision.models, n), type)
                   and n not in ("detection", "segmentation", "video", "optical_flow",
                                 "quantization"))
    specs = []
    for name in names:
        try:
            fn = getattr(torchvision.models, name)
            if not fn.__module__.startswith("torchvision.models.") or \
                    fn.__module__.count(".") != 2:
                continue  # detection/segmentation/video/quantized builders
        except AttributeError:
            continue
        tier = "zoo" if name in ZOO_VISION else "large"
        specs.append(Spec(name, family_of(name), tier, torchvision_builder(name), image_input(),
                          TOO_LARGE.get(name)))
    for cell in ("lstm", "gru", "rnn"):
        for layers, bidir, suffix in ((1, False, ""), (2, True, "_2l_bi")):
            specs.append(Spec("%s_tagger%s" % (cell, suffix), cell, "zoo",
                              (lambda c=cell, l=layers, b=bidir: RecurrentTagger(c, l, b)),
                              ids_input(32, 4000)))
    specs.append(Spec("bert_encoder", "bert", "zoo", BertEncoder,
                      [("ids", (128,), "i64", 8000), ("attention_mask", (128,), "mask")]))
    specs.append(Spec("gpt_decoder", "gpt", "zoo", GptDecoder, ids_input(64, 8000)))
    return specs


def select(models_regex=None, quick=False, everything=False, include_excluded=False):
    pattern = re.compile(models_regex) if models_regex else None
    chosen = []
    for spec in all_specs():
        if spec.excluded and not include_excluded:
            continue
        if pattern is not None:
            if not pattern.search(spec.name):
                continue
        elif quick:
            if spec.name not in QUICK:
                continue
        elif spec.tier != "zoo" and not everything:
            continue
        chosen.append(spec)
    return chosen


# --- building and exporting ----------------------------------------------- #

def randomize_batch_norms(model):
    """Non-trivial running statistics (random init leaves mean 0, var 1)."""
    for module in model.modules():
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
            with torch.no_grad():
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)


def build(spec):
    torch.manual_seed(SEED)
    model = spec.builder()
    randomize_batch_norms(model)
    return model.eval()


def make_inputs(spec, batch, generator):
    tensors = []
    for entry in spec.inputs:
        name, shape, dtype = entry[:3]
        full = (batch,) + tuple(shape)
        if dtype == "f32":
            tensors.append(torch.randn(full, generator=generator))
        elif dtype == "i64":
            tensors.append(torch.randint(0, entry[3], full, generator=generator))
        elif dtype == "mask":
            # Ones, then a padded tail of random length per row.
            mask = torch.ones(full, dtype=torch.long)
            for row in range(batch):
                keep = int(torch.randint(full[1] // 2, full[1] + 1, (1,), generator=generator))
                mask[row, keep:] = 0
            tensors.append(mask)
        else:
            raise ValueError(dtype)
    return tensors


def turbine_dtype(dtype):
    return {"f32": "f32", "i64": "i64", "mask": "i64"}[dtype]


def first_output(y):
    while isinstance(y, (tuple, list)):
        y = y[0]
    if hasattr(y, "logits"):
        y = y.logits
    return y


def export_one(spec, out_dir, script):
    model_dir = os.path.join(out_dir, spec.name)
    os.makedirs(model_dir, exist_ok=True)
    for stale in ("export_error.txt",):
        if os.path.exists(os.path.join(model_dir, stale)):
            os.remove(os.path.join(model_dir, stale))
    model = build(spec)
    generator = torch.Generator().manual_seed(1)
    inputs = {b: make_inputs(spec, b, generator) for b in BATCHES}
    names = [entry[0] for entry in spec.inputs]
    errors = []
    with torch.no_grad():
        for b in BATCHES:
            y = first_output(model(*inputs[b]))
            np.save(os.path.join(model_dir, "out_b%d.npy" % b), y.numpy())
            for i, t in enumerate(inputs[b]):
                np.save(os.path.join(model_dir, "in%d_b%d.npy" % (i, b)), t.numpy())
    torch.save(model, os.path.join(model_dir, "eager.pth"))
    timings = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        try:
            torch.onnx.export(
                model, tuple(inputs[2]), os.path.join(model_dir, "model.onnx"),
                opset_version=OPSET, do_constant_folding=True, input_names=names,
                output_names=["output"],
                dynamic_axes=dict({n: {0: "batch"} for n in names}, output={0: "batch"}))
        except Exception as e:  # noqa: BLE001 - torch's own failure, reported
            errors.append("onnx: %s" % str(e).strip().splitlines()[0])
        timings["onnx_export_s"] = time.perf_counter() - start
        variants = [("traced", lambda: torch.jit.trace(model, tuple(inputs[1])))]
        if script:
            variants.append(("scripted", lambda: torch.jit.script(model)))
        for variant, make in variants:
            try:
                with torch.no_grad():
                    make().save(os.path.join(model_dir, variant + ".pt"))
            except Exception as e:  # noqa: BLE001
                errors.append("%s: %s" % (variant, str(e).strip().splitlines()[0]))
    meta = {"name": spec.name, "family": spec.family, "tier": spec.tier,
            "inputs": [{"name": e[0], "shape": list(e[1]), "dtype": turbine_dtype(e[2])}
                       for e in spec.inputs],
            "batches": list(BATCHES), "params": sum(p.numel() for p in model.parameters()),
            "export": timings}
    with open(os.path.join(model_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    if errors:
        with open(os.path.join(model_dir, "export_error.txt"), "w") as f:
            f.write("\n".join(errors) + "\n")
    return errors


def time_torch(out_dir, name, threads, reps, warmup):
    torch.set_num_threads(threads)
    model_dir = os.path.join(out_dir, name)
    model = torch.load(os.path.join(model_dir, "eager.pth"))
    model.eval()
    with open(os.path.join(model_dir, "meta.json")) as f:
        count = len(json.load(f)["inputs"])
    inputs = [torch.from_numpy(np.load(os.path.join(model_dir, "in%d_b1.npy" % i)))
              for i in range(count)]
    times = []
    with torch.no_grad():
        for i in range(warmup + reps):
            start = time.perf_counter()
            model(*inputs)
            elapsed = time.perf_counter() - start
            if i >= warmup:
                times.append(elapsed * 1e3)
    print("median_ms %.6f" % float(np.median(times)))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=["list", "export", "torch"])
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--models", default=None, help="regex on model names")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--all", action="store_true", help="add the large tier")
    parser.add_argument("--script", action="store_true", help="also torch.jit.script")
    args = parser.parse_args(argv[1:])
    if args.command == "list":
        for spec in select(args.models, args.quick, args.all, include_excluded=True):
            print(spec.name + ("  (excluded: %s)" % spec.excluded if spec.excluded else ""))
        return 0
    if args.command == "export":
        if len(args.rest) != 1:
            parser.error("export OUT_DIR")
        for spec in select(args.models, args.quick, args.all):
            start = time.perf_counter()
            errors = export_one(spec, args.rest[0], args.script)
            print("exported %s in %.1f s%s" % (spec.name, time.perf_counter() - start,
                                               "; " + "; ".join(errors) if errors else ""))
            sys.stdout.flush()
        return 0
    if len(args.rest) != 5:
        parser.error("torch OUT_DIR MODEL THREADS REPS WARMUP")
    out_dir, name, threads, reps, warmup = args.rest
    time_torch(out_dir, name, int(threads), int(reps), int(warmup))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
