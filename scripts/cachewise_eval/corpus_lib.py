"""The measured corpus of public kernels (issue 37): loading, #ifndef guards, candidates.

scripts/cachewise_eval/corpus/corpus.json names each kernel's cachewise spec (scripts/cachewise_eval/corpus/specs), the
#define lines wrapped in #ifndef at run time, the variants and the kernel signature. Sources
are never committed: a spec's "source" starts with @REPO, a folder of the fetched repositories
(see scripts/cachewise_eval/corpus/README.md), resolved against the folder given to the functions below.
"""
import itertools
import json
import re
import shutil
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"

# ---------------------------------------------------------------------------------------------
# Integer expressions of the kernel spec (docs/kernel-spec.md, "Expressions"): + - * / % with C++
# truncation, unary - + !, comparisons, && ||, min/max/ceil_div, exact 64-bit arithmetic.

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|[-+*/%()<>!,]))")
_INT64_MAX = (1 << 63) - 1


class ExpressionError(ValueError):
    pass


def _tokens(text):
    position, tokens = 0, []
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match:
            raise ExpressionError(f"cannot read '{text[position:]}' in '{text}'")
        number, name, op = match.groups()
        tokens.append(("num", int(number)) if number else ("name", name) if name else ("op", op))
        position = match.end()
    return tokens


def _checked(value, text):
    if value > _INT64_MAX or value < -_INT64_MAX - 1:
        raise ExpressionError(f"overflow in '{text}'")
    return value


def _truncating_div(a, b, text):
    if b == 0:
        raise ExpressionError(f"division by zero in '{text}'")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def evaluate(text, names):
    """Value of the spec expression `text` with the integer `names` bound."""
    tokens = _tokens(str(text))
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else (None, None)

    def take(expected=None):
        nonlocal position
        token = peek()
        if expected is not None and token != ("op", expected):
            raise ExpressionError(f"expected '{expected}' in '{text}'")
        position += 1
        return token

    levels = [["||"], ["&&"], ["==", "!=", "<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]]

    def binary(level):
        if level == len(levels):
            return unary()
        left = binary(level + 1)
        while peek()[0] == "op" and peek()[1] in levels[level]:
            op = take()[1]
            if op in ("&&", "||"):
                decided = (not left) if op == "&&" else bool(left)
                right = skipped(level + 1) if decided else binary(level + 1)
                left = int(bool(left) and bool(right)) if op == "&&" else int(bool(left) or bool(right))
                continue
            right = binary(level + 1)
            if op == "+": left = _checked(left + right, text)
            elif op == "-": left = _checked(left - right, text)
            elif op == "*": left = _checked(left * right, text)
            elif op == "/": left = _truncating_div(left, right, text)
            elif op == "%": left = left - right * _truncating_div(left, right, text)
            else:
                left = int({"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
                            ">": left > right, ">=": left >= right}[op])
        return left

    def skipped(level):  # parsed but not evaluated (short-circuit): errors there do not count
        nonlocal position
        start = position
        try:
            return binary(level)
        except ExpressionError:
            depth = 0
            position = start
            while position < len(tokens):
                kind, value = tokens[position]
                if kind == "op" and value == "(":
                    depth += 1
                elif kind == "op" and value == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and kind == "op" and value in ("&&", "||", ","):
                    break
                position += 1
            return 0

    def unary():
        kind, value = peek()
        if kind == "op" and value in "-+!":
            take()
            operand = unary()
            return {"-": -operand, "+": operand, "!": int(not operand)}[value]
        return primary()

    def primary():
        kind, value = take()
        if kind == "num":
            return _checked(value, text)
        if kind == "op" and value == "(":
            inner = binary(0)
            take(")")
            return inner
        if kind == "name":
            if peek() == ("op", "("):
                take("(")
                arguments = [binary(0)]
                while peek() == ("op", ","):
                    take(",")
                    arguments.append(binary(0))
                take(")")
                if value == "min": return min(arguments)
                if value == "max": return max(arguments)
                if value == "ceil_div" and len(arguments) == 2:
                    if arguments[1] <= 0:
                        raise ExpressionError(f"ceil_div by {arguments[1]} in '{text}'")
                    return _truncating_div(arguments[0] + arguments[1] - 1, arguments[1], text)
                raise ExpressionError(f"unknown function '{value}' in '{text}'")
            if value not in names:
                raise ExpressionError(f"unknown name '{value}' in '{text}'")
            return names[value]
        raise ExpressionError(f"unexpected '{value}' in '{text}'")

    result = binary(0)
    if position != len(tokens):
        raise ExpressionError(f"unexpected '{tokens[position][1]}' in '{text}'")
    return result


def dimensions(value, names):
    """[x, y, z] of a spec "grid"/"block": a list of expressions or one comma-separated string."""
    parts = value if isinstance(value, list) else _split_top_level(str(value))
    dims = [evaluate(part, names) for part in parts]
    return (dims + [1, 1, 1])[:3]


def _split_top_level(text, separator=","):
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        if char == separator and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts]


# ---------------------------------------------------------------------------------------------
# The corpus


def load_corpus(corpus_dir=CORPUS_DIR):
    corpus = json.loads((Path(corpus_dir) / "corpus.json").read_text())
    split = json.loads((Path(corpus_dir) / "split.json").read_text())
    half = {name: "fit" for name in split["fit"]}
    half.update({name: "held_out" for name in split["held_out"]})
    kernels = {}
    for name, entry in corpus["kernels"].items():
        base = json.loads((Path(corpus_dir) / entry["spec"]).read_text())
        variants = entry.get("variants") or {"": {}}
        specs = {}
        for variant, overrides in variants.items():
            spec = dict(base, **overrides)
            if "args" in overrides:  # a variant's args add to (or replace) the spec's by name
                spec["args"] = dict(base.get("args", {}), **overrides["args"])
            specs[variant] = spec
        kernels[name] = dict(entry, name=name, half=half[name], specs=specs)
    return corpus, kernels


def resolve(path, src_root):
    """@REPO/rest -> src_root/REPO/rest."""
    path = str(path)
    return Path(src_root) / path[1:] if path.startswith("@") else Path(path)


_DEFINE = r"^([ \t]*)#[ \t]*define[ \t]+{name}\b(.*)$"


def apply_guards(text, names):
    """Wrap each `#define NAME ...` line of `text` in `#ifndef NAME ... #endif` (a user's -D wins)."""
    for name in names:
        pattern = re.compile(_DEFINE.format(name=re.escape(name)), re.MULTILINE)
        if not pattern.search(text):
            raise ValueError(f"no '#define {name}' to guard")
        text = pattern.sub(lambda m: f"{m.group(1)}#ifndef {name}\n{m.group(0)}\n{m.group(1)}#endif", text, count=1)
    return text


def kernel_files(kernel):
    """The @paths a kernel needs: its sources' folders, the guarded files' folders, include folders."""
    folders = {str(Path(spec["source"]).parent) for spec in kernel["specs"].values()}
    folders |= {str(Path(path).parent) for path in kernel.get("guards", {})}
    folders |= set(kernel.get("include_dirs", []))
    return sorted(folders)


def materialize(kernels, src_root, out_root):
    """Copy what the kernels need from src_root (fetched, unmodified) to out_root and apply the
    guards there. Returns {kernel: {variant: runnable spec dict}} with absolute sources."""
    out_root = Path(out_root)
    for kernel in kernels.values():
        for folder in kernel_files(kernel):
            source, target = resolve(folder, src_root), resolve(folder, out_root)
            target.mkdir(parents=True, exist_ok=True)
            for item in source.iterdir():  # one level: the folder's files (headers, sources)
                if item.is_file():
                    shutil.copy2(item, target / item.name)
    guards = {}
    for kernel in kernels.values():
        for path, names in kernel.get("guards", {}).items():
            guards.setdefault(path, set()).update(names)
    for path, names in guards.items():
        target = resolve(path, out_root)
        target.write_text(apply_guards(resolve(path, src_root).read_text(errors="replace"), sorted(names)))
    runnable = {}
    for name, kernel in kernels.items():
        runnable[name] = {variant: dict(spec, source=str(resolve(spec["source"], out_root).resolve()))
                          for variant, spec in kernel["specs"].items()}
    return runnable


def include_dirs(kernel, root):
    return [str(resolve(folder, root).resolve()) for folder in kernel.get("include_dirs", [])]


def candidates(kernel_name, variant, spec):
    """Every candidate of one spec: parameters (cartesian product in the spec's order) kept by the
    constraints, with the launch evaluated."""
    args = dict(spec.get("args", {}))
    parameters = spec.get("parameters", {})
    names = list(parameters)
    result = []
    for values in itertools.product(*(parameters[name] for name in names)):
        params = dict(zip(names, values))
        bindings = dict(args, **params)
        if not all(evaluate(constraint, bindings) for constraint in spec.get("constraints", [])):
            continue
        entry = instantiate_entry(spec["entry"], bindings)
        template_names = template_parameter_names(spec["entry"])
        block = dimensions(spec["block"], bindings)
        result.append({
            "kernel": kernel_name,
            "variant": variant,
            "id": ((variant + ":") if variant else "") + ",".join(f"{k}={v}" for k, v in params.items()),
            "entry": entry,
            "params": params,
            "defines": {k: v for k, v in params.items() if k not in template_names},
            "grid": dimensions(spec["grid"], bindings),
            "block": block,
            "threads_per_block": block[0] * block[1] * block[2],
            "shared_bytes": evaluate(spec.get("shared_bytes", "0"), bindings),
            "buffers": {name: evaluate(size, bindings) for name, size in spec["buffers"].items()},
            "bindings": bindings,
        })
    return result


def template_parameter_names(entry):
    if "<" not in entry:
        return set()
    inside = entry[entry.index("<") + 1:entry.rindex(">")]
    return {name for part in _split_top_level(inside) for kind, name in _tokens(part) if kind == "name"}


def instantiate_entry(entry, bindings):
    """'reduce4<float, THREADS>' -> 'reduce4<float, 256>': integer expressions evaluated, type
    and bool arguments kept."""
    if "<" not in entry:
        return entry
    base, inside = entry[:entry.index("<")], entry[entry.index("<") + 1:entry.rindex(">")]
    arguments = []
    for part in _split_top_level(inside):
        try:
            arguments.append(str(evaluate(part, bindings)))
        except ExpressionError:
            arguments.append(part)  # a type or bool argument
    return f"{base}<{', '.join(arguments)}>"


def entry_base(entry):
    return entry.split("<", 1)[0].strip()
