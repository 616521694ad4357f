"""A two-player clemgame for referee's tests: the Describer says the target number; the Guesser answers
`GUESS: N`. Success when the guess is right, Lose after a wrong guess in each of two rounds, Aborted on an answer
that does not parse. The programmatic players behave as the instance says (right, wrong, late, garbled)."""

import re

from clemcore.backends import Model
from clemcore.clemgame import GameBenchmark, GameScorer, GameSpec, Player
from clemcore.clemgame.errors import ParseError
from clemcore.clemgame.master import DialogueGameMaster
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_LOSE, METRIC_SUCCESS

MAX_ROUNDS = 2


class Describer(Player):
    def __init__(self, model: Model, target: int):
        super().__init__(model)
        self.target = target

    def _custom_response(self, context):
        return f"The number is {self.target}."


class Guesser(Player):
    def __init__(self, model: Model, target: int, behaviour: str):
        super().__init__(model)
        self.target, self.behaviour, self.turn = target, behaviour, 0

    def _custom_response(self, context):
        self.turn += 1
        if self.behaviour == "garbled":
            return "I am not sure what to say."
        right = self.behaviour == "right" or (self.behaviour == "late" and self.turn == 2)
        return f"GUESS: {self.target if right else self.target + 1}"


class GuessMaster(DialogueGameMaster):
    def _on_setup(self, **instance):
        self.target = instance["target"]
        self.describer = Describer(self.player_models[0], self.target)
        self.guesser = Guesser(self.player_models[1], self.target, instance["behaviour"])
        self.add_player(self.describer, initial_context="Tell your partner the number.")
        self.add_player(self.guesser, initial_prompt="Answer with GUESS: N.")
        self.guesses = []

    def _parse_response(self, player, response):
        if player is self.guesser:
            found = re.fullmatch(r"GUESS: (\d+)", response.strip())
            if not found:
                raise ParseError(reason="no GUESS: N", response=response)
            return found.group(1)
        return response

    def _on_parse_error(self, error):
        self.state.abort()

    def _advance_game(self, player, parsed):
        if player is self.describer:
            self.set_context_for(self.guesser, parsed)
            return
        self.guesses.append(int(parsed))
        if int(parsed) == self.target:
            self.state.succeed()
        elif self.current_round + 1 >= MAX_ROUNDS:
            self.state.failed()
        else:
            self.set_context_for(self.describer, "Wrong. Say it again.")

    def _on_after_game(self):
        outcome = self.state.outcome.value
        self.log_key(METRIC_ABORTED, int(outcome == "aborted"))
        self.log_key(METRIC_LOSE, int(outcome == "failure"))
        self.log_key(METRIC_SUCCESS, int(outcome == "success"))
        self.log_key("guesses", self.guesses)


class GuessScorer(GameScorer):
    def compute_round_score(self, round_idx, round_events):
        self.log_round_score(round_idx, "Guessed", int(any(e["action"]["type"] == "get message" for e in round_events)))

    def compute_episode_scores(self, interactions):
        if interactions[METRIC_ABORTED]:
            self.log_episode_score(BENCH_SCORE, float("nan"))
            return
        rounds = max(len(interactions["guesses"]), 1)
        self.log_episode_score(BENCH_SCORE, 100.0 * interactions[METRIC_SUCCESS] / rounds)


class GuessBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment, player_models):
        return GuessMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment, game_instance):
        return GuessScorer(self.game_name, experiment, game_instance)
