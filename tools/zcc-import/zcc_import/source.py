"""Where the model comes from: a Hugging Face configuration or a user's `file.py:factory`.

Two builds of the same model:
  skeleton(): parameters on the meta device, buffers real. torch.export traces it, so a 70B
              configuration imports without allocating its weights; the real buffers (rotary inverse
              frequencies, ...) let the capture fold the tables the forward derives from them.
  weighted(): real parameters, initialized by the model's own code from --seed, or read from --weights.
"""
import contextlib
import importlib.util
import json
import os
import sys

import torch
import torch.nn as nn


class ImportError_(Exception):
    """A user-facing error: printed as `zcc-import: error: ...`, exit 1."""


@contextlib.contextmanager
def parameters_on_meta():
    """Every nn.Parameter registered inside is moved to the meta device as it is registered (its
    CPU storage was torch.empty: never touched); buffers stay real. Initializers then run on meta
    tensors and cost nothing."""
    original = nn.Module.register_parameter

    def register(module, name, param):
        if param is not None and param.device.type != "meta":
            param = nn.Parameter(param.to("meta"), requires_grad=param.requires_grad)
        original(module, name, param)

    nn.Module.register_parameter = register
    try:
        yield
    finally:
        nn.Module.register_parameter = original


class HuggingFaceSource:
    """--hf-config config.json: the model class the config names (architectures[0]) or the
    causal-LM class of its model_type, built from the config alone (no hub access)."""

    def __init__(self, config_path, moe_aux_loss="pooled"):
        try:
            import transformers
        except ModuleNotFoundError:
            raise ImportError_("--hf-config needs the `transformers` package (scripts/setup-python.sh installs it)")
        try:
            with open(config_path) as f:
                values = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ImportError_(f"{config_path}: cannot read the configuration: {e}")
        if "model_type" not in values:
            raise ImportError_(f"{config_path}: no \"model_type\" (not a Hugging Face config.json)")
        try:
            self.config = transformers.AutoConfig.for_model(**values)
        except (ValueError, KeyError) as e:
            raise ImportError_(f"{config_path}: {e}")
        # zc computes in f32 (bf16 is zcc's --precision): import the f32 model whatever torch_dtype says.
        self.config.dtype = torch.float32
        self.config.use_cache = False
        # scaled_dot_product_attention: one op the importer maps onto zc.causal_attention. A family
        # whose attention sdpa cannot express (Gemma 2's logit soft-capping) runs its eager path,
        # written out in ATen ops, which the importer recognizes too (patterns.py).
        self.label = f"{config_path} ({values['model_type']})"
        self.config._attn_implementation = "sdpa" if self.model_class()._supports_sdpa else "eager"
        # MoE experts: their own loop over the experts (the capture replaces it: moe.py), which
        # runs in every dtype; torch's grouped_mm path takes no float64 (the tests' reference).
        if hasattr(self.config, "_experts_implementation"):
            self.config._experts_implementation = "eager"
        self.init_std = getattr(self.config, "initializer_range", 0.02)
        # A MoE family trains with its load-balancing loss when the config asks for the router
        # logits (output_router_logits), as its ForCausalLM does: loss + router_aux_loss_coef x aux.
        # "pooled": Hugging Face's load_balancing_loss_func over every layer's tokens at once;
        # "per-layer": each layer's own, summed (Megatron-LM's and DeepSpeed-MoE's form), which
        # ties no layer to another, so a pipeline can cut between them.
        self.router_aux_coef = 0.0
        if moe_aux_loss not in ("pooled", "per-layer"):
            raise ImportError_(f"--moe-aux-loss {moe_aux_loss}: expected pooled or per-layer")
        self.moe_aux_loss = moe_aux_loss
        if getattr(self.config, "output_router_logits", False):
            self.router_aux_coef = float(getattr(self.config, "router_aux_loss_coef", 0.0) or 0.0)

    def model_class(self):
        import transformers
        try:
            return transformers.AutoModelForCausalLM._model_mapping[type(self.config)]
        except KeyError:
            raise ImportError_(f"{self.label}: transformers has no causal language model for this model_type")

    def build(self):
        import transformers
        with located("transformers could not build the model from the configuration"):
            model = transformers.AutoModelForCausalLM.from_config(self.config, dtype=torch.float32,
                                                                  attn_implementation=self.config._attn_implementation)
        return model.float()

    def forward_logits(self, model, tokens):
        return self.forward(model, tokens)[0]

    def forward(self, model, tokens):
        """(logits, the term the model adds to its loss besides the cross-entropy, or None)."""
        if not self.router_aux_coef:
            return model(input_ids=tokens, use_cache=False).logits, None
        out = model(input_ids=tokens, use_cache=False, output_router_logits=True)
        if self.moe_aux_loss == "pooled":
            return out.logits, self.router_aux_coef * out.aux_loss
        pooled = sys.modules[type(model).__module__].load_balancing_loss_func
        terms = [self.router_aux_coef * pooled((layer,), model.num_experts, model.num_experts_per_tok)
                 for layer in out.router_logits]
        aux = terms[0]
        for term in terms[1:]:  # no 0 + ...: the capture maps sums of losses, not of a loss and a scalar
            aux = aux + term
        return out.logits, aux


class ModuleSource:
    """--module path.py:factory: factory() returns an nn.Module whose forward(tokens [B, T] int64)
    returns the logits [B, T, V] (or an object with .logits)."""

    def __init__(self, spec):
        path, _, factory = spec.rpartition(":")
        if not path or not factory:
            raise ImportError_(f"--module {spec}: expected path.py:factory")
        if not os.path.isfile(path):
            raise ImportError_(f"--module {spec}: no file {path}")
        module_spec = importlib.util.spec_from_file_location("zcc_user_model", path)
        user = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        with located(f"--module {spec}: {path} failed to load"):
            module_spec.loader.exec_module(user)
        if not callable(getattr(user, factory, None)):
            raise ImportError_(f"--module {spec}: {path} defines no callable `{factory}`")
        self.factory = getattr(user, factory)
        self.label = spec
        self.init_std = 0.02

    def build(self):
        with located(f"--module {self.label}: the factory failed"):
            model = self.factory()
        if not isinstance(model, nn.Module):
            raise ImportError_(f"--module {self.label}: the factory returned {type(model).__name__}, not an nn.Module")
        return model.float()

    def forward_logits(self, model, tokens):
        out = model(tokens)
        return out.logits if hasattr(out, "logits") else out

    def forward(self, model, tokens):
        return self.forward_logits(model, tokens), None


@contextlib.contextmanager
def located(what):
    """An exception raised by the model's own code (transformers', a user's) becomes an ImportError_
    naming the line that raised it, instead of a traceback."""
    try:
        yield
    except ImportError_:
        raise
    except Exception as e:
        import traceback
        from .capture import TORCH_DIR, short_path
        frames = traceback.extract_tb(e.__traceback__)
        # The innermost frame of the model's code: PyTorch's own frames (torch.export's tracer)
        # and the importer's say nothing about the model.
        mine = os.path.dirname(os.path.abspath(__file__))
        outside = [f for f in frames if not f.filename.startswith((TORCH_DIR, mine))]
        where = ""
        if outside or frames:
            frame = (outside or frames)[-1]
            where = f"\n  at {short_path(frame.filename)}:{frame.lineno}: {(frame.line or '').strip()}"
        message = str(e).splitlines()[0] if str(e) else ""
        raise ImportError_(f"{what}: {type(e).__name__}: {message}{where}") from None


class CausalLMLoss(nn.Module):
    """What zcc trains: the mean cross-entropy of the model's logits against the next tokens, plus
    what the model adds to it (a MoE family's load-balancing loss)."""

    def __init__(self, source, model):
        super().__init__()
        self.source, self.model = source, model

    def forward(self, tokens, targets):
        logits, extra = self.source.forward(self.model, tokens)
        loss = nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return loss if extra is None else loss + extra


def skeleton(source):
    with parameters_on_meta():
        model = source.build()
    return model


def weighted(source, seed, weights_path=None):
    """The model with real parameters: its own initialization from `seed`, then --weights if given."""
    torch.manual_seed(seed)
    model = source.build()
    if weights_path:
        from safetensors.torch import load_file
        try:
            state = load_file(weights_path)
        except Exception as e:  # safetensors raises its own error types
            raise ImportError_(f"--weights {weights_path}: {e}")
        result = model.load_state_dict({k: v.float() for k, v in state.items()}, strict=False)
        tied = set(tied_aliases(model))
        missing = [k for k in result.missing_keys if k not in tied]
        if missing or result.unexpected_keys:
            raise ImportError_(f"--weights {weights_path} does not fit the model: missing {missing[:5]}, "
                               f"unexpected {result.unexpected_keys[:5]}")
    return model


def tied_aliases(model):
    """{alias: canonical} for parameters registered under several names (a tied LM head):
    canonical is the first name, the one named_parameters() keeps."""
    first, aliases = {}, {}
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in first:
            aliases[name] = first[id(p)]
        else:
            first[id(p)] = name
    return aliases
