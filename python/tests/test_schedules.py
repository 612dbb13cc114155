# Learning-rate schedules from Python: Keras' schedule classes (their values at chosen steps against
# Keras' documented formulas, and the rates the library reports per epoch), the optimizer classes
# taking a schedule as learning_rate, ReduceLROnPlateau run by the library, and the bad arguments.
import math
import pickle
import warnings

import numpy as np
import pytest

import anycl
from anycl.callbacks import ReduceLROnPlateau
from anycl.optimizers import SGD, Adam, AdamW, RMSprop
from anycl.optimizers.schedules import CosineDecay, ExponentialDecay, PiecewiseConstantDecay

from test_threads import circle


def test_schedules_follow_keras_formulas():
    e = ExponentialDecay(0.1, decay_steps=1000, decay_rate=0.96)
    assert e(0) == 0.1
    assert e(1000) == pytest.approx(0.096)
    assert e(500) == pytest.approx(0.1 * math.sqrt(0.96))
    assert ExponentialDecay(0.1, 1000, 0.96, staircase=True)(2500) == pytest.approx(0.1 * 0.96 ** 2)
    p = PiecewiseConstantDecay([100000, 110000], [1.0, 0.5, 0.1])  # Keras' documented example
    assert [p(s) for s in (0, 100000, 100001, 110000, 110001)] == [1.0, 1.0, 0.5, 0.5, 0.1]
    c = CosineDecay(0.1, decay_steps=1000, alpha=0.1)
    assert c(0) == pytest.approx(0.1)
    assert c(500) == pytest.approx(0.055)
    assert c(5000) == pytest.approx(0.01)
    assert e.get_config()["decay_rate"] == 0.96


def test_cosine_decay_warm_up_follows_keras():
    # Keras' CosineDecay(0.125, 16, alpha=0.25, warmup_target=1.0, warmup_steps=8), worked out by hand.
    c = CosineDecay(0.125, decay_steps=16, alpha=0.25, warmup_target=1.0, warmup_steps=8)
    assert [c(s) for s in (0, 1, 4, 7, 8)] == [0.125, 0.234375, 0.5625, 0.890625, 1.0]
    assert c(12) == pytest.approx(0.75 * 0.5 * (1 + math.cos(math.pi / 4)) + 0.25)
    assert c(16) == pytest.approx(0.625)
    assert [c(s) for s in (24, 25, 10 ** 6)] == [0.25, 0.25, 0.25]  # alpha * warmup_target from 8 + 16 on
    k = CosineDecay(0.0, 1000, warmup_target=0.1, warmup_steps=1000)  # Keras' documented example
    assert [k(0), k(500), k(1000), k(2000)] == pytest.approx([0.0, 0.05, 0.1, 0.0])
    assert CosineDecay(0.1, 10, warmup_target=0.5)(0) == 0.5  # warmup_steps 0: the decay starts at the target
    # Without warmup_target Keras ignores warmup_steps.
    assert CosineDecay(0.5, 10, warmup_steps=4)(5) == pytest.approx(0.25)
    config = c.get_config()
    assert config == {"initial_learning_rate": 0.125, "decay_steps": 16.0, "alpha": 0.25, "name": "CosineDecay",
                      "warmup_target": 1.0, "warmup_steps": 8}
    again = CosineDecay.from_config(config)
    assert again.get_config() == config
    assert [again(s) for s in range(30)] == [c(s) for s in range(30)]
    plain = CosineDecay.from_config(CosineDecay(0.1, 100).get_config())
    assert (plain.warmup_target, plain.warmup_steps) == (None, 0)


def test_cosine_warm_up_rates_reach_the_library_from_zero(runtime):
    # 4 steps an epoch; Keras' usual warm-up from initial_learning_rate 0 (the C API's lr 0 is then 0).
    schedule = CosineDecay(0.0, decay_steps=4, alpha=0.2, warmup_target=0.1, warmup_steps=6)
    _, history = fit(runtime, SGD(learning_rate=schedule))
    assert history.history["learning_rate"] == pytest.approx([schedule(3), schedule(7), schedule(11)], rel=1e-6)
    assert schedule(3) == pytest.approx(0.05)  # halfway up from 0


def fit(runtime, optimizer, epochs=3, callbacks=(), validation_split=0.0, **compile_args):
    x, y = circle(64)  # batch 16: 4 steps an epoch
    model = anycl.Sequential("8", input_shape=(2,), outputs=2, dropout=0.0)
    model.compile(optimizer=optimizer, **compile_args)
    return model, model.fit(x, y, epochs=epochs, batch_size=16, runtime=runtime, callbacks=list(callbacks),
                            validation_split=validation_split)


@pytest.mark.parametrize("schedule", [
    ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5),
    ExponentialDecay(0.1, decay_steps=3, decay_rate=0.5, staircase=True),
    PiecewiseConstantDecay([5], [0.05, 0.01]),
    CosineDecay(0.1, decay_steps=10, alpha=0.2),
    CosineDecay(0.01, decay_steps=6, alpha=0.1, warmup_target=0.1, warmup_steps=5),
])
def test_history_carries_each_epochs_scheduled_rate(runtime, schedule):
    _, history = fit(runtime, SGD(learning_rate=schedule))
    # Epoch e ends with step 4e - 1 (from 0); the library computes in double, rounded to float.
    expected = [schedule(4 * e + 3) for e in range(3)]
    assert history.history["learning_rate"] == pytest.approx(expected, rel=1e-6)


def test_every_optimizer_class_and_compile_learning_rate_take_a_schedule(runtime):
    schedule = ExponentialDecay(0.01, decay_steps=2, decay_rate=0.9)
    for optimizer in (RMSprop(learning_rate=schedule), Adam(schedule), AdamW(learning_rate=schedule)):
        _, history = fit(runtime, optimizer, epochs=1)
        assert history.history["learning_rate"] == pytest.approx([schedule(3)], rel=1e-6)
    _, history = fit(runtime, "adam", epochs=1, learning_rate=schedule)
    assert history.history["learning_rate"] == pytest.approx([schedule(3)], rel=1e-6)
    _, history = fit(runtime, RMSprop(learning_rate=0.005), epochs=1)
    assert "learning_rate" not in history.history  # a constant rate: Keras' logs as before


def test_a_compiled_model_with_a_schedule_pickles():
    model = anycl.Sequential("8", input_shape=(2,), outputs=2)
    model.compile(optimizer=SGD(learning_rate=PiecewiseConstantDecay([5], [0.05, 0.01])))
    copy = pickle.loads(pickle.dumps(model))
    assert copy._schedule.values == [0.05, 0.01]
    warm = CosineDecay(0.0, 10, warmup_target=0.1, warmup_steps=5)
    assert pickle.loads(pickle.dumps(warm)).get_config() == warm.get_config()
    old = CosineDecay(0.1, 10)
    del old.warmup_target, old.warmup_steps  # as one pickled before the warm-up existed
    assert pickle.loads(pickle.dumps(old))(5) == pytest.approx(0.05)


def test_reduce_lr_on_plateau_runs_in_the_library_with_keras_defaults(runtime):
    plateau = ReduceLROnPlateau(monitor="loss", patience=1, min_delta=10, factor=0.5)
    _, history = fit(runtime, SGD(learning_rate=0.1), epochs=4, callbacks=[plateau])
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.1, 0.05, 0.025])
    assert plateau.learning_rates == history.history["learning_rate"]
    default = ReduceLROnPlateau()
    assert (default.monitor, default.factor, default.patience, default.min_delta, default.cooldown,
            default.min_lr) == ("val_loss", 0.1, 10, 1e-4, 0, 0.0)
    # val_loss (the default monitor) with validation data
    _, history = fit(runtime, SGD(learning_rate=0.1), epochs=3, validation_split=0.25,
                     callbacks=[ReduceLROnPlateau(patience=1, min_delta=10, factor=0.5)])
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.1, 0.05])
    # Without validation data Keras warns that val_loss is missing and never reduces; so does anycl.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, history = fit(runtime, SGD(learning_rate=0.1), epochs=3, callbacks=[ReduceLROnPlateau(patience=1)])
    assert any("val_loss" in str(w.message) for w in caught)
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.1, 0.1])


def test_bad_schedules_and_callbacks_are_refused_naming_the_argument(runtime):
    with pytest.raises(anycl.InvalidArgumentError, match="decay_rate is 1.5"):
        fit(runtime, SGD(learning_rate=ExponentialDecay(0.1, 10, 1.5)), epochs=1)
    with pytest.raises(anycl.InvalidArgumentError, match="decay_steps must be a finite number"):
        ExponentialDecay(0.1, float("nan"), 0.5)
    with pytest.raises(anycl.InvalidArgumentError, match="3 values for 1 boundaries"):
        PiecewiseConstantDecay([5], [0.1, 0.01, 0.001])
    with pytest.raises(anycl.InvalidArgumentError, match="boundaries must increase"):
        fit(runtime, SGD(learning_rate=PiecewiseConstantDecay([5, 2], [0.1, 0.01, 0.001])), epochs=1)
    with pytest.raises(anycl.InvalidArgumentError, match="warmup_target is 0.0, but a warm-up must rise to a rate > 0"):
        CosineDecay(0.1, 100, warmup_target=0, warmup_steps=10)
    with pytest.raises(anycl.InvalidArgumentError, match="warmup_target must be a finite number"):
        CosineDecay(0.1, 100, warmup_target=float("inf"), warmup_steps=10)
    with pytest.raises(anycl.InvalidArgumentError, match="warmup_steps is 2.5 — pass a whole number of steps"):
        CosineDecay(0.1, 100, warmup_target=0.2, warmup_steps=2.5)
    with pytest.raises(anycl.InvalidArgumentError, match="warmup_steps is -1"):
        CosineDecay(0.1, 100, warmup_target=0.2, warmup_steps=-1)
    with pytest.raises(anycl.InvalidArgumentError, match=r"warmup_target is 20 — pass a finite number in \(0, 10\]"):
        fit(runtime, SGD(learning_rate=CosineDecay(0.1, 100, warmup_target=20, warmup_steps=10)), epochs=1)
    with pytest.raises(anycl.InvalidArgumentError, match="factor must be in"):
        ReduceLROnPlateau(factor=1.0)
    with pytest.raises(anycl.InvalidArgumentError, match="monitor must be 'val_loss' or 'loss'"):
        ReduceLROnPlateau(monitor="val_accuracy")
    with pytest.raises(anycl.InvalidArgumentError, match="learning_rate must be a positive number or a schedule"):
        RMSprop(learning_rate="fast")
    with pytest.raises(anycl.InvalidArgumentError, match="momentum must be 0 or 0.9"):
        SGD(momentum=0.5)
    with pytest.raises(anycl.InvalidArgumentError, match="cannot change the rate of an optimizer compiled with"):
        fit(runtime, SGD(learning_rate=ExponentialDecay(0.1, 10, 0.5)), epochs=1, callbacks=[ReduceLROnPlateau()])
    with pytest.raises(anycl.InvalidArgumentError, match="optimizer must be a name .* or an anycl.optimizers"):
        anycl.Sequential("8", input_shape=(2,), outputs=2).compile(optimizer=np.float32(1))
