"""What an ATen node lowers to: a View of a zc tensor, or a folded Constant."""


class View:
    """An ATen value held as zc tensor `base`, read as `shape`.

    heads=False: `shape` is a reshape of base (same elements, row-major).
    heads=True:  shape is [B, H, T, D] and base is [B, T, H*D]: transpose(reshape(base), 1, 2), the
                 layout attention works in, kept as zc's rotary and causal_attention read it.
    """

    def __init__(self, base, shape, heads=False):
        self.base, self.shape, self.heads = base, tuple(shape), heads

    def same_layout(self, other):
        return (self.shape == other.shape and self.heads == other.heads
                and self.base.shape == other.base.shape)


class Constant:
    """A folded value: feeds patterns (rotary tables, masks, positions), never a zc operand."""

    def __init__(self, value):
        self.value = value
