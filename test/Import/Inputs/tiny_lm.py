"""A user's own decoder, written the way nanoGPT / torchtitan write theirs (not Hugging Face's code):
torch.nn.RMSNorm, F.scaled_dot_product_attention(is_causal=True) with enable_gqa, rotary embedding
from a precomputed buffer, SwiGLU, a tied head. zcc-import --module tiny_lm.py:build imports it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.attn_norm = nn.RMSNorm(dim, eps=1e-5)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wkv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.mlp_norm = nn.RMSNorm(dim, eps=1e-5)
        self.w1 = nn.Linear(dim, ffn, bias=False)
        self.w3 = nn.Linear(dim, ffn, bias=False)
        self.w2 = nn.Linear(ffn, dim, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.wkv(h).split(self.kv_heads * self.head_dim, dim=-1)
        k = k.view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(y.transpose(1, 2).reshape(B, T, C))
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class TinyLM(nn.Module):
    def __init__(self, vocab=512, dim=128, heads=4, kv_heads=2, ffn=344, layers=2, context=256, theta=10000.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = nn.RMSNorm(dim, eps=1e-5)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight
        nn.init.normal_(self.embed.weight, std=0.02)
        D = dim // heads
        inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
        freqs = torch.outer(torch.arange(context).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, tokens):
        T = tokens.shape[1]
        cos, sin = self.cos[:T], self.sin[:T]
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def build():
    return TinyLM()
