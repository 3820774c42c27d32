# ===- llama_model.py - A llama-architecture decoder with a KV cache -----=== #
#
# The model of the LLM yardstick (issues 13 and 14): a llama-style decoder in
# plain torch 1.13 — RMSNorm, rotary embeddings, grouped-query attention,
# SwiGLU feed-forward, untied output head — with random weights from a fixed
# seed (nothing is downloaded).
#
# Conventions chosen so that the state_dict maps onto llama.cpp's GGUF `llama`
# architecture with no weight permutation (llama_gguf.py writes it):
#   * rotary embeddings rotate adjacent pairs (x[2i], x[2i+1]) by
#     pos * theta^(-2i/head_dim), llama.cpp's LLAMA_ROPE_TYPE_NORM (HF's
#     checkpoints rotate the two halves instead, which is why llama.cpp's
#     converter permutes their q/k weights; this model never needs that);
#   * query head h reads KV head h // (n_heads / n_kv_heads) (ggml's
#     broadcasting in mul_mat);
#   * attention scale 1/sqrt(head_dim), softmax in f32, causal mask.
#
# State: the KV cache lives in registered buffers (`layers.N.attention.k_cache`
# and `v_cache`, [1, n_kv_heads, max_seq_len, head_dim]) that the two entry
# points update in place with slice assignment (`cache[:, :, pos:pos+t] = k`):
#   prefill(tokens[1, T] int64) -> logits[1, vocab] of the LAST position; the
#       prompt is written at cache positions 0..T-1 (a new sequence);
#   decode(token[1, 1] int64, pos: int) -> logits[1, vocab]; the token is
#       written at cache position `pos` and attends to positions 0..pos.
# Both are @torch.jit.export'ed, so torch.jit.script(model) exports the pair
# (and its buffers) as one TorchScript module; `forward` is prefill.
# Bad input (wrong dtype or shape, a prompt longer than the context, a
# position outside [0, max_seq_len)) raises a RuntimeError/ValueError naming
# what was expected, in eager and in scripted form.
# ===---------------------------------------------------------------------=== #
import math
from typing import Dict

import torch
import torch.nn.functional as F
from torch import nn


class LlamaConfig:
    """Hyperparameters. `default()` is the ≈110M benchmark model, `tiny()` the test one."""

    def __init__(self, dim=768, n_layers=12, n_heads=12, n_kv_heads=4, ffn_dim=2048,
                 vocab_size=32000, max_seq_len=512, norm_eps=1e-5, rope_theta=10000.0):
        if dim % n_heads != 0:
            raise ValueError("dim %d is not a multiple of n_heads %d" % (dim, n_heads))
        if n_heads % n_kv_heads != 0:
            raise ValueError("n_heads %d is not a multiple of n_kv_heads %d" % (n_heads, n_kv_heads))
        if (dim // n_heads) % 2 != 0:
            raise ValueError("head_dim %d must be even for rotary embeddings" % (dim // n_heads))
        self.dim = dim
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.ffn_dim = ffn_dim
        self.vocab_size = vocab_size
        self.max_seq_len = max_seq_len
        self.norm_eps = norm_eps
        self.rope_theta = rope_theta

    @property
    def head_dim(self):
        return self.dim // self.n_heads

    @staticmethod
    def default():
        return LlamaConfig()

    @staticmethod
    def tiny():
        # Every dimension a multiple of 32 (the GGUF Q8_0/Q4_0 block) and a
        # vocabulary big enough for llama_gguf's byte tokens (3 + 256).
        return LlamaConfig(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, ffn_dim=96,
                           vocab_size=320, max_seq_len=128)

    def as_dict(self) -> Dict[str, float]:
        return {k: getattr(self, k) for k in (
            "dim", "n_layers", "n_heads", "n_kv_heads", "ffn_dim", "vocab_size",
            "max_seq_len", "norm_eps", "rope_theta")}

    def __repr__(self):
        return "LlamaConfig(%s)" % ", ".join("%s=%s" % kv for kv in self.as_dict().items())


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dim (llama.cpp's rms_norm then mul)."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(head_dim: int, max_seq_len: int, theta: float):
    """cos and sin [max_seq_len, head_dim/2] of pos * theta^(-2i/head_dim), in f64 then f32."""
    inv_freq = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    angles = torch.arange(max_seq_len, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return torch.cos(angles).float(), torch.sin(angles).float()


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotates adjacent pairs (x[..., 2i], x[..., 2i+1]) of x [B, H, T, D] by cos/sin [T, D/2]."""
    b, h, t, d = x.shape
    pairs = x.reshape(b, h, t, d // 2, 2)
    x0 = pairs[..., 0]
    x1 = pairs[..., 1]
    out0 = x0 * cos - x1 * sin
    out1 = x0 * sin + x1 * cos
    return torch.stack([out0, out1], dim=-1).reshape(b, h, t, d)


class Attention(nn.Module):
    """Grouped-query self-attention over a KV cache kept in this module's buffers."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.n_kv_heads = config.n_kv_heads
        self.head_dim = config.head_dim
        self.group = config.n_heads // config.n_kv_heads
        self.scale = 1.0 / math.sqrt(config.head_dim)
        self.wq = nn.Linear(config.dim, config.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(config.dim, config.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(config.dim, config.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(config.n_heads * self.head_dim, config.dim, bias=False)
        cache_shape = (1, config.n_kv_heads, config.max_seq_len, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(cache_shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(cache_shape), persistent=False)

    def forward(self, x: torch.Tensor, pos: int, cos: torch.Tensor, sin: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        """x [1, T, dim] at positions pos..pos+T-1; cos/sin [T, D/2]; mask [T, pos+T] additive."""
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q = apply_rotary(q, cos, sin)
        k = apply_rotary(k, cos, sin)
        # The step's keys and values go into the cache in place.
        self.k_cache[:, :, pos:pos + t] = k
        self.v_cache[:, :, pos:pos + t] = v
        keys = self.k_cache[:, :, :pos + t]
        values = self.v_cache[:, :, :pos + t]
        if self.group > 1:
            keys = keys.repeat_interleave(self.group, dim=1)
            values = values.repeat_interleave(self.group, dim=1)
        scores = torch.matmul(q, keys.transpose(2, 3)) * self.scale + mask
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, values).transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim)
        return self.wo(out)


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x) (GGUF: ffn_gate = w1, ffn_up = w3, ffn_down = w2)."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.w1 = nn.Linear(config.dim, config.ffn_dim, bias=False)
        self.w2 = nn.Linear(config.ffn_dim, config.dim, bias=False)
        self.w3 = nn.Linear(config.dim, config.ffn_dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    """Pre-norm residual block: x + attention(norm(x)), then + ffn(norm(.))."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.attention_norm = RMSNorm(config.dim, config.norm_eps)
        self.attention = Attention(config)
        self.ffn_norm = RMSNorm(config.dim, config.norm_eps)
        self.feed_forward = FeedForward(config)

    def forward(self, x: torch.Tensor, pos: int, cos: torch.Tensor, sin: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x), pos, cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    """The decoder. prefill/decode are the entry points (see the file banner)."""

    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.vocab_size = config.vocab_size
        self.max_seq_len = config.max_seq_len
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.dim)
        self.layers = nn.ModuleList([TransformerBlock(config) for _ in range(config.n_layers)])
        self.norm = RMSNorm(config.dim, config.norm_eps)
        self.output = nn.Linear(config.dim, config.vocab_size, bias=False)
        cos, sin = rotary_tables(config.head_dim, config.max_seq_len, config.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def _check_tokens(self, tokens: torch.Tensor, what: str):
        if tokens.dtype != torch.int64:
            raise ValueError(what + ": tokens must be an int64 tensor")
        if tokens.dim() != 2 or tokens.size(0) != 1:
            raise ValueError(what + ": tokens must have shape [1, T], got " + str(tokens.shape))

    def _run(self, tokens: torch.Tensor, pos: int) -> torch.Tensor:
        t = tokens.size(1)
        x = self.tok_embeddings(tokens)
        cos = self.rope_cos[pos:pos + t]
        sin = self.rope_sin[pos:pos + t]
        # Query i (absolute position pos + i) sees keys 0..pos + i.
        mask = torch.full((t, pos + t), float("-inf"), device=x.device).triu(pos + 1)
        for layer in self.layers:
            x = layer(x, pos, cos, sin, mask)
        x = self.norm(x[:, t - 1])
        return self.output(x)

    @torch.jit.export
    def prefill(self, tokens: torch.Tensor) -> torch.Tensor:
        """Starts a sequence: tokens [1, T] int64 at positions 0..T-1 -> logits [1, vocab] of the last one."""
        self._check_tokens(tokens, "prefill")
        t = tokens.size(1)
        if t < 1 or t > self.max_seq_len:
            raise ValueError("prefill: prompt length " + str(t) + " is outside [1, " +
                             str(self.max_seq_len) + "]")
        return self._run(tokens, 0)

    @torch.jit.export
    def decode(self, token: torch.Tensor, pos: int) -> torch.Tensor:
        """One step: token [1, 1] int64 at position pos (after 0..pos-1) -> logits [1, vocab]."""
        self._check_tokens(token, "decode")
        if token.size(1) != 1:
            raise ValueError("decode: token must have shape [1, 1], got " + str(token.shape))
        if pos < 0 or pos >= self.max_seq_len:
            raise ValueError("decode: position " + str(pos) + " is outside [0, " +
                             str(self.max_seq_len) + ")")
        return self._run(token, pos)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.prefill(tokens)


def init_weights(model: Llama, seed: int = 0) -> Llama:
    """Random weights from `seed`, scaled so that activations stay O(1) and greedy tokens vary.

    Linear layers: N(0, 1/fan_in); embeddings: N(0, 1); norm weights 1 + N(0, 0.1)
    (not all ones, so that a norm bound to the wrong tensor shows up in the tokens).
    """
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.copy_(1.0 + 0.1 * torch.randn(param.shape, generator=generator))
            elif param.dim() == 2 and name.startswith("tok_embeddings"):
                param.copy_(torch.randn(param.shape, generator=generator))
            elif param.dim() == 2:
                param.copy_(torch.randn(param.shape, generator=generator) / math.sqrt(param.shape[1]))
            else:
                raise ValueError("init_weights: unexpected parameter " + name)
    return model


def build_model(config: LlamaConfig = None, seed: int = 0) -> Llama:
    """The model in eval mode with init_weights(seed)."""
    model = Llama(config or LlamaConfig.default())
    return init_weights(model, seed).eval()


def prompt_tokens(n: int, vocab_size: int, seed: int = 0) -> torch.Tensor:
    """A reproducible prompt [1, n] int64 of ids in [3, vocab) (0..2 are unk/bos/eos)."""
    generator = torch.Generator().manual_seed(seed + 1000)
    return torch.randint(3, vocab_size, (1, n), generator=generator, dtype=torch.int64)
