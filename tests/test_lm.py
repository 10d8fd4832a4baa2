import dataclasses
import json

import pytest
import torch

from seqlab.nn import GPT, GPTConfig, LSTMConfig, LSTMLanguageModel
from seqlab.text import CharTokenizer
from seqlab.text.checkpoint import CHECKPOINT_FILE, CheckpointError, load_checkpoint, save_checkpoint
from seqlab.text.corpus import CorpusError, load_tinyshakespeare, read_text_file, split_train_val
from seqlab.text.generation import generate
from seqlab.text.sampling import build_processors
from seqlab.errors import InvalidParameterError
from seqlab.text.schedule import lr_at
from seqlab.text.training import TrainConfig, TrainingDiverged, make_optimizer, train_lm

TEXT = ("To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer "
        "the slings and arrows of outrageous fortune. ") * 20


def tiny_gpt(vocab, block=16):
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=vocab, block_size=block, num_layers=1, num_heads=2, d_model=16))


@pytest.fixture
def data():
    tok = CharTokenizer().train(TEXT)
    ids = torch.tensor(tok.encode(TEXT))
    return tok, *split_train_val(ids)


def test_packaged_corpus_is_the_published_one():
    text = load_tinyshakespeare()
    assert len(text) == 1115394 and text.startswith("First Citizen:")


@pytest.mark.parametrize("content,msg", [(b"", "empty"), (b" \t\n\r\n ", r"only whitespace \(6 bytes\)"),
                                         (b"ab\x00\x01cd", "binary"), (b"\xff\xfeabc", "UTF-8")])
def test_bad_text_files(tmp_path, content, msg):
    p = tmp_path / "t.txt"
    p.write_bytes(content)
    with pytest.raises(CorpusError, match=msg):
        read_text_file(p)


def test_wrong_file_fails_the_checksum(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("not shakespeare")
    with pytest.raises(CorpusError, match="sha256"):
        load_tinyshakespeare(p)


def test_download_offline_says_so(tmp_path):
    from seqlab.text.corpus import download_tinyshakespeare

    with pytest.raises(CorpusError, match="offline"):
        download_tinyshakespeare(tmp_path, url=(tmp_path / "missing.txt").as_uri())


def test_download_checks_sha(tmp_path):
    from seqlab.text.corpus import download_tinyshakespeare

    src = tmp_path / "copy.txt"
    src.write_text(load_tinyshakespeare(), encoding="utf-8")
    path = download_tinyshakespeare(tmp_path / "cache", url=src.as_uri())
    assert path.read_text(encoding="utf-8") == src.read_text(encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text("x")
    with pytest.raises(CorpusError, match="sha256"):
        download_tinyshakespeare(tmp_path / "cache2", url=bad.as_uri())


def test_lr_schedule_shape():
    c = TrainConfig(max_iters=1000, warmup_iters=100, learning_rate=1e-3, min_lr=1e-4)
    assert lr_at(0, c) < lr_at(50, c) < lr_at(99, c) <= 1e-3
    assert lr_at(100, c) == pytest.approx(1e-3)
    assert lr_at(550, c) == pytest.approx(5.5e-4, rel=1e-2)
    assert lr_at(1000, c) == pytest.approx(1e-4) and lr_at(5000, c) == pytest.approx(1e-4)


def test_weight_decay_groups():
    m = tiny_gpt(10)
    opt = make_optimizer(m, TrainConfig())
    decay, no_decay = opt.param_groups
    assert all(p.dim() >= 2 for p in decay["params"]) and all(p.dim() < 2 for p in no_decay["params"])
    assert no_decay["weight_decay"] == 0 and decay["weight_decay"] == 0.1
    assert sum(p.numel() for g in opt.param_groups for p in g["params"]) == sum(p.numel() for p in m.parameters())


@pytest.mark.parametrize("optimizer", ["adamw", "muon"])
@pytest.mark.parametrize("kind", ["gpt", "lstm"])
def test_training_lowers_loss_and_is_deterministic(data, kind, optimizer):
    tok, tr, va = data

    def make():
        torch.manual_seed(0)
        if kind == "gpt":
            return tiny_gpt(tok.vocab_size)
        return LSTMLanguageModel(LSTMConfig(vocab_size=tok.vocab_size, d_model=16, hidden_size=32, num_layers=1))

    c = TrainConfig(max_iters=60, batch_size=8, block_size=16, eval_interval=30, eval_iters=4, warmup_iters=5,
                    learning_rate=3e-3, optimizer=optimizer)
    a = train_lm(make(), tr, va, c)
    b = train_lm(make(), tr, va, c)
    assert [r["val_loss"] for r in a.history] == [r["val_loss"] for r in b.history]
    assert a.history[-1]["val_loss"] < a.history[0]["val_loss"] < 4.0
    assert a.history[-1]["val_bits_per_token"] == pytest.approx(a.history[-1]["val_loss"] / 0.6931471805599453)
    assert "val_bits_per_char" not in a.history[-1]  # without val_chars, no per-character figure is made up


@pytest.mark.parametrize("optimizer", ["adamw", "muon"])
def test_resume_gives_the_same_losses_as_an_uninterrupted_run(data, tmp_path, optimizer):
    tok, tr, va = data
    c = TrainConfig(max_iters=40, batch_size=4, block_size=16, eval_interval=10, eval_iters=2, warmup_iters=5,
                    optimizer=optimizer)
    full = train_lm(tiny_gpt(tok.vocab_size), tr, va, c)
    # "killed" after 20 iterations: a run with a 20-iteration budget leaves its checkpoint
    short = TrainConfig(**{**c.__dict__, "max_iters": 20})
    train_lm(tiny_gpt(tok.vocab_size), tr, va, short, checkpoint_dir=tmp_path, tokenizer=tok)
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["iteration"] == 20
    resumed = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    assert resumed.resumed_from == 20
    got = [round(r["val_loss"], 5) for r in resumed.history]
    want = [round(r["val_loss"], 5) for r in full.history]
    assert got == want


def test_nan_loss_stops_and_keeps_the_good_checkpoint(data, tmp_path):
    tok, tr, va = data
    c = TrainConfig(max_iters=10, batch_size=4, block_size=16, eval_interval=5, eval_iters=2, warmup_iters=1)
    m = tiny_gpt(tok.vocab_size)
    train_lm(m, tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    good = (tmp_path / CHECKPOINT_FILE).read_bytes()
    with torch.no_grad():
        m.tok_emb.weight.fill_(float("nan"))
    c2 = TrainConfig(**{**c.__dict__, "max_iters": 20})
    with pytest.raises(TrainingDiverged, match="iteration 0; training stopped.*last good checkpoint"):
        train_lm(m, tr, va, c2, checkpoint_dir=tmp_path, tokenizer=tok, resume=False)
    assert (tmp_path / CHECKPOINT_FILE).read_bytes() == good


@pytest.mark.parametrize("kind", ["gpt", "lstm"])
def test_checkpoint_round_trip(tmp_path, kind):
    tok = CharTokenizer().train(TEXT)
    torch.manual_seed(1)
    m = tiny_gpt(tok.vocab_size) if kind == "gpt" else LSTMLanguageModel(LSTMConfig(vocab_size=tok.vocab_size))
    save_checkpoint(tmp_path, m, tokenizer=tok, iteration=7)
    m2, tok2, state = load_checkpoint(tmp_path)
    assert state["iteration"] == 7 and tok2.encode("to be") == tok.encode("to be")
    x = torch.randint(0, tok.vocab_size, (2, 8))
    with torch.no_grad():
        torch.testing.assert_close(m2(x)[0], m(x)[0])
    if kind == "gpt":
        assert m2.lm_head.weight is m2.tok_emb.weight


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage"])
def test_corrupt_checkpoint_is_a_clear_error(tmp_path, damage):
    tok = CharTokenizer().train(TEXT)
    save_checkpoint(tmp_path, tiny_gpt(tok.vocab_size), tokenizer=tok)
    f = tmp_path / CHECKPOINT_FILE
    if damage == "missing":
        f.unlink()
    elif damage == "truncated":
        f.write_bytes(f.read_bytes()[:100])
    else:
        f.write_bytes(b"\x00" * 64)
    with pytest.raises(CheckpointError):
        load_checkpoint(tmp_path)


def test_corpus_shorter_than_context(data):
    tok, tr, va = data
    with pytest.raises(ValueError, match="fewer than the context"):
        train_lm(tiny_gpt(tok.vocab_size, block=16), tr[:10], va, TrainConfig(block_size=16))


@pytest.mark.parametrize("kind", ["gpt", "gpt-rotary", "lstm"])
@pytest.mark.parametrize("greedy", [True, False])
def test_cached_generation_equals_uncached_token_for_token(kind, greedy):
    torch.manual_seed(2)
    if kind.startswith("gpt"):
        positional = "rotary" if kind == "gpt-rotary" else "learned"
        m = GPT(GPTConfig(vocab_size=30, block_size=24, num_layers=2, num_heads=2, d_model=32, positional=positional))
    else:
        m = LSTMLanguageModel(LSTMConfig(vocab_size=30, d_model=16, hidden_size=32))
    idx = torch.randint(0, 30, (3, 6))
    procs = build_processors(temperature=0.9, top_k=12, top_p=0.95)
    # 40 new tokens run past the GPT's 24-token window, exercising the re-encode path too
    a = generate(m, idx, 40, procs, greedy=greedy, generator=torch.Generator().manual_seed(3), use_cache=True)
    b = generate(m, idx, 40, procs, greedy=greedy, generator=torch.Generator().manual_seed(3), use_cache=False)
    assert a.shape == (3, 46) and torch.equal(a, b)


def test_with_max_iters_moves_a_decay_horizon_that_ended_with_the_run():

    base = TrainConfig(max_iters=100, warmup_iters=10, learning_rate=1e-3, min_lr=1e-4)
    longer = base.with_max_iters(200, seed=7)
    assert (longer.max_iters, longer.lr_decay_iters, longer.seed) == (200, 200, 7)
    assert lr_at(150, longer) > base.min_lr  # still decaying half-way
    # the pitfall it replaces: a plain replace keeps the old horizon and sits at min_lr after step 100
    assert lr_at(150, dataclasses.replace(base, max_iters=200)) == base.min_lr
    own = TrainConfig(max_iters=100, lr_decay_iters=80).with_max_iters(200)
    assert own.lr_decay_iters == 80  # a horizon set on its own is kept


def _rates(opt) -> dict[int, tuple[float, float]]:
    """id(parameter) -> (peak rate, weight decay) of the group that holds it."""
    return {id(p): (g["base_lr"], g["weight_decay"]) for g in opt.param_groups for p in g["params"]}


@pytest.mark.parametrize("optimizer", ["adamw", "muon"])
def test_an_untied_head_and_the_embedding_take_their_own_rates(optimizer):
    torch.manual_seed(0)
    m = GPT(GPTConfig(vocab_size=10, block_size=8, num_layers=1, num_heads=2, d_model=16, tie_weights=False))
    c = TrainConfig(optimizer=optimizer, learning_rate=1e-3, min_lr=1e-4, embedding_lr=0.05, head_lr=0.004,
                    weight_decay=0.1)
    rates = _rates(make_optimizer(m, c))
    assert rates[id(m.tok_emb.weight)] == (0.05, 0.1) and rates[id(m.lm_head.weight)] == (0.004, 0.1)
    assert rates[id(m.ln_f.weight)] == (1e-3, 0.0)  # the rest keep learning_rate; vectors are never decayed
    assert rates[id(m.blocks[0].ff.linear1.weight)] == ((c.muon_lr, 0.0) if optimizer == "muon" else (1e-3, 0.1))
    assert len(rates) == len(list(m.parameters()))  # every parameter in exactly one group


def test_a_tied_head_learns_at_the_embedding_rate_and_the_lstm_head_at_the_head_rate():
    tied = tiny_gpt(10)
    rates = _rates(make_optimizer(tied, TrainConfig(optimizer="muon", embedding_lr=0.05, head_lr=0.004)))
    assert tied.lm_head.weight is tied.tok_emb.weight and rates[id(tied.tok_emb.weight)][0] == 0.05
    torch.manual_seed(0)
    lstm = LSTMLanguageModel(LSTMConfig(vocab_size=10, d_model=8, hidden_size=16, num_layers=1))
    rates = _rates(make_optimizer(lstm, TrainConfig(optimizer="muon", head_lr=0.004)))
    assert rates[id(lstm.head.weight)] == (0.004, 0.1) and rates[id(lstm.head.bias)] == (0.004, 0.0)
    assert rates[id(lstm.embedding.weight)][0] == TrainConfig().learning_rate  # unset: learning_rate


def test_unset_part_rates_keep_the_optimizer_and_the_recorded_recipe_as_they_were():
    from seqlab.experiments.lm import CHAPTER_TRAIN
    from seqlab.text.training import recipe

    opt = make_optimizer(tiny_gpt(10), CHAPTER_TRAIN)
    assert [(g["muon"], g["weight_decay"], g["base_lr"]) for g in opt.param_groups] == [
        (True, 0.0, 0.02), (False, 0.1, 5e-3), (False, 0.0, 5e-3)]
    assert "embedding_lr" not in recipe(CHAPTER_TRAIN) and "head_lr" not in recipe(CHAPTER_TRAIN)
    assert recipe(TrainConfig(head_lr=0.01))["head_lr"] == 0.01


@pytest.mark.parametrize("bad", [0, -0.1, float("nan"), float("inf"), "0.1"])
@pytest.mark.parametrize("name", ["embedding_lr", "head_lr"])
def test_bad_part_rates_are_refused(name, bad):
    with pytest.raises(ValueError, match=name):
        TrainConfig(**{name: bad})


def test_a_resume_with_another_embedding_rate_is_refused(data, tmp_path):
    from seqlab.text.checkpoint import CheckpointMismatchError

    tok, tr, va = data
    c = TrainConfig(max_iters=4, batch_size=4, block_size=16, eval_interval=2, eval_iters=1, warmup_iters=1,
                    optimizer="muon", embedding_lr=0.05)
    train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    with pytest.raises(CheckpointMismatchError, match="embedding_lr 0.05"):
        train_lm(tiny_gpt(tok.vocab_size), tr, va, c.with_max_iters(8, embedding_lr=0.02), checkpoint_dir=tmp_path,
                 tokenizer=tok)


def test_qk_norm_checkpoints_round_trip_and_records_without_it_still_match(data, tmp_path):
    """A QK-norm GPT saves and loads as one; a record of a GPT without it omits the key, as records made before
    the option existed do, and a resume across the two is refused by name."""
    from dataclasses import asdict

    from seqlab.nn import config_record
    from seqlab.text.checkpoint import CheckpointMismatchError

    tok, tr, va = data
    plain = GPTConfig(vocab_size=tok.vocab_size, block_size=16, num_layers=1, num_heads=2, d_model=16)
    assert config_record(plain) == {k: v for k, v in asdict(plain).items() if k != "qk_norm"}
    assert "qk_norm" not in repr(plain) and repr(plain).startswith("GPTConfig(vocab_size=")
    assert repr(GPTConfig(**{**asdict(plain), "qk_norm": True})).endswith("tie_weights=True, qk_norm=True)")
    torch.manual_seed(0)
    normed = GPT(GPTConfig(**{**asdict(plain), "qk_norm": True}))
    save_checkpoint(tmp_path / "qk", normed, tokenizer=tok, iteration=3)
    loaded, _, state = load_checkpoint(tmp_path / "qk")
    assert state["model_config"]["qk_norm"] is True and loaded.config.qk_norm
    x = torch.randint(0, tok.vocab_size, (2, 8))
    with torch.no_grad():
        torch.testing.assert_close(loaded(x)[0], normed(x)[0])
    c = TrainConfig(max_iters=2, batch_size=4, block_size=16, eval_interval=2, eval_iters=1, warmup_iters=1)
    train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path / "plain", tokenizer=tok)
    assert "qk_norm" not in load_checkpoint(tmp_path / "plain")[2]["model_config"]
    with pytest.raises(CheckpointMismatchError, match="qk_norm False \\(checkpoint\\) vs True \\(now\\)"):
        train_lm(GPT(GPTConfig(**{**asdict(plain), "qk_norm": True})), tr, va, c.with_max_iters(4),
                 checkpoint_dir=tmp_path / "plain", tokenizer=tok)


def test_muon_momentum_warms_up_from_085_and_a_resume_keeps_the_setting(data, tmp_path):
    from seqlab.text.checkpoint import CheckpointMismatchError
    from seqlab.text.schedule import muon_momentum_at
    from seqlab.text.training import recipe

    c = TrainConfig(max_iters=4, batch_size=4, block_size=16, eval_interval=2, eval_iters=1, warmup_iters=1,
                    optimizer="muon", muon_momentum_warmup=10)
    assert [muon_momentum_at(it, c) for it in (0, 5, 10, 400)] == pytest.approx([0.85, 0.90, 0.95, 0.95])
    assert muon_momentum_at(5, TrainConfig(optimizer="muon")) == 0.95  # unset: constant
    assert "muon_momentum_warmup" not in recipe(TrainConfig()) and recipe(c)["muon_momentum_warmup"] == 10
    for bad in (0, -3, 2.5, True, "10"):
        with pytest.raises(ValueError, match="muon_momentum_warmup"):
            TrainConfig(muon_momentum_warmup=bad)
    tok, tr, va = data
    train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    opt = load_checkpoint(tmp_path, optimizer_factory=lambda m: make_optimizer(m, c))[2]["optimizer"]
    muon = [g for g in opt.param_groups if g.get("muon")]
    assert muon and all(g["momentum"] == pytest.approx(0.85 + 0.1 * 3 / 10) for g in muon)  # the last step is it = 3
    with pytest.raises(CheckpointMismatchError, match="muon_momentum_warmup 10"):
        train_lm(tiny_gpt(tok.vocab_size), tr, va, c.with_max_iters(8, muon_momentum_warmup=20), checkpoint_dir=tmp_path,
                 tokenizer=tok)


def test_a_schedule_over_seconds_follows_the_time_and_ends_at_the_bottom(data, tmp_path):
    from seqlab.errors import InvalidParameterError
    from seqlab.text.checkpoint import CheckpointMismatchError
    from seqlab.text.training import recipe

    c = TrainConfig(max_iters=10**6, batch_size=4, block_size=16, eval_interval=10, eval_iters=1, warmup_iters=4,
                    learning_rate=1e-2, min_lr=1e-3, schedule_seconds=2.0)
    # hand-worked: the step-counted warm-up, and the cosine over the seconds (at half of them, half-way down)
    assert lr_at(0, c, 0.0) == pytest.approx(1e-2 / 5)
    assert lr_at(3, c, 0.01) == pytest.approx(1e-2 * 4 / 5)
    assert lr_at(50, c, 0.0) == pytest.approx(1e-2)
    assert lr_at(50, c, 1.0) == pytest.approx((1e-2 + 1e-3) / 2)
    assert lr_at(50, c, 2.0) == lr_at(50, c, 9.0) == pytest.approx(1e-3)
    with pytest.raises(InvalidParameterError, match="training seconds"):
        lr_at(50, c)
    assert "schedule_seconds" not in recipe(TrainConfig()) and recipe(c)["schedule_seconds"] == 2.0
    for bad in (0, -1.0, float("nan"), float("inf"), True, "2"):
        with pytest.raises(InvalidParameterError, match="schedule_seconds"):
            TrainConfig(schedule_seconds=bad)
    tok, tr, va = data
    res = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    rows = res.history
    # the time, not the step cap, ended the run, inside its seconds up to one slow step, near min_lr
    assert res.iterations < c.max_iters and rows[-1]["iter"] == res.iterations
    step = rows[-1]["seconds"] / rows[-1]["iter"]
    assert rows[-1]["seconds"] <= c.schedule_seconds + max(3 * step, 0.5)  # room for one step slowed by load
    assert rows[-1]["lr"] <= c.min_lr + 0.1 * (c.learning_rate - c.min_lr)
    assert all(a["lr"] >= b["lr"] for a, b in zip(rows[1:], rows[2:]))  # falling with the time after the warm-up
    assert res.reason == "schedule"
    # resumed with the same seconds, a finished run trains nothing and says how to extend it
    again = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    assert again.iterations == res.iterations and again.history == rows and again.reason == "nothing to train"
    assert any("a larger schedule_seconds (--schedule-seconds) extends it" in n for n in again.notes)
    # more seconds extend it: the cosine is planned again over 3 s, from where the run stands (the rate goes up)
    longer = train_lm(tiny_gpt(tok.vocab_size), tr, va, dataclasses.replace(c, schedule_seconds=3.0),
                      checkpoint_dir=tmp_path, tokenizer=tok)
    new = longer.history[len(rows):]
    assert "extending the schedule from 2 s to 3 s (the cosine now ends at 3 s)" in longer.notes
    assert new and new[0]["lr"] > rows[-1]["lr"] and longer.reason == "schedule"
    assert new[-1]["seconds"] > c.schedule_seconds and new[-1]["lr"] <= c.min_lr + 0.1 * (c.learning_rate - c.min_lr)
    # a step-counted schedule cannot become one over seconds
    with pytest.raises(CheckpointMismatchError, match="schedule_seconds 3.0 \\(checkpoint\\) vs None"):
        train_lm(tiny_gpt(tok.vocab_size), tr, va, dataclasses.replace(c, schedule_seconds=None),
                 checkpoint_dir=tmp_path, tokenizer=tok)


def test_a_time_budget_counts_across_resumes_and_says_so(data, tmp_path):
    c = TrainConfig(max_iters=10**6, batch_size=4, block_size=16, eval_interval=10, eval_iters=1, warmup_iters=2)
    tok, tr, va = data
    res = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok, time_budget_s=0.5)
    assert res.reason == "time budget" and res.history[-1]["seconds"] >= 0.5
    again = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok, time_budget_s=0.5)
    assert again.iterations == res.iterations and again.reason == "nothing to train"
    assert any(n.startswith("already used its time budget of 0.5 s") and "counted across resumes" in n
               for n in again.notes)
    more = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok, time_budget_s=1.0)
    assert more.iterations > res.iterations and more.reason == "time budget"


def test_a_run_whose_seconds_are_used_up_trains_no_further(data, tmp_path):
    c = TrainConfig(max_iters=10**6, batch_size=4, block_size=16, eval_interval=5, eval_iters=1, warmup_iters=1,
                    schedule_seconds=30.0)
    tok, tr, va = data
    model = tiny_gpt(tok.vocab_size)
    opt = make_optimizer(model, c)
    # a checkpoint whose history has used 31 of the 30 seconds (as a run on a slower machine would leave it)
    history = [dict(iter=5, lr=c.min_lr, train_loss=3.0, val_loss=3.0, val_bits_per_token=4.3, seconds=31.0,
                    tokens_per_s=1.0)]
    save_checkpoint(tmp_path, model, opt, tokenizer=tok, iteration=5, train_config=dataclasses.asdict(c),
                    history=history, rng={"batch": torch.Generator().manual_seed(1).get_state()})
    res = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, checkpoint_dir=tmp_path, tokenizer=tok)
    assert res.iterations == 5 and res.history == history
    assert any("already used its 30 s of training (31.0 s); nothing to train" in n for n in res.notes)


def test_per_character_losses_and_old_field_names(data, tmp_path):
    from seqlab.text.checkpoint import load_checkpoint

    c = TrainConfig(max_iters=4, batch_size=4, block_size=16, eval_interval=2, eval_iters=1, warmup_iters=1)
    tok, tr, va = data
    res = train_lm(tiny_gpt(tok.vocab_size), tr, va, c, val_chars=2 * len(va))  # as if each token spelled two
    row = res.history[-1]
    assert row["val_nats_per_char"] == pytest.approx(row["val_loss"] / 2)
    assert row["val_bits_per_char"] == pytest.approx(row["val_loss"] / 2 / 0.6931471805599453)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(InvalidParameterError, match="val_chars"):
            train_lm(tiny_gpt(tok.vocab_size), tr, va, c, val_chars=bad)
    # a checkpoint of an earlier version stored bits per token as val_bpc: it is read under the present name
    model = tiny_gpt(tok.vocab_size)
    save_checkpoint(tmp_path, model, tokenizer=tok, iteration=2,
                    history=[dict(iter=2, val_loss=3.0, val_bpc=4.328, seconds=1.0)])
    assert load_checkpoint(tmp_path)[2]["history"] == [dict(iter=2, val_loss=3.0, val_bits_per_token=4.328,
                                                            seconds=1.0)]


@pytest.mark.parametrize("native", [True, False])
def test_an_lstm_trains_in_bfloat16_with_or_without_native_products(monkeypatch, native):
    """On a CPU without native bfloat16, torch's LSTM raises under bfloat16 autocast; the recurrence runs in
    float32 there (and gives float32's numbers), the rest of the model in bfloat16."""
    import seqlab.nn.lstm_lm as lstm_lm

    if native and not lstm_lm.native_bfloat16("cpu")[0]:
        pytest.skip("this CPU has no native bfloat16 products")
    monkeypatch.setattr(lstm_lm, "native_bfloat16", lambda device: (native, "as the test says"))
    torch.manual_seed(0)
    model = LSTMLanguageModel(LSTMConfig(vocab_size=11, d_model=8, hidden_size=16, num_layers=2))
    x = torch.randn(2, 5, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = model._recur(x, None)
    assert out.dtype == (torch.bfloat16 if native else torch.float32)
    if not native:
        assert torch.equal(out, model.lstm(x)[0])
    ids = torch.randint(0, 11, (400,), generator=torch.Generator().manual_seed(1))
    config = TrainConfig(max_iters=2, batch_size=4, block_size=8, eval_interval=2, eval_iters=1, dtype="bfloat16")
    result = train_lm(model, ids[:300], ids[300:], config)
    assert result.history[-1]["iter"] == 2 and 0 < result.final_val_loss < 10
