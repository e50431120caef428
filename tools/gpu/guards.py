"""Decide SGLang's GPU-architecture guards for one GPU: true, false, or undecided.

The predicates' meaning is SGLang's own (srt/utils/common.py): `_check_cuda_device_version`
is true when `is_cuda()`, `get_device_sm() // 10` is one of the majors and torch's CUDA is at
least the version named, so `is_sm120_supported()` holds on sm120 and sm121 and
`is_blackwell_supported()` on majors 10-12; `get_platform().is_sm100` and the like wrap them
(srt/runtime_context.py). Tests combine them with and/or/not, compare
`get_device_capability()` or `get_device_sm()`, and go through module-level names
(`_is_hip = is_hip()`, imported from another module too). Anything else is undecided, and a
test with no GPU fact in it is never decided: guessing would drop code that runs.
vLLM asks its `current_platform` object (vllm/platforms/interface.py): `is_cuda()`,
`is_rocm()`, `is_xpu()`, `is_cpu()`, `is_tpu()`, `has_device_capability(90)` (at least),
`is_device_capability(100)` (exactly), `is_device_capability_family(100)` (the same major).
torch's own build tells the rest: a CUDA or ROCm torch has no XPU device and no XCCL
(`torch.xpu.is_available()`, `torch.distributed.is_xccl_available()`: false on those GPUs).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable
from typing import NamedTuple

from tools.digits import is_digits
from tools.gpu.info import GpuInfo

# name -> (its expression, the lookup of the module that defines it, "file:line")
Lookup = Callable[[str], "tuple[ast.expr, Lookup, str] | None"]

_CUDA_CHECKS: dict[str, tuple[tuple[int, ...], tuple[int, int]]] = {
    "is_sm80_supported": ((8,), (11, 0)),
    "is_ampere_with_cuda_12_3": ((8,), (12, 3)),
    "is_sm90_supported": ((9,), (12, 3)),
    "is_hopper_with_cuda_12_3": ((9,), (12, 3)),
    "is_sm100_supported": ((10,), (12, 8)),
    "is_sm100_or_sm110_supported": ((10, 11), (12, 8)),
    "is_sm110_supported": ((11,), (12, 8)),
    "is_sm120_supported": ((12,), (12, 8)),
    "is_blackwell_supported": ((10, 11, 12), (12, 8)),
    "is_blackwell": ((10, 11, 12), (12, 8)),
}
# The CUDA a GPU of each major needs at all: a server running on it has at least that.
_MIN_CUDA = {8: (11, 0), 9: (11, 8), 10: (12, 8), 11: (13, 0), 12: (12, 8)}
_EXACT_SM = {"is_sm120": 120, "is_sm121": 121}
_VENDORS = {
    "is_cuda": {"cuda"},
    "is_hip": {"hip"},
    "is_npu": {"npu"},
    "is_cuda_alike": {"cuda", "hip"},
    "is_xpu": set(),
    "is_cpu": set(),
    "is_tpu": set(),
    "is_musa": set(),
    "is_hpu": set(),
    "is_mps": set(),
}
# what torch's build for a GPU vendor has: the XPU device and Intel's XCCL collectives ship
# only in torch's XPU builds, never in a CUDA or ROCm one (the vendors where each is true)
_TORCH_BUILD: dict[tuple[str, str], set[str]] = {
    ("xpu", "is_available"): set(),
    ("distributed", "is_xccl_available"): set(),
}
_GFX = {
    "is_gfx95_supported": "gfx95",
    "is_gfx942_supported": "gfx942",
    "is_gfx1250_supported": "gfx1250",
}
_PLATFORM = {
    "is_cuda": "is_cuda",
    "is_hip": "is_hip",
    "is_npu": "is_npu",
    "is_xpu": "is_xpu",
    "is_musa": "is_musa",
    "is_mps": "is_mps",
    "is_sm90": "is_sm90_supported",
    "is_sm100": "is_sm100_supported",
    "is_sm100_or_sm110": "is_sm100_or_sm110_supported",
    "is_sm110": "is_sm110_supported",
    "is_sm120": "is_sm120_supported",
    "is_blackwell": "is_blackwell_supported",
    "is_hopper_with_cuda_12_3": "is_hopper_with_cuda_12_3",
    "device_sm": "get_device_sm",
    "device_capability": "get_device_capability",
}
_DEVICE_FUNCTIONS = {
    *_VENDORS,
    *_CUDA_CHECKS,
    *_EXACT_SM,
    *_GFX,
    "get_device_sm",
    "get_device_capability",
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_ARITH = {
    ast.FloorDiv: operator.floordiv,
    ast.Mult: operator.mul,
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mod: operator.mod,
}


class _Unknown:
    pass


UNKNOWN = _Unknown()
_PRESENT = "present"  # torch.version.hip / .cuda on their own platform (a version string)
_NOT_TORCH = _Unknown()  # an expression that asks nothing of torch's build


def three_valued(conjunction: bool, values: Iterable[object]) -> object:
    """Three-valued and/or over operands evaluated in order: the first decisive one decides,
    whatever the undecided ones before it are."""
    result: object = UNKNOWN
    undecided = False
    for value in values:
        if value is UNKNOWN:
            undecided = True
        elif bool(value) is not conjunction:
            return value
        else:
            result = value
    return UNKNOWN if undecided else result


class Decision(NamedTuple):
    value: bool | None  # None: undecided
    notes: list[str]  # how module-level names were read, for the evidence


def predicate(name: str, gpu: GpuInfo) -> object:
    """One of SGLang's device functions, called on this GPU."""
    if name in _VENDORS:
        return UNKNOWN if gpu.vendor is None else gpu.vendor in _VENDORS[name]
    if name in _CUDA_CHECKS:
        majors, need = _CUDA_CHECKS[name]
        if gpu.vendor is not None and gpu.vendor != "cuda":
            return False
        if gpu.vendor is None or gpu.major is None:
            return UNKNOWN
        if gpu.major not in majors:
            return False
        if gpu.cuda_version and is_digits(gpu.cuda_version.replace(".", "")):
            have = tuple(int(x) for x in gpu.cuda_version.split(".")[:2] if x)
            return have >= need
        return True if _MIN_CUDA.get(gpu.major, (0, 0)) >= need else UNKNOWN
    if name in _EXACT_SM:
        if gpu.vendor is not None and gpu.vendor != "cuda":
            return False
        return UNKNOWN if gpu.vendor is None or gpu.sm is None else gpu.sm == _EXACT_SM[name]
    if name in _GFX:
        if gpu.vendor is not None and gpu.vendor != "hip":
            return False
        return UNKNOWN if not gpu.arch else gpu.arch.startswith(_GFX[name])
    if name == "get_device_sm":
        if gpu.vendor == "npu":
            return 0  # no torch.cuda there: SGLang's get_device_sm() answers 0
        return UNKNOWN if gpu.sm is None or gpu.vendor is None else gpu.sm
    if name == "get_device_capability":
        ok = gpu.vendor in ("cuda", "hip") and gpu.sm is not None
        return (gpu.sm // 10, gpu.sm % 10) if ok and gpu.sm is not None else UNKNOWN
    return UNKNOWN


class _Evaluator:
    def __init__(self, gpu: GpuInfo, known: dict[str, bool] | None = None) -> None:
        self.gpu = gpu
        self.known = known or {}  # attributes whose value is a known fact (`use_mla_backend`)
        self.notes: list[str] = []
        self.touched = False  # a GPU fact was read: only then is a value a decision

    def device(self, name: str) -> object:
        if name not in _DEVICE_FUNCTIONS:
            return UNKNOWN
        self.touched = True
        return predicate(name, self.gpu)

    def value(self, node: ast.expr, lookup: Lookup, depth: int = 0) -> object:
        if depth > 12:
            return UNKNOWN
        match node:
            case ast.Constant(value=value):
                return value
            case ast.Attribute(attr=attr) if attr in self.known:
                self.touched = True
                return self.known[attr]
            case ast.Tuple(elts=elts) | ast.List(elts=elts) | ast.Set(elts=elts):
                items = [self.value(e, lookup, depth + 1) for e in elts]
                return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
            case ast.Call(func=ast.Name(id=name)):
                return self.device(name)
            case ast.Call(func=ast.Attribute(attr="get_device_capability")):
                return self.device("get_device_capability")  # torch.cuda.get_device_capability
            case ast.Call(
                func=ast.Attribute(value=ast.Name(id="current_platform"), attr=attr), args=args
            ):
                return self.vllm_platform(attr, [self.value(a, lookup, depth + 1) for a in args])
            case ast.Attribute(value=ast.Call(func=ast.Name(id="get_platform")), attr=attr):
                return self.device(_PLATFORM[attr]) if attr in _PLATFORM else UNKNOWN
            case ast.Call() | ast.Attribute() if (
                built := self.torch_build(node)
            ) is not _NOT_TORCH:
                return built
            case ast.Name(id=name):
                return self.name(name, lookup, depth)
            case ast.Subscript(value=inner, slice=ast.Constant(value=int() as index)):
                seq = self.value(inner, lookup, depth + 1)
                return (
                    seq[index]
                    if isinstance(seq, tuple) and -len(seq) <= index < len(seq)
                    else UNKNOWN
                )
            case ast.UnaryOp(op=ast.Not(), operand=operand):
                negated = self.value(operand, lookup, depth + 1)
                return UNKNOWN if negated is UNKNOWN else not negated
            case ast.BoolOp(op=op, values=values):
                return self.boolean(isinstance(op, ast.And), values, lookup, depth)
            case ast.Compare():
                return self.compare(node, lookup, depth)
            case ast.BinOp(left=left, op=op, right=right) if type(op) in _ARITH:
                a, b = self.value(left, lookup, depth + 1), self.value(right, lookup, depth + 1)
                if (
                    isinstance(a, int)
                    and isinstance(b, int)
                    and not (b == 0 and isinstance(op, ast.FloorDiv | ast.Mod))
                ):
                    return _ARITH[type(op)](a, b)
        return UNKNOWN

    def torch_build(self, node: ast.expr) -> object:
        """What torch's build for this GPU's vendor says (_NOT_TORCH: `node` asks nothing of it):
        `torch.version.cuda` / `.hip` (a version string on their own platform), and
        `torch.xpu.is_available()`, `torch.distributed.is_xccl_available()` (_TORCH_BUILD)."""
        match node:
            case ast.Call(
                func=ast.Attribute(
                    value=ast.Attribute(value=ast.Name(id="torch"), attr=module), attr=function
                ),
                args=[],
            ) if (module, function) in _TORCH_BUILD:
                self.touched = True
                vendors = _TORCH_BUILD[(module, function)]
                return UNKNOWN if self.gpu.vendor is None else self.gpu.vendor in vendors
            case ast.Attribute(
                value=ast.Attribute(value=ast.Name(id="torch"), attr="version"),
                attr=("hip" | "cuda") as attr,
            ):
                self.touched = True
                if self.gpu.vendor is None:
                    return UNKNOWN
                return _PRESENT if self.gpu.vendor == attr else None
        return _NOT_TORCH

    def vllm_platform(self, method: str, args: list[object]) -> object:
        """vLLM's `current_platform.<method>(*args)` on this GPU."""
        vendor = {"is_rocm": "is_hip"}.get(method, method)
        if vendor in _VENDORS and not args:
            return self.device(vendor)
        if not method.endswith("device_capability") and "capability_family" not in method:
            return UNKNOWN
        wanted = args[0] if len(args) == 1 else None
        if (
            isinstance(wanted, tuple)
            and len(wanted) == 2
            and all(isinstance(x, int) for x in wanted)
        ):
            wanted = wanted[0] * 10 + wanted[1]
        sm = self.device("get_device_sm")
        if not isinstance(wanted, int) or not isinstance(sm, int):
            return UNKNOWN
        if method == "has_device_capability":
            return sm >= wanted
        if method == "is_device_capability":
            return sm == wanted
        return sm // 10 == wanted // 10  # is_device_capability_family

    def name(self, name: str, lookup: Lookup, depth: int) -> object:
        found = lookup(name)
        if found is None:
            return UNKNOWN
        expr, where, place = found
        touched, self.touched = self.touched, False
        value = self.value(expr, where, depth + 1)
        if self.touched:
            self.notes.append(f"`{name}` is `{ast.unparse(expr)}` ({place})")
        self.touched = self.touched or touched
        return value

    def boolean(
        self, conjunction: bool, values: list[ast.expr], lookup: Lookup, depth: int
    ) -> object:
        return three_valued(conjunction, (self.value(v, lookup, depth + 1) for v in values))

    def compare(self, node: ast.Compare, lookup: Lookup, depth: int) -> object:
        left = self.value(node.left, lookup, depth + 1)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.value(right_node, lookup, depth + 1)
            if left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:
                return UNKNOWN
            left = right
        return True


def decide(
    test: ast.expr, lookup: Lookup, gpu: GpuInfo, known: dict[str, bool] | None = None
) -> Decision:
    """Whether `test` holds on `gpu`; undecided unless it reads a GPU fact (or one of the
    `known` attributes) and all it needs is known."""
    evaluator = _Evaluator(gpu, known)
    value = evaluator.value(test, lookup)
    if value is UNKNOWN or not evaluator.touched:
        return Decision(None, [])
    return Decision(bool(value), evaluator.notes)


def mentions_gpu(test: ast.expr, lookup: Lookup) -> bool:
    """Whether a test reads a GPU fact at all, decidable or not."""
    evaluator = _Evaluator(GpuInfo(source=""))
    evaluator.value(test, lookup)
    return evaluator.touched


def no_names(_: str) -> None:
    """A lookup for code whose module-level names are not known."""
    return None
