#!/usr/bin/env python3
# ===- llama_gguf.py - llama_model.Llama <-> GGUF (llama.cpp's `llama`) ---=== #
#
# Writes the model's state_dict as a GGUF file that llama.cpp loads as its
# `llama` architecture, and reads such a file back into a state_dict of f32
# weights (dequantized: the reference of issue 14 — torch eager on exactly
# the values llama.cpp multiplies by).
#
# Name map (state_dict key -> llama.cpp tensor name; torch's [out, in] weight
# is ggml's dims [in, out], innermost first):
#   tok_embeddings.weight               token_embd.weight
#   layers.N.attention_norm.weight      blk.N.attn_norm.weight
#   layers.N.attention.w{q,k,v,o}       blk.N.attn_{q,k,v,output}.weight
#   layers.N.ffn_norm.weight            blk.N.ffn_norm.weight
#   layers.N.feed_forward.w1 / w3 / w2  blk.N.ffn_gate / ffn_up / ffn_down.weight
#   norm.weight                         output_norm.weight
#   output.weight                       output.weight
# No q/k permutation: llama_model rotates adjacent pairs, as llama.cpp does.
#
# Weight types: every 2-D weight (embedding and output head included) is
# stored as the chosen type (f32, f16, bf16, q8_0, q4_0); the 1-D norm
# weights stay F32 (as llama.cpp's converter and quantizer keep them).
# Metadata: general.architecture=llama, general.file_type, the llama.*
# hyperparameters, and a `llama` (SentencePiece) vocabulary of dummy tokens:
# <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then tok_N —
# nothing is ever tokenized from text; the benchmark feeds token ids.
#
#   /usr/bin/python3 examples/llm/llama_gguf.py OUT.gguf [--type f32|f16|bf16|q8_0|q4_0]
#       [--tiny] [--seed 0]
# ===---------------------------------------------------------------------=== #
import argparse
import os
import re
import sys
from typing import Dict

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_quants  # noqa: E402
from gguf_reader import GGUFFile  # noqa: E402
from gguf_writer import FLOAT32, INT32, STRING, GGUFWriter  # noqa: E402
from llama_model import LlamaConfig, build_model  # noqa: E402

# llama_ftype (llama.h) recorded as general.file_type.
FILE_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 7, "bf16": 32}

_LAYER_NAMES = {
    "attention_norm.weight": "attn_norm.weight",
    "attention.wq.weight": "attn_q.weight",
    "attention.wk.weight": "attn_k.weight",
    "attention.wv.weight": "attn_v.weight",
    "attention.wo.weight": "attn_output.weight",
    "ffn_norm.weight": "ffn_norm.weight",
    "feed_forward.w1.weight": "ffn_gate.weight",
    "feed_forward.w3.weight": "ffn_up.weight",
    "feed_forward.w2.weight": "ffn_down.weight",
}
_GLOBAL_NAMES = {
    "tok_embeddings.weight": "token_embd.weight",
    "norm.weight": "output_norm.weight",
    "output.weight": "output.weight",
}
_LAYER_KEY = re.compile(r"^layers\.(\d+)\.(.+)$")

# tokenizer.ggml.token_type values (llama_token_type).
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_BYTE = 1, 2, 3, 6


def gguf_name(key: str) -> str:
    """The llama.cpp tensor name of a state_dict key; ValueError for an unknown key."""
    if key in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[key]
    match = _LAYER_KEY.match(key)
    if match and match.group(2) in _LAYER_NAMES:
        return "blk.%s.%s" % (match.group(1), _LAYER_NAMES[match.group(2)])
    raise ValueError("no GGUF name for state_dict key %r" % key)


def state_dict_key(name: str) -> str:
    """The inverse of gguf_name."""
    for key, value in _GLOBAL_NAMES.items():
        if value == name:
            return key
    match = re.match(r"^blk\.(\d+)\.(.+)$", name)
    if match:
        for key, value in _LAYER_NAMES.items():
            if value == match.group(2):
                return "layers.%s.%s" % (match.group(1), key)
    raise ValueError("no state_dict key for GGUF tensor %r" % name)


def dummy_vocab(vocab_size: int):
    """(tokens, scores, token types) of the dummy SentencePiece vocabulary."""
    if vocab_size < 3 + 256:
        raise ValueError("the vocabulary needs at least 259 entries (3 special, 256 bytes), "
                         "got %d" % vocab_size)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL] + [TOKEN_BYTE] * 256
    tokens += ["tok_%d" % i for i in range(len(tokens), vocab_size)]
    types += [TOKEN_NORMAL] * (vocab_size - len(types))
    scores = [0.0] * 259 + [-float(i) for i in range(vocab_size - 259)]
    return tokens, scores, types


def write_gguf(state_dict: Dict[str, torch.Tensor], config: LlamaConfig, path: str,
               weight_type: str = "f32", name: str = "turbine-llama-random") -> Dict[str, int]:
    """Writes the llama GGUF; returns {tensor name: file offset of its data}."""
    weight_type = weight_type.lower()
    if weight_type not in FILE_TYPES:
        raise ValueError("unsupported weight type %r (supported: %s)" % (
            weight_type, ", ".join(FILE_TYPES)))
    writer = GGUFWriter()
    writer.add_string("general.architecture", "llama")
    writer.add_string("general.name", name)
    writer.add_uint32("general.file_type", FILE_TYPES[weight_type])
    writer.add_uint32("llama.vocab_size", config.vocab_size)
    writer.add_uint32("llama.context_length", config.max_seq_len)
    writer.add_uint32("llama.embedding_length", config.dim)
    writer.add_uint32("llama.block_count", config.n_layers)
    writer.add_uint32("llama.feed_forward_length", config.ffn_dim)
    writer.add_uint32("llama.attention.head_count", config.n_heads)
    writer.add_uint32("llama.attention.head_count_kv", config.n_kv_heads)
    writer.add_float32("llama.attention.layer_norm_rms_epsilon", config.norm_eps)
    writer.add_float32("llama.rope.freq_base", config.rope_theta)
    writer.add_uint32("llama.rope.dimension_count", config.head_dim)
    tokens, scores, types = dummy_vocab(config.vocab_size)
    writer.add_string("tokenizer.ggml.model", "llama")
    writer.add_array("tokenizer.ggml.tokens", tokens, STRING)
    writer.add_array("tokenizer.ggml.scores", scores, FLOAT32)
    writer.add_array("tokenizer.ggml.token_type", types, INT32)
    writer.add_uint32("tokenizer.ggml.unknown_token_id", 0)
    writer.add_uint32("tokenizer.ggml.bos_token_id", 1)
    writer.add_uint32("tokenizer.ggml.eos_token_id", 2)
    writer.add_bool("tokenizer.ggml.add_bos_token", False)
    writer.add_bool("tokenizer.ggml.add_eos_token", False)
    for key, tensor in state_dict.items():
        values = tensor.detach().to(torch.float32).contiguous().numpy()
        ggml_type = weight_type if values.ndim == 2 else "f32"
        try:
            data = ggml_quants.encode(values, ggml_type)
        except ggml_quants.QuantError as e:
            raise ValueError("%s (%s): %s" % (key, gguf_name(key), e))
        writer.add_tensor(gguf_name(key), list(reversed(values.shape)), ggml_type, data)
    return writer.write(path)


def config_from_gguf(gguf: GGUFFile) -> LlamaConfig:
    """The LlamaConfig recorded in a llama GGUF's metadata."""
    m = gguf.metadata
    if m.get("general.architecture") != "llama":
        raise ValueError("%s: general.architecture is %r, not 'llama'" % (
            gguf.path, m.get("general.architecture")))
    try:
        return LlamaConfig(dim=m["llama.embedding_length"], n_layers=m["llama.block_count"],
                           n_heads=m["llama.attention.head_count"],
                           n_kv_heads=m["llama.attention.head_count_kv"],
                           ffn_dim=m["llama.feed_forward_length"],
                           vocab_size=len(m["tokenizer.ggml.tokens"]),
                           max_seq_len=m["llama.context_length"],
                           norm_eps=m["llama.attention.layer_norm_rms_epsilon"],
                           rope_theta=m.get("llama.rope.freq_base", 10000.0))
    except KeyError as e:
        raise ValueError("%s: missing metadata key %s" % (gguf.path, e))


def read_gguf_state_dict(path: str):
    """(config, state_dict of f32 tensors) from a llama GGUF, Q8_0/Q4_0/F16/BF16 decoded."""
    gguf = GGUFFile(path)
    config = config_from_gguf(gguf)
    state = {state_dict_key(name): torch.from_numpy(t.to_f32().copy())
             for name, t in gguf.tensors.items()}
    return config, state


def model_from_gguf(path: str):
    """A llama_model.Llama (eval mode) with the GGUF's weights as llama.cpp sees them."""
    config, state = read_gguf_state_dict(path)
    model = build_model(config)
    model.load_state_dict(state, strict=True)
    return model


def main(argv):
    parser = argparse.ArgumentParser(description="Write the llama-style model as a GGUF file.")
    parser.add_argument("output")
    parser.add_argument("--type", default="f32", choices=sorted(FILE_TYPES))
    parser.add_argument("--tiny", action="store_true", help="the test-sized config")
    parser.add_argument("--seed", type=int, default=0, help="weight seed")
    args = parser.parse_args(argv[1:])
    config = LlamaConfig.tiny() if args.tiny else LlamaConfig.default()
    model = build_model(config, args.seed)
    write_gguf(model.state_dict(), config, args.output, args.type)
    print("wrote %s (%s, %.1f MB)" % (args.output, args.type, os.path.getsize(args.output) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
