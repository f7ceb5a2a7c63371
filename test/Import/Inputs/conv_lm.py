"""A model zc cannot express: a causal language model with a 1-D convolution over time (the
importer must refuse it, naming aten.conv1d / conv2d and this file's line)."""
import torch
import torch.nn as nn


class ConvLM(nn.Module):
    def __init__(self, vocab=256, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.conv = nn.Conv2d(dim, dim, kernel_size=(1, 3), padding=(0, 1))
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)                                   # [B, T, C]
        x = self.conv(x.transpose(1, 2).unsqueeze(2)).squeeze(2)  # [B, C, T]
        return self.head(x.transpose(1, 2))


def build():
    return ConvLM()


class DataDependentLM(nn.Module):
    """A forward torch.export cannot trace (a branch on a value of the batch)."""

    def __init__(self, vocab=256, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        if x.sum() > 0:
            x = x * 2
        return self.head(x)


def build_data_dependent():
    return DataDependentLM()


def build_broken():
    return ConvLM(vocab=-1)
