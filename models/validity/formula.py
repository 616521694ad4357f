"""Scoring formulas as data: a declarative TOML file, evaluated safely (no `eval` or `exec` of user text).

File format (see `data/formulas/aoa_eval01.toml`):

    name = "..."                  # free text
    source = "..."                # where the formula comes from
    role = "mission"              # what branches are keyed by (the results table's `role`)

    [components]                  # evaluated in order; each may use counters, measures and earlier components
    diplomacy = "specific_messages*8 + trades_completed*15"
    [components.bonus]            # a branch: one expression per role
    "World Peace" = "ceasefires_brokered*100"

    [total]
    expression = "diplomacy + bonus"
    floor = 0                     # optional clamp of the raw total
    ceiling = 100                 # optional
    round = "half-up"             # "half-up", "half-even" or "none"
    parts = ["diplomacy", "bonus"] # components that add up to the raw total (for decomposition)

    [failure]                     # optional: when an agent failed the outcome its role defines
    "Last Standing" = "nation_alive == 0"

    [outcomes]                    # optional: which way each outcome measure is better
    nation_power = "higher"
    placement = "lower"

Expressions are arithmetic over names: numbers, + - * / **, unary minus, parentheses, comparisons
(< <= > >= == !=, giving 1 or 0), and the functions min, max, abs, clamp(x, lo, hi) and
if(condition, then, else). Anything else (attribute access, calls to other functions, strings,
subscripts, lambdas) is rejected when the file is read, with its line and the offending name; so is a name
that is neither a known input nor an earlier component.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from referee.models.registry import suggest
from referee.models.registry import DIRECTIONS

FUNCTIONS = {
    "min": min,
    "max": max,
    "abs": abs,
    "clamp": lambda x, lo, hi: min(max(x, lo), hi),
    "if": lambda c, a, b: a if c else b,
}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: operator.pow}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}
ROUNDING = ("half-up", "half-even", "none")


# operators a formula may not use, by the symbol a person wrote (their AST node has no source text of its own)
OPERATOR_SYMBOLS = {ast.Not: "not", ast.Invert: "~", ast.Mod: "%", ast.FloorDiv: "//", ast.BitAnd: "&", ast.BitOr: "|",
                    ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@", ast.And: "and", ast.Or: "or"}


class FormulaError(ValueError):
    """A formula file is malformed; the message names the file, the line and the offending name."""


MAX_LENGTH = 10_000  # characters in one expression
MAX_NODES = 2_000  # syntax-tree nodes in one expression
MAX_DEPTH = 50  # nesting of one expression
ARITY = {"min": (2, None), "max": (2, None), "abs": (1, 1), "clamp": (3, 3), "if": (3, 3)}


@dataclass
class Expression:
    """A parsed, checked expression: its text, its tree, the names it reads, and where it was written (file,
    line and role, for error messages)."""

    text: str
    tree: ast.Expression
    names: set[str]
    where: str = ""

    def __call__(self, env: dict[str, float]) -> float:
        """The expression's value for the inputs `env`, computed in floating point. Raises FormulaError naming
        where the expression was written when the arithmetic fails (overflow, 0 to a negative power, a
        complex result, division by zero) or gives a value that is not a finite number."""
        try:
            value = _evaluate(self.tree.body, env)
        except (OverflowError, ZeroDivisionError) as exc:
            raise FormulaError(f"{self.where}: {self.text!r} cannot be computed ({_fault(exc)}) for {_shown(env, self.names)}") from None
        if isinstance(value, complex) or not math.isfinite(value):
            raise FormulaError(f"{self.where}: {self.text!r} gives {value!r}, not a finite number, for "
                               f"{_shown(env, self.names)}")
        return float(value)


def _fault(exc: BaseException) -> str:
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    return "a complex result" if "complex" in str(exc) else "a number too large"


def _shown(env: dict[str, float], names: set[str]) -> str:
    used = {n: env[n] for n in sorted(names) if n in env}
    return ", ".join(f"{k}={v:g}" for k, v in list(used.items())[:8]) or "these inputs"


def _evaluate(node, env):
    if isinstance(node, ast.Constant):
        return float(node.value)  # floats throughout: 9**9**9**9 overflows at once instead of running forever
    if isinstance(node, ast.Name):
        return float(env[node.id])
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, env), _evaluate(node.right, env)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ZeroDivisionError("division by zero")
        value = _BINARY[type(node.op)](left, right)
        if isinstance(value, complex):
            raise OverflowError("complex result")
        return value
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, env)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _evaluate(right_node, env)
            if not _COMPARE[type(op)](left, right):
                return 0.0
            left = right
        return 1.0
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*[_evaluate(a, env) for a in node.args])
    raise AssertionError("unreachable: checked at parse time")


def _line_of(text: str, needle: str, key: str | None = None) -> int:
    """1-based line of `needle` in the file, else of the line assigning `key`; 0 when neither is found."""
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if needle in line:
            return number
    if key is not None:
        pattern = re.compile(r'^\s*"?' + re.escape(key) + r'"?\s*=')
        for number, line in enumerate(lines, start=1):
            if pattern.match(line):
                return number
    return 0


def parse_expression(text: str, allowed: set[str], where: str) -> Expression:
    """Parse `text` as a formula expression; raises FormulaError naming `where` for anything not arithmetic."""
    if not isinstance(text, str):
        raise FormulaError(f"{where}: expected an expression string, got {text!r}")
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"{where}: the expression is {len(text):,} characters long; at most {MAX_LENGTH:,} are read")
    source = re.sub(r"\bif\s*\(", "if_(", text)  # 'if' is a keyword in Python's grammar
    try:
        tree = ast.parse(source, mode="eval")
        nodes = list(ast.walk(tree))
        depth = _depth(tree.body)
    except SyntaxError as exc:
        raise FormulaError(f"{where}: cannot parse {text!r}: {exc.msg}") from exc
    except (RecursionError, MemoryError) as exc:
        raise FormulaError(f"{where}: the expression nests too deeply to read") from exc
    if len(nodes) > MAX_NODES or depth > MAX_DEPTH:
        raise FormulaError(f"{where}: the expression has {len(nodes):,} parts nested {depth} deep; at most "
                           f"{MAX_NODES:,} parts and {MAX_DEPTH} levels are read")
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func.id if isinstance(node.func, ast.Name) else None
            func = "if" if func == "if_" else func
            if func not in FUNCTIONS or node.keywords:
                shown = func or ast.unparse(node.func)
                raise FormulaError(f"{where}: '{shown}' is not an allowed function (allowed: {sorted(FUNCTIONS)})")
            low, high = ARITY[func]
            if len(node.args) < low or (high is not None and len(node.args) > high):
                want = f"{low}" if low == high else f"at least {low}"
                raise FormulaError(f"{where}: {func}() takes {want} argument(s), got {len(node.args)} in {text!r}")
            node.func.id = func
        elif isinstance(node, ast.Name):
            if isinstance(getattr(node, "ctx", None), ast.Load) and node.id not in FUNCTIONS and node.id != "if_":
                names.add(node.id)
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise FormulaError(f"{where}: only numbers are allowed as constants, got {node.value!r}")
        elif not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Load, ast.USub, ast.UAdd,
                                   *_BINARY, *_COMPARE)):
            operator = OPERATOR_SYMBOLS.get(type(node))
            shown = f"the operator {operator!r}" if operator else f"'{type(node).__name__}'"
            raise FormulaError(f"{where}: {shown} is not arithmetic referee evaluates, in {text!r} (allowed: + - * / ** "
                               "and comparisons, with the functions)")
    # names used as function heads were collected as Names too: drop them
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names -= called
    unknown = sorted(names - allowed)
    if unknown:
        raise FormulaError(f"{where}: unknown name '{unknown[0]}' (known: counters, measures and earlier components)")
    return Expression(text, tree, names, where)


def _depth(node, level: int = 1) -> int:
    children = list(ast.iter_child_nodes(node))
    return level if not children else max(_depth(c, level + 1) for c in children)


@dataclass
class Formula:
    """A scoring formula: components (plain or branched by role), a total with clamp and rounding, the parts
    that add up to the raw total, and optional per-role failure conditions."""

    name: str
    role: str | None
    components: dict[str, Expression | dict[str, Expression]]
    total: Expression
    floor: float | None = None
    ceiling: float | None = None
    rounding: str = "half-up"
    parts: list[str] = field(default_factory=list)
    failure: dict[str, Expression] = field(default_factory=dict)
    inputs: set[str] = field(default_factory=set)
    source: str = ""
    outcomes: dict[str, str] = field(default_factory=dict)  # outcome -> "higher" or "lower" (which is better)

    def evaluate(self, values: dict[str, float], role: str | None = None) -> dict[str, float]:
        """Every component, `raw_total` (before clamp and rounding) and `total` for one agent.

        values : counter and measure values by name (missing inputs raise KeyError naming them).
        role : the agent's role, choosing each branched component's expression.
        """
        missing = sorted(self.inputs - set(values))
        if missing:
            raise KeyError(f"missing inputs {missing}")
        env = dict(values)
        out = {}
        for name, expr in self.components.items():
            if isinstance(expr, dict):
                if role not in expr:
                    raise KeyError(f"component '{name}' has no branch for role {role!r}")
                expr = expr[role]
            env[name] = out[name] = expr(env)
        raw = self.total(env)
        out.update(raw_total=raw, total=self.finish(raw))
        return out

    def finish(self, raw: float) -> float:
        """A raw total clamped to [floor, ceiling] and rounded as the formula says."""
        total = raw
        if self.floor is not None:
            total = max(total, self.floor)
        if self.ceiling is not None:
            total = min(total, self.ceiling)
        if self.rounding == "half-up":
            return float(math.floor(total + 0.5))
        if self.rounding == "half-even":
            return float(round(total))
        return float(total)

    def failed(self, values: dict[str, float], role: str | None) -> bool | None:
        """Whether the agent failed its role's outcome (None when no rule covers the role or inputs lack)."""
        rule = self.failure.get(role)
        if rule is None or not rule.names <= set(values):
            return None
        return bool(rule(values))


LAYOUT = {"name": str, "source": str, "role": str, "components": dict, "total": dict, "failure": dict,
          "outcomes": dict}
TOTAL_KEYS = {"expression": str, "floor": (int, float), "ceiling": (int, float), "round": str, "parts": list}


def _check_layout(doc: dict, path: Path, where) -> None:
    """Refuse unknown keys and values of the wrong kind anywhere in a formula file, naming file and line."""
    def kind_name(kinds) -> str:
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        return " or ".join({str: "text", dict: "a table", list: "a list", int: "a number", float: "a number"}[k]
                           for k in kinds if k is not int or float not in kinds)

    for key, value in doc.items():
        if key not in LAYOUT:
            raise FormulaError(f"{where(key, key)}: unknown key '{key}'{suggest(key, LAYOUT)}; a formula has "
                               f"{sorted(LAYOUT)}")
        if not isinstance(value, LAYOUT[key]) or isinstance(value, bool):
            raise FormulaError(f"{where(key, key)}: '{key}' must be {kind_name(LAYOUT[key])}, got {value!r}")
    for key, value in doc.get("total", {}).items():
        kinds = TOTAL_KEYS.get(key)
        if kinds is None:
            raise FormulaError(f"{where(key, key)}: unknown key '{key}' in [total]{suggest(key, TOTAL_KEYS)}; "
                               f"[total] has {sorted(TOTAL_KEYS)}")
        if not isinstance(value, kinds) or isinstance(value, bool):
            raise FormulaError(f"{where(key, key)}: [total] {key} must be {kind_name(kinds)}, got {value!r}")
    for name, value in doc.get("components", {}).items():
        if isinstance(value, dict):
            bad = [r for r, e in value.items() if not isinstance(e, str)]
            if bad:
                raise FormulaError(f"{where(name, name)}: component '{name}' ({bad[0]}) must be an expression string")
        elif not isinstance(value, str):
            raise FormulaError(f"{where(name, name)}: component '{name}' must be an expression string or a table of "
                               f"them by role, got {value!r}")
    for table in ("failure", "outcomes"):
        bad = [k for k, v in doc.get(table, {}).items() if not isinstance(v, str)]
        if bad:
            raise FormulaError(f"{where(bad[0], bad[0])}: [{table}] {bad[0]} must be text")


def _reserved(name: str) -> str | None:
    """Why `name` cannot name a component (it would shadow a function or cannot be written in an expression),
    or None when it can."""
    import keyword

    if name in FUNCTIONS or name == "if_":
        return "is a formula function's name"
    if not name.isidentifier() or keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "cannot be written in an expression (letters, digits and _, not a Python keyword)"
    if name.startswith("__"):
        return "starts with '__', which is reserved"
    return None


def load_formula(path: str | Path, inputs: set[str]) -> Formula:
    """Read and check a formula file against the names of the available inputs (counters and measures).

    Raises FormulaError with the file, the line and the offending name for invalid TOML, an unknown name,
    a non-arithmetic expression, an unknown rounding, or a part that is not a component.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise FormulaError(f"{path}: no such formula file") from exc
    except UnicodeDecodeError as exc:
        raise FormulaError(f"{path}: not UTF-8 text (byte {exc.start}): a formula file is TOML in UTF-8") from exc
    except OSError as exc:
        raise FormulaError(f"{path}: cannot read the formula file ({exc.strerror or exc})") from exc
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FormulaError(f"{path}: invalid TOML: {exc}") from exc
    except RecursionError as exc:
        raise FormulaError(f"{path}: tables nested too deeply to read") from exc
    where = lambda needle, key=None: f"{path}, line {_line_of(text, str(needle), key)}"  # noqa: E731
    _check_layout(doc, path, where)
    known = set(inputs)
    components: dict[str, Expression | dict[str, Expression]] = {}
    for name, value in doc.get("components", {}).items():
        reserved = _reserved(name)
        if reserved:
            raise FormulaError(f"{where(name, name)}: component name {name!r} {reserved}; choose another name")
        if isinstance(value, dict):
            components[name] = {role: parse_expression(expr, known, f"{where(expr, role)}, component '{name}' ({role})")
                                for role, expr in value.items()}
        else:
            components[name] = parse_expression(value, known, f"{where(value, name)}, component '{name}'")
        known.add(name)
    total_doc = doc.get("total")
    if not isinstance(total_doc, dict) or "expression" not in total_doc:
        raise FormulaError(f"{path}: a [total] table with an 'expression' is required")
    total = parse_expression(total_doc["expression"], known, f"{where(total_doc['expression'], 'expression')}, total")
    rounding = total_doc.get("round", "half-up")
    if rounding not in ROUNDING:
        raise FormulaError(f"{where('round')}: round must be one of {ROUNDING}, got {rounding!r}")
    parts = list(total_doc.get("parts", []))
    bad = [p for p in parts if p not in components]
    if bad:
        raise FormulaError(f"{where('parts')}: part '{bad[0]}' is not a component")
    failure = {role: parse_expression(expr, set(inputs), f"{where(expr, role)}, failure rule ({role})")
               for role, expr in doc.get("failure", {}).items()}
    used = set().union(*[e.names for c in components.values()
                         for e in (c.values() if isinstance(c, dict) else [c])], total.names)
    outcomes = {str(k): str(v) for k, v in doc.get("outcomes", {}).items()}
    bad = [k for k, v in outcomes.items() if v not in DIRECTIONS]
    if bad:
        raise FormulaError(f"{where('outcomes')}: outcome '{bad[0]}' must be \"higher\" or \"lower\" (which is better), "
                           f"got {outcomes[bad[0]]!r}")
    return Formula(name=doc.get("name", path.stem), role=doc.get("role"), components=components, total=total,
                   floor=total_doc.get("floor"), ceiling=total_doc.get("ceiling"), rounding=rounding, parts=parts,
                   failure=failure, inputs=used & set(inputs), source=doc.get("source", ""), outcomes=outcomes)
