"""Play Inspect AI for real, offline: one arithmetic task (6 samples, 2 epochs) evaluated by two mock models
(inspect's `mockllm` provider; every output carries a `usage`, so no tokenizer is downloaded). `strong` answers
5 of 6 questions right, `weak` 2 of 6. Writes the `.eval` logs (one per model, zstd-compressed by inspect
0.3.285) into OUT/eval, each converted to `.json` into OUT/json, and what each model scored per sample epoch
(inspect's own reading of its logs) into OUT/expected.json.

Run in the inspect runner venv: .cache/runners/inspect/bin/python tests/runner_play/inspect_eval.py OUT
"""

import json

import sys
from pathlib import Path

from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

QUESTIONS = [(3, 4), (10, 5), (7, 8), (12, 30), (9, 9), (21, 2)]
RIGHT = {"strong": {0, 1, 2, 3, 4}, "weak": {0, 3}}


def answerer(name: str):
    """A mockllm output function: the right sum for the questions `name` knows, else a wrong one."""

    def output(messages, tools, tool_choice, config) -> ModelOutput:
        text = messages[-1].text
        k = next(i for i, (a, b) in enumerate(QUESTIONS) if f"{a} + {b}" in text)
        a, b = QUESTIONS[k]
        answer = a + b if k in RIGHT[name] else a + b + 1
        out = ModelOutput.from_content(model=name, content=str(answer))
        out.usage = ModelUsage(input_tokens=12, output_tokens=2, total_tokens=14)
        return out

    return output


def task() -> Task:
    return Task(name="addition",
                dataset=[Sample(id=f"q{k}", input=f"What is {a} + {b}? Answer with the number only.",
                                target=str(a + b)) for k, (a, b) in enumerate(QUESTIONS)],
                solver=generate(), scorer=match(numeric=True), epochs=2)


def main(out: str) -> None:
    models = [get_model(f"mockllm/{n}", custom_outputs=answerer(n)) for n in RIGHT]
    logs = inspect_eval(task(), model=models, log_dir=str(Path(out) / "eval"), log_format="eval", display="none")
    (Path(out) / "json").mkdir(parents=True)
    expected = []
    for log in logs:
        assert log.status == "success", log.error
        read = read_eval_log(log.location)
        write_eval_log(read, str(Path(out) / "json" / Path(log.location).with_suffix(".json").name), format="json")
        expected += [{"model": read.eval.model, "sample": str(s.id), "epoch": s.epoch,
                      "value": s.scores["match"].value} for s in read.samples]
    (Path(out) / "expected.json").write_text(json.dumps(expected))


if __name__ == "__main__":
    main(sys.argv[1])
