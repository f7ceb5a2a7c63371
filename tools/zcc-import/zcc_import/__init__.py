"""zcc-import: a PyTorch causal language model -> zcc's `zc` dialect (+ its weights as safetensors).

source.py builds the model (a Hugging Face config or a user's factory) with its parameters on the meta
device; capture.py exports forward + cross-entropy with torch.export and folds what does not depend on
the batch (rotary tables, masks); lower.py maps the ATen graph onto zc ops; mlir.py writes the text.
"""
