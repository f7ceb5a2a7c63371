"""The text of a zc module: parameters, then the forward, one op per line with its Python location."""


def tensor_type(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def number(x):
    """An f64 attribute's literal: exact (repr round-trips) and always with a decimal point or exponent."""
    text = repr(float(x))
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def symbol(name):
    """A parameter's state_dict name as a symbol: quoted when it is not a bare identifier."""
    bare = name.replace("_", "a").isalnum() and not name[0].isdigit()
    return "@" + name if bare else '@"' + name + '"'


class Tensor:
    """A zc SSA value."""

    def __init__(self, name, shape, dtype="f32"):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


class Emitter:
    def __init__(self):
        self.lines, self.used = [], set()
        self.loc = None  # (file, line) of the node being lowered

    def fresh(self, hint):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        name, i = base, 0
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        return "%" + name

    def location(self):
        if not self.loc:
            return ""
        path, line = self.loc
        return f' loc("{path}":{line}:0)'

    def op(self, hint, shape, body, dtype="f32"):
        """`%r = body` with r's type shape/dtype; body is the op text after `=`."""
        result = Tensor(self.fresh(hint), shape, dtype)
        self.lines.append(f"  {result.name} = {body}{self.location()}")
        return result

    def raw(self, text):
        self.lines.append(f"  {text}{self.location()}")


def module_text(header, params, forward_name, inputs, loss, body_lines):
    """params: [(name, shape, initializer text, attrs)]; inputs: [Tensor]."""
    out = list(header) + [""]
    for name, shape, init, attrs in params:
        extra = f" {{{attrs}}}" if attrs else ""
        out.append(f"zc.param {symbol(name)} : {tensor_type(shape)} = {init}{extra}")
    out.append("")
    args = ", ".join(f"{t.name}: {t.type}" for t in inputs)
    out.append(f"zc.forward @{forward_name}({args}) -> tensor<f32> {{")
    out.extend(body_lines)
    out.append(f"  zc.return {loss.name} : tensor<f32>")
    out.append("}")
    return "\n".join(out) + "\n"
