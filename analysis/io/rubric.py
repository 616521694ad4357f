"""LLM-judge rubrics: data files (TOML) that say what to ask, about which stored events, and how to read the answer.

A rubric (shipped in `data/rubrics/`, or any file) holds:

    name = "compact-influence"          # what `referee judge --rubric` calls it
    version = 1                          # bump it when the wording changes: only changed prompts are re-asked
    source = "COMPACT, section 3.1"      # the paper section it follows
    unit = "dyad-round"                  # one item per (match, round, player, other); or player-round, player-match
    system = "..."                       # the system message
    template = "... {player} ... {chat} ..."   # the user message; {{ and }} for literal braces
    [answer]                             # the JSON answer's fields: type integer|number|string, min, max
    rating = { type = "integer", min = 0, max = 3 }
    [store]                              # answer field -> judge measure name (rater = the model)
    rating = "influence"

The template may use the variables of its unit (`UNIT_VARIABLES`) and any `--context NAME=...` given to the
judge. `load_rubric(name_or_path)` reads and checks one; `parse_answer(rubric, text)` reads a model's answer
or raises `AnswerError` saying what is wrong with it.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import tomllib
from dataclasses import dataclass
from pathlib import Path

from referee.io.resources import shipped

UNIT_VARIABLES = {
    "dyad-round": {"game", "match", "round", "player", "other", "chat", "reasoning", "action"},
    "player-round": {"game", "match", "round", "player", "history", "reasoning"},
    "player-match": {"game", "match", "player", "transcript"},
}
TYPES = {"integer", "number", "string"}
KEYS = {"name", "version", "source", "unit", "system", "template", "answer", "store"}


class RubricError(ValueError):
    """A rubric file is malformed; the message names the file and the key."""


class AnswerError(ValueError):
    """A model's answer does not fit the rubric's answer schema; `reason` is a short category."""

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(message)


@dataclass(frozen=True)
class AnswerField:
    """One field of the answer: its JSON type and, for numbers, the allowed range."""

    name: str
    type: str
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class Rubric:
    """A loaded rubric (module docstring); `variables` are the template's placeholders."""

    name: str
    version: int
    source: str
    unit: str
    system: str
    template: str
    answer: tuple[AnswerField, ...]
    store: dict
    path: str

    @property
    def variables(self) -> set[str]:
        """The placeholders the template uses."""
        return {field for _, field, _, _ in string.Formatter().parse(self.template) if field}

    @property
    def context(self) -> set[str]:
        """The placeholders that are not the unit's own: they come from `--context NAME=...`."""
        return self.variables - UNIT_VARIABLES[self.unit]

    def prompt(self, variables: dict) -> str:
        """The user message for one item's variables."""
        return self.template.format_map(variables)

    def cache_key(self, model: str, prompt: str) -> str:
        """sha256 of (rubric name, version, model, system message, prompt): the answer cache's key."""
        text = json.dumps([self.name, self.version, model, self.system, prompt], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def shipped_rubrics() -> list[str]:
    """The names of the rubrics in `data/rubrics/`."""
    return sorted(load_rubric(p).name for p in shipped("rubrics").glob("*.toml"))


def _path(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.exists():
        return path
    for candidate in shipped("rubrics").glob("*.toml"):
        if candidate.stem.replace("_", "-") == str(name_or_path) or candidate.stem == str(name_or_path):
            return candidate
    raise RubricError(f"no rubric {name_or_path!r}: give a .toml file or one of "
                      f"{sorted(p.stem.replace('_', '-') for p in shipped('rubrics').glob('*.toml'))}")


def load_rubric(name_or_path: str | Path) -> Rubric:
    """Read and check a rubric: a shipped name (e.g. 'compact-influence') or a TOML file.

    Raises RubricError naming the file and key for invalid TOML, unknown or missing keys, an unknown unit or
    answer type, a template placeholder that is neither the unit's nor a context name, or a [store] entry that
    names no numeric answer field."""
    path = _path(name_or_path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RubricError(f"{path}: invalid TOML: {exc}") from exc
    unknown = set(doc) - KEYS
    if unknown:
        raise RubricError(f"{path}: unknown keys {sorted(unknown)}")
    for key in ("name", "version", "unit", "system", "template", "answer"):
        if key not in doc:
            raise RubricError(f"{path}: missing key {key!r}")
    if doc["unit"] not in UNIT_VARIABLES:
        raise RubricError(f"{path}: key 'unit': {doc['unit']!r} is not one of {sorted(UNIT_VARIABLES)}")
    if not isinstance(doc["version"], int) or isinstance(doc["version"], bool):
        raise RubricError(f"{path}: key 'version': expected an integer")
    fields = []
    for name, spec in doc["answer"].items():
        if not isinstance(spec, dict) or spec.get("type") not in TYPES:
            raise RubricError(f"{path}: answer field {name!r}: 'type' must be one of {sorted(TYPES)}")
        fields.append(AnswerField(name, spec["type"], spec.get("min"), spec.get("max")))
    numeric = {f.name for f in fields if f.type != "string"}
    store = dict(doc.get("store", {}))
    bad = sorted(set(store) - numeric)
    if bad:
        raise RubricError(f"{path}: [store] {bad[0]!r} is not a numeric answer field ({sorted(numeric)})")
    rubric = Rubric(name=doc["name"], version=doc["version"], source=doc.get("source", ""), unit=doc["unit"],
                    system=doc["system"], template=doc["template"], answer=tuple(fields), store=store, path=str(path))
    try:
        rubric.variables
    except ValueError as exc:
        raise RubricError(f"{path}: key 'template': {exc} (write {{{{ and }}}} for literal braces)") from exc
    odd = sorted(v for v in rubric.context if not re.fullmatch(r"[a-z_][a-z0-9_]*", v))
    if odd:
        raise RubricError(f"{path}: key 'template': placeholder {{{odd[0]}}} is not a name")
    return rubric


def _json_object(text: str) -> dict:
    """The JSON object in a model's answer: the whole text, else the first {...} block (models wrap answers
    in prose or code fences)."""
    try:
        value = json.loads(text)
    except ValueError:
        found = re.search(r"\{.*\}", text, flags=re.DOTALL)
        if found is None:
            raise AnswerError("not json", "the answer holds no JSON object") from None
        try:
            value = json.loads(found.group(0))
        except ValueError as exc:
            raise AnswerError("not json", f"the answer's JSON does not parse: {exc}") from None
    if not isinstance(value, dict):
        raise AnswerError("not an object", f"expected a JSON object, got {type(value).__name__}")
    return value


def parse_answer(rubric: Rubric, text: str) -> dict:
    """The answer's fields, checked against the rubric: every field present, of its type, inside its range.

    Raises AnswerError (reason 'not json', 'not an object', 'missing field', 'wrong type' or 'out of range')."""
    value = _json_object(text or "")
    out = {}
    for field in rubric.answer:
        if field.name not in value:
            raise AnswerError("missing field", f"the answer lacks {field.name!r}")
        item = value[field.name]
        if field.type == "string":
            if not isinstance(item, str):
                raise AnswerError("wrong type", f"{field.name!r} should be a string, got {item!r}")
        else:
            if isinstance(item, bool) or not isinstance(item, (int, float)) or (
                    field.type == "integer" and float(item) != int(item)):
                raise AnswerError("wrong type", f"{field.name!r} should be an {field.type}, got {item!r}")
            if (field.min is not None and item < field.min) or (field.max is not None and item > field.max):
                raise AnswerError("out of range", f"{field.name!r} = {item} is outside [{field.min}, {field.max}]")
        out[field.name] = item
    return out
