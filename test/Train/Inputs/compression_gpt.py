"""The shakespeare-char GPT (examples/gpt.mlir's shape: vocabulary 256, context 64, d 128, 4 heads,
4 layers) as PyTorch users write it: bench/peer_models.py's nanoGPT module tree, so zcc-import
keeps nanoGPT's parameter names and DeepSpeed's compression config names the same modules.
forward(idx) returns the logits (zcc-import adds the cross-entropy); loss() is the training loss."""
import os
import sys

import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
from peer_models import GPT  # noqa: E402


class LogitsGPT(GPT):
    def forward(self, idx):
        T = idx.size(1)
        pos = torch_arange(T, idx)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))

    def loss(self, idx, targets):
        logits = self(idx)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def torch_arange(T, like):
    import torch
    return torch.arange(T, dtype=torch.long, device=like.device)


def build():
    return LogitsGPT(vocab=256, context=64, dim=128, heads=4, layers=4)
