import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.errors import InvalidParameterError
from seqlab.text.generation import StopOnStrings, first_stop, generate, stop_holdback
from seqlab.text.sampling import (
    EntropyProbe,
    MinP,
    NoRepeatNGram,
    NoTokenLeftError,
    RepetitionPenalty,
    SuppressTokens,
    Temperature,
    TopK,
    TopP,
    apply_processors,
    build_processors,
    sample_next,
)

LOG = lambda *p: torch.log(torch.tensor([p]))  # logits of a probability vector
INF = float("inf")


def ids(*rows):
    return torch.tensor(rows, dtype=torch.long)


def no_history(scores):
    return torch.zeros((scores.size(0), 0), dtype=torch.long)


def kept(logits):
    return torch.isfinite(logits)[0].tolist()


def test_temperature_hand_worked():
    logits = torch.tensor([[1.0, 2.0]])
    out = Temperature(0.5)(no_history(logits), logits)
    assert out.tolist() == [[-2.0, 0.0]]  # (1, 2) / 0.5 = (2, 4), shifted so the largest is 0
    assert torch.allclose(out.softmax(-1), torch.tensor([[2.0, 4.0]]).softmax(-1))
    assert logits.tolist() == [[1.0, 2.0]]  # the caller's tensor is untouched


@pytest.mark.parametrize("k,expected", [(1, [False, True, False, False]), (2, [False, True, True, True]),
                                        (3, [False, True, True, True]), (4, [True, True, True, True]),
                                        (10, [True, True, True, True])])
def test_top_k_keeps_ties_with_kth(k, expected):
    # values 1, 3, 2, 2: the 2nd largest is 2, tied: both 2s stay
    assert kept(apply_processors(torch.tensor([[1.0, 3.0, 2.0, 2.0]]), [TopK(k)])) == expected


@pytest.mark.parametrize("p,expected", [
    (0.0, [True, False, False]),    # at least min_tokens_to_keep = 1
    (0.4, [True, False, False]),    # 0.5 alone reaches 0.4
    (0.6, [True, True, False]),     # 0.5 < 0.6: the token that crosses (0.3) is kept
    (0.9, [True, True, True]),
    (1.0, [True, True, True]),      # filters nothing
])
def test_top_p_hand_worked(p, expected):
    assert kept(apply_processors(LOG(0.5, 0.3, 0.2), [TopP(p)])) == expected


def test_top_p_min_tokens_to_keep():
    assert kept(apply_processors(LOG(0.7, 0.2, 0.1), [TopP(0.1, min_tokens_to_keep=2)])) == [True, True, False]


def test_top_p_one_is_identity_even_with_underflow():
    logits = torch.tensor([[0.0, -200.0, -300.0]])
    assert torch.equal(TopP(1.0)(no_history(logits), logits), logits)


@pytest.mark.parametrize("min_p,expected", [(0.4, [True, True, False]), (0.1, [True, True, True]),
                                            (1.0, [True, False, False])])
def test_min_p_hand_worked(min_p, expected):
    # max prob 0.6: min_p 0.4 -> threshold 0.24 keeps 0.6 and 0.3, drops 0.1
    assert kept(apply_processors(LOG(0.6, 0.3, 0.1), [MinP(min_p)])) == expected


def test_repetition_penalty_hand_worked():
    # tokens 0 and 1 were seen (1 twice, penalised once): 2.0 / 2 = 1.0, -1.0 * 2 = -2.0; token 2 is untouched
    scores = torch.tensor([[2.0, -1.0, 3.0]])
    out = RepetitionPenalty(2.0)(ids([0, 1, 1]), scores)
    assert out.tolist() == [[1.0, -2.0, 3.0]]
    assert scores.tolist() == [[2.0, -1.0, 3.0]]
    # below 1 it rewards: the seen tokens move toward more likely
    assert RepetitionPenalty(0.5)(ids([0, 1, 1]), scores).tolist() == [[4.0, -0.5, 3.0]]


def test_no_repeat_ngram_hand_worked():
    # history 0 1 2 0: the bigram starting with the last token (0) was "0 1", so 1 is banned
    scores = torch.zeros(1, 4)
    assert kept(NoRepeatNGram(2)(ids([0, 1, 2, 0]), scores)) == [True, False, True, True]
    # trigrams: "2 0" never occurred before, nothing is banned; size 1 bans every token seen
    assert kept(NoRepeatNGram(3)(ids([0, 1, 2, 0]), scores)) == [True, True, True, True]
    assert kept(NoRepeatNGram(1)(ids([0, 2, 0]), scores)) == [False, True, False, True]
    assert scores.tolist() == [[0.0] * 4]


# Held cases recorded once from Hugging Face transformers 5.24.0 (RepetitionPenaltyLogitsProcessor,
# NoRepeatNGramLogitsProcessor), called as processor(input_ids, scores) on the inputs below; transformers is not
# a dependency: the outputs are stored here as literals.
HF_REPETITION = [
    (1.2, [[2, 1, 2, 5], [3, 0, 1, 0]], [[-4.0, -2.5, 0.0, -3.5, -1.0, 0.75], [1.0, -2.75, 1.75, -3.0, 3.0, 2.75]],
     [[-4.0, -3.0, 0.0, -3.5, -1.0, 0.625], [0.8333333134651184, -3.3000001907348633, 1.75, -3.6000001430511475, 3.0,
                                              2.75]]),
    (0.5, [[5, 2, 3, 5], [1, 4, 5, 3]], [[1.0, -3.0, 0.0, 1.25, 0.25, 2.5], [2.5, -1.25, 2.5, -0.5, -2.0, 3.25]],
     [[1.0, -3.0, 0.0, 2.5, 0.25, 5.0], [2.5, -0.625, 2.5, -0.25, -1.0, 6.5]]),
    (2.0, [[5, 4, 0, 1], [4, 5, 4, 5]], [[-3.5, 2.75, 0.0, 3.75, -0.5, -0.75], [-0.75, -3.75, -4.0, -3.25, 1.75, -2.5]],
     [[-7.0, 1.375, 0.0, 3.75, -1.0, -1.5], [-0.75, -3.75, -4.0, -3.25, 0.875, -5.0]]),
    (1.0, [[2, 3, 5, 5], [3, 5, 3, 3]], [[0.5, 2.75, 0.0, 2.25, -3.25, -1.25], [-0.5, -1.75, 0.5, 1.0, -3.25, -3.75]],
     [[0.5, 2.75, 0.0, 2.25, -3.25, -1.25], [-0.5, -1.75, 0.5, 1.0, -3.25, -3.75]]),
    (7.5, [[5, 0, 3, 1], [0, 1, 5, 5]], [[2.25, 1.75, 0.0, -2.75, -1.0, 3.0], [1.5, 0.5, -0.25, 1.25, 0.75, -3.25]],
     [[0.30000001192092896, 0.23333333432674408, 0.0, -20.625, -1.0, 0.4000000059604645],
      [0.20000000298023224, 0.06666667014360428, -0.25, 1.25, 0.75, -24.375]]),
    (1.3, [[1, 2, 2]], [[2.0, -INF, -1.0, 0.5]], [[2.0, -INF, -1.2999999523162842, 0.5]]),
]
# (ngram_size, input_ids, the ids HF set to -inf in each row)
HF_NO_REPEAT = [
    (1, [[2, 0, 2, 2, 2], [0, 1, 2, 2, 0], [2, 2, 2, 0, 0]], [[0, 2], [0, 1, 2], [0, 2]]),
    (2, [[0, 1, 1, 2, 0, 2, 0, 1, 0], [0, 2, 0, 0, 2, 2, 1, 2, 2], [0, 0, 2, 2, 0, 0, 1, 2, 1]], [[1, 2], [0, 1, 2], [2]]),
    (3, [[1, 2, 2, 2, 0, 1, 0, 0, 0, 2, 0, 1], [2, 2, 0, 2, 2, 1, 1, 1, 1, 2, 0, 1], [0, 1, 0, 2, 1, 2, 1, 2, 2, 0, 0, 0]],
     [[0], [], [0]]),
    (4, [[2, 1, 1, 2, 2, 1, 2, 2, 1, 2, 0, 0, 2, 2], [1, 2, 2, 1, 0, 2, 0, 2, 0, 0, 2, 1, 1, 2],
         [1, 2, 0, 1, 1, 1, 2, 2, 2, 2, 1, 2, 1, 2]], [[], [], [1]]),
    (2, [[2], [2], [0]], [[], [], []]),
    (3, [[2, 0], [0, 0], [0, 2]], [[], [], []]),
    (3, [[1, 2, 0], [2, 1, 2], [0, 0, 0]], [[], [], [0]]),
]


@pytest.mark.parametrize("penalty,history,scores,expected", HF_REPETITION)
def test_repetition_penalty_matches_hugging_face(penalty, history, scores, expected):
    out = RepetitionPenalty(penalty)(torch.tensor(history), torch.tensor(scores))
    torch.testing.assert_close(out, torch.tensor(expected))


@pytest.mark.parametrize("n,history,banned", HF_NO_REPEAT)
def test_no_repeat_ngram_matches_hugging_face(n, history, banned):
    scores = torch.randn(len(history), 5, generator=torch.Generator().manual_seed(n))
    out = NoRepeatNGram(n)(torch.tensor(history), scores)
    assert [torch.isinf(row).nonzero().flatten().tolist() for row in out] == banned
    allowed = torch.isfinite(out)
    assert torch.equal(out[allowed], scores[allowed])  # the rest is left as it was


def test_processors_do_not_edit_the_callers_tensor():
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.5]])
    history = ids([1, 3, 1])
    before, history_before = logits.clone(), history.clone()
    apply_processors(logits, [RepetitionPenalty(1.5), NoRepeatNGram(2), Temperature(0.7), TopK(2), TopP(0.5),
                              MinP(0.2), SuppressTokens([0])], history)
    assert torch.equal(logits, before) and torch.equal(history, history_before)


def test_order_history_processors_then_temperature_first():
    # a high temperature flattens before top-p looks at the mass, so more tokens survive
    logits = LOG(0.7, 0.2, 0.1)
    cold = apply_processors(logits, build_processors(temperature=1.0, top_p=0.75))
    hot = apply_processors(logits, build_processors(temperature=5.0, top_p=0.75))
    assert sum(kept(cold)) < sum(kept(hot))
    assert [type(p).__name__ for p in build_processors(0.5, 3, 0.9, 0.1)] == ["Temperature", "TopK", "TopP", "MinP"]
    full = build_processors(0.5, 3, 0.9, 0.1, repetition_penalty=1.2, no_repeat_ngram_size=3)
    assert [type(p).__name__ for p in full] == ["RepetitionPenalty", "NoRepeatNGram", "Temperature", "TopK", "TopP",
                                                "MinP"]
    assert build_processors(repetition_penalty=1.0, no_repeat_ngram_size=0) == []  # neutral settings add nothing


@pytest.mark.parametrize("kwargs", [dict(temperature=0), dict(temperature=-1), dict(temperature=float("nan")),
                                    dict(top_k=0), dict(top_k=2.5), dict(top_p=1.5), dict(top_p=-0.1),
                                    dict(min_p=2.0), dict(min_tokens_to_keep=0, top_k=3),
                                    dict(repetition_penalty=0.0), dict(repetition_penalty=-1.2),
                                    dict(repetition_penalty=float("inf")), dict(no_repeat_ngram_size=-1),
                                    dict(no_repeat_ngram_size=1.5)])
def test_invalid_arguments_rejected_at_construction(kwargs):
    with pytest.raises(InvalidParameterError):
        build_processors(**kwargs)


@pytest.mark.parametrize("history", [torch.tensor([[0.0, 1.0]]), torch.tensor([0, 1]), ids([0, 1], [1, 2]),
                                     ids([0, 3]), ids([-1, 0])])
def test_history_processors_reject_bad_input_ids(history):
    scores = torch.zeros(1, 3)
    for proc in (RepetitionPenalty(1.5), NoRepeatNGram(2)):
        with pytest.raises(InvalidParameterError):
            proc(history, scores)


def test_sampling_follows_the_filtered_distribution():
    g = torch.Generator().manual_seed(0)
    logits = LOG(0.5, 0.3, 0.2).repeat(20000, 1)
    draws = sample_next(logits, [TopK(2)], generator=g).flatten()
    freq = torch.bincount(draws, minlength=3).float() / len(draws)
    assert freq[2] == 0 and abs(freq[0].item() - 0.625) < 0.015
    assert sample_next(logits[:1], greedy=True).item() == 0


def test_greedy_applies_the_history_processors():
    # the arg-max token 0 was already generated: a strong penalty or the no-repeat rule moves greedy to token 1
    logits, history = LOG(0.5, 0.3, 0.2), ids([0])
    assert sample_next(logits, greedy=True, input_ids=history).item() == 0
    assert sample_next(logits, [RepetitionPenalty(3.0)], greedy=True, input_ids=history).item() == 1
    assert sample_next(logits, [NoRepeatNGram(1)], greedy=True, input_ids=history).item() == 1


def test_no_token_left_is_an_error_not_a_token():
    logits = torch.zeros(2, 3)
    with pytest.raises(NoTokenLeftError, match="row 1"):
        sample_next(logits, [NoRepeatNGram(1)], input_ids=ids([0, 1, 0], [0, 1, 2]))  # row 1 has seen all 3
    with pytest.raises(NoTokenLeftError):
        sample_next(logits, [SuppressTokens([0, 1, 2])], greedy=True)


def test_temperature_limits():
    logits = LOG(0.5, 0.3, 0.2)
    sharp = apply_processors(logits, [Temperature(0.05)]).softmax(-1)
    flat = apply_processors(logits, [Temperature(100.0)]).softmax(-1)
    assert sharp[0, 0] > 0.99 and math.isclose(flat[0, 0].item(), 1 / 3, abs_tol=0.01)


def test_suppress_tokens():
    out = apply_processors(torch.tensor([[5.0, 1.0, 9.0]]), [SuppressTokens([0, 2])])
    assert kept(out) == [False, True, False]
    with pytest.raises(InvalidParameterError):
        SuppressTokens([])
    with pytest.raises(InvalidParameterError):
        apply_processors(torch.zeros(1, 3), [SuppressTokens([3])])


# --- properties: any valid arguments give a distribution, any invalid one a seqlab error -----------------------

def _valid_processor():
    return st.one_of(
        st.floats(1e-3, 100.0).map(RepetitionPenalty), st.integers(1, 6).map(NoRepeatNGram),
        st.floats(1e-3, 100.0).map(Temperature), st.builds(TopK, st.integers(1, 40), st.integers(1, 4)),
        st.builds(TopP, st.floats(0.0, 1.0), st.integers(1, 4)), st.builds(MinP, st.floats(0.0, 1.0), st.integers(1, 4)),
    )


@settings(max_examples=150, deadline=None, derandomize=True)
@given(procs=st.lists(_valid_processor(), min_size=1, max_size=4), vocab=st.integers(2, 12), batch=st.integers(1, 3),
       seed=st.integers(0, 2 ** 31), scale=st.floats(0.01, 50.0), data=st.data())
def test_valid_arguments_give_a_valid_distribution(procs, vocab, batch, seed, scale, data):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(batch, vocab, generator=g) * scale
    # fewer history tokens than the vocabulary: n-gram bans (one per earlier window) cannot cover every token
    length = data.draw(st.integers(0, vocab - 1))
    history = torch.randint(0, vocab, (batch, length), generator=g)
    before = scores.clone()
    out = apply_processors(scores, procs, history)
    assert out.shape == scores.shape and torch.equal(scores, before)
    probs = out.softmax(-1)
    assert torch.isfinite(probs).all() and (probs >= 0).all()
    torch.testing.assert_close(probs.sum(-1), torch.ones(batch))
    nxt = sample_next(scores, procs, input_ids=history, generator=g)
    assert nxt.shape == (batch, 1) and torch.isfinite(out.gather(1, nxt)).all()


_NOT_POSITIVE = st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")), st.just(True),
                          st.just("2"), st.none())
_NOT_COUNT = st.one_of(st.integers(max_value=0), st.floats(0.5, 9.5).filter(lambda x: x != int(x)), st.just(True),
                       st.just("3"), st.none())
_NOT_FRACTION = st.one_of(st.floats(1.0, exclude_min=True), st.floats(max_value=-1e-300),
                          st.just(float("nan")), st.just(True), st.just("0.5"))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(case=st.one_of(
    st.tuples(st.just(RepetitionPenalty), _NOT_POSITIVE.map(lambda v: (v,))),
    st.tuples(st.just(Temperature), _NOT_POSITIVE.map(lambda v: (v,))),
    st.tuples(st.just(NoRepeatNGram), _NOT_COUNT.map(lambda v: (v,))),
    st.tuples(st.just(TopK), _NOT_COUNT.map(lambda v: (v,))),
    st.tuples(st.sampled_from([TopP, MinP]), _NOT_FRACTION.map(lambda v: (v,))),
    st.tuples(st.sampled_from([TopK, TopP, MinP]), _NOT_COUNT.filter(lambda v: v is not True).map(lambda v: (1, v))),
))
def test_invalid_arguments_raise_a_seqlab_error(case):
    cls, args = case
    with pytest.raises(InvalidParameterError):
        cls(*args)


# --- generation: the running ids reach the processors, and stop strings end it ----------------------------------

class Counter(torch.nn.Module):
    """A fake language model over V tokens: after token t it is sure the next is (t + 1) mod V."""

    def __init__(self, vocab: int = 6):
        super().__init__()
        self.vocab = vocab

    def forward(self, idx, cache=None):
        return 10.0 * torch.nn.functional.one_hot((idx + 1) % self.vocab, self.vocab).float(), None


LETTERS = "abcdef"
decode = lambda token_ids: "".join(LETTERS[i] for i in token_ids)


class Recorder(EntropyProbe):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __call__(self, input_ids, scores):
        self.seen.append(input_ids.clone())
        return super().__call__(input_ids, scores)


def test_stream_passes_the_running_ids():
    rec = Recorder()
    out = generate(Counter(), ids([0, 1]), 3, [rec], greedy=True, use_cache=False)
    assert out.tolist() == [[0, 1, 2, 3, 4]]
    assert [s.tolist() for s in rec.seen] == [[[0, 1]], [[0, 1, 2]], [[0, 1, 2, 3]]]


def test_no_repeat_ngram_in_generation_breaks_the_cycle():
    # the counter cycles through 6 tokens; banning repeated bigrams forces a different token once it would loop
    plain = generate(Counter(), ids([0]), 8, greedy=True, use_cache=False)[0].tolist()
    assert plain == [0, 1, 2, 3, 4, 5, 0, 1, 2]
    banned = generate(Counter(), ids([0]), 8, [NoRepeatNGram(2)], greedy=True, use_cache=False)[0].tolist()
    assert banned[:7] == [0, 1, 2, 3, 4, 5, 0] and banned[7] != 1
    pairs = list(zip(banned, banned[1:]))
    assert len(pairs) == len(set(pairs))


def test_stop_strings_end_generation():
    stop = StopOnStrings(["de"], decode)
    out = generate(Counter(), ids([0]), 20, greedy=True, use_cache=False, stopping=[stop])
    assert decode(out[0].tolist()) == "abcde"
    # two rows: the stream runs until both are done ("e" comes at once for the second, then at step 5 for the first)
    out = generate(Counter(), ids([0], [3]), 20, greedy=True, use_cache=False, stopping=[StopOnStrings("e", decode)])
    assert [decode(r) for r in out.tolist()] == ["abcde", "defab"]
    # a stop string already in the prompt does not count
    out = generate(Counter(), ids([3, 4]), 3, greedy=True, use_cache=False, stopping=[StopOnStrings("de", decode)])
    assert decode(out[0].tolist()) == "defab"


def test_stop_string_overhanging_the_last_token():
    # Hugging Face's StopStringCriteria rule: "stop" fires on "st" + "opera", not on "stop" + "at"
    vocab = ["st", "op", "opera", "at", "x"]
    dec = lambda token_ids: "".join(vocab[i] for i in token_ids)
    crit = StopOnStrings(["stop"], dec)
    assert crit(ids([4, 0, 2], [0, 1, 3], [4, 4, 0], [0, 1, 4])).tolist() == [True, False, False, False]


def test_stop_helpers():
    assert first_stop("ab\ncd\n", ["\n"], start=3) == 5  # the newline at 2 is in the prompt
    assert first_stop("ab\ncd\n", ["b\nc"], start=2) == 1  # begins in the prompt, ends after it
    assert first_stop("abcd", ["x"]) is None
    assert stop_holdback("xxst", ["stop", "s"]) == 2 and stop_holdback("xxsa", ["stop"]) == 0
    with pytest.raises(InvalidParameterError):
        StopOnStrings([""], decode)


def test_scores_that_overflow_are_one_clear_error_not_a_bad_draw():
    from seqlab.errors import InvalidParameterError
    from seqlab.text.sampling import RepetitionPenalty, sample_next

    scores = torch.tensor([[3.0, -2.0, 1.0]])
    with pytest.raises(InvalidParameterError, match="NaN or \\+inf"):
        sample_next(scores, [RepetitionPenalty(1e-320)], input_ids=torch.tensor([[0, 2]]),
                    generator=torch.Generator().manual_seed(0))
