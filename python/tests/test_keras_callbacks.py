# Keras' callbacks (anycl.callbacks): EarlyStopping and ModelCheckpoint on scripted logs (no device),
# then on real fits of a small synthetic problem: where training stops, restore_best_weights against
# the best epoch's checkpoint (bit-equal predictions), file names, save_best_only, bad arguments.
import os
import warnings

import numpy as np
import pytest

import anycl
from anycl.callbacks import BackupAndRestore, Callback, EarlyStopping, ModelCheckpoint

from test_threads import circle


class FakeModel:
    """What the callbacks use of a model, without a device: stop_training and save()."""

    def __init__(self):
        self.stop_training, self.saved = False, []

    def save(self, path):
        self.saved.append(path)


def drive(callback, values, monitor="val_loss"):
    """Runs `callback` over scripted epochs (1-based, as fit() calls it); the epoch it stopped at, or None."""
    model = FakeModel()
    callback.set_model(model)
    callback.on_train_begin({})
    for epoch, value in enumerate(values, start=1):
        stop = callback.on_epoch_end(epoch, {"loss": 0.5, monitor: value})
        if stop or model.stop_training:
            assert stop and model.stop_training
            return epoch
    return None


@pytest.mark.parametrize("values, arguments, stops_at", [
    ([1.0, 0.8, 0.85, 0.9, 0.7], dict(patience=2), 4),
    ([1.0, 0.8, 0.85, 0.9, 0.7], dict(patience=3), None),
    ([1.0, 1.1], dict(patience=0), 2),
    ([1.0], dict(patience=0), None),  # never on the first epoch, as in Keras
    ([1.0, 0.95, 0.93], dict(patience=1, min_delta=0.1), 2),  # 0.05 is no improvement with min_delta 0.1
    ([1.0, 0.95, 0.93], dict(patience=1, min_delta=-0.01), None),  # Keras takes |min_delta|
    ([1.0, 0.9, 0.95], dict(patience=2), None),
    ([1.0, 0.9, 0.95], dict(patience=2, baseline=0.5), 3),  # improvements short of the baseline count as waiting
    ([1.0, 2.0, 3.0, 4.0], dict(patience=0), 2),
    ([1.0, 2.0, 3.0, 4.0], dict(patience=0, start_from_epoch=2), 4),  # epochs 1 and 2 are not watched
])
def test_early_stopping_stops_where_keras_does(values, arguments, stops_at):
    assert drive(EarlyStopping(**arguments), values) == stops_at


def test_early_stopping_mode():
    assert drive(EarlyStopping(monitor="val_accuracy", patience=0), [0.5, 0.6, 0.55], "val_accuracy") == 3
    assert drive(EarlyStopping(monitor="val_accuracy", mode="min", patience=0), [0.5, 0.6], "val_accuracy") == 2
    assert drive(EarlyStopping(monitor="loss", mode="max", patience=0), [0.5, 0.4], "loss") == 2
    assert not EarlyStopping(monitor="loss").higher_is_better
    assert not EarlyStopping(monitor="val_mae").higher_is_better
    assert EarlyStopping(monitor="accuracy").higher_is_better


def test_early_stopping_instance_is_reset_by_each_fit():
    callback = EarlyStopping(patience=1)
    assert drive(callback, [1.0, 2.0]) == 2
    assert drive(callback, [5.0, 4.0, 3.0]) is None


def test_a_missing_monitor_warns_and_does_not_stop():
    callback = EarlyStopping(monitor="val_loss", patience=0)
    callback.set_model(FakeModel())
    with pytest.warns(UserWarning, match="`val_loss` which is not available. Available metrics are: loss,accuracy"):
        assert not callback.on_epoch_end(2, {"loss": 1.0, "accuracy": 0.5})
    checkpoint = ModelCheckpoint("m.anycl", monitor="val_loss", save_best_only=True)
    checkpoint.set_model(FakeModel())
    with pytest.warns(UserWarning, match="Can save best model only with val_loss available, skipping"):
        checkpoint.on_epoch_end(1, {"loss": 1.0})
    assert checkpoint.model.saved == []


def test_model_checkpoint_formats_names_and_saves_only_on_improvement():
    every = ModelCheckpoint("m-{epoch:02d}-{val_loss:.3f}.anycl")
    best = ModelCheckpoint("best-{epoch}.anycl", save_best_only=True)
    accuracy = ModelCheckpoint("acc-{epoch}.anycl", monitor="val_accuracy", save_best_only=True)
    for callback in (every, best, accuracy):
        callback.set_model(FakeModel())
        for epoch, value in enumerate([1.0, 0.9, 0.95, 0.8], start=1):
            callback.on_epoch_end(epoch, {"loss": 2.0, "val_loss": value, "val_accuracy": value})
    assert every.model.saved == ["m-01-1.000.anycl", "m-02-0.900.anycl", "m-03-0.950.anycl", "m-04-0.800.anycl"]
    assert best.model.saved == ["best-1.anycl", "best-2.anycl", "best-4.anycl"]
    assert accuracy.model.saved == ["acc-1.anycl"]  # "auto" maximises accuracy


@pytest.mark.parametrize("make, names", [
    (lambda: EarlyStopping(mode="sideways"), "mode"),
    (lambda: EarlyStopping(patience=-1), "patience"),
    (lambda: EarlyStopping(patience=1.5), "patience"),
    (lambda: EarlyStopping(start_from_epoch=-2), "start_from_epoch"),
    (lambda: EarlyStopping(min_delta="small"), "min_delta"),
    (lambda: EarlyStopping(monitor=None), "monitor"),
    (lambda: ModelCheckpoint("m.anycl", mode="best"), "mode"),
    (lambda: ModelCheckpoint("m.anycl", save_freq=100), "save_freq"),
    (lambda: ModelCheckpoint("", save_best_only=True), "filepath"),
    (lambda: BackupAndRestore(""), "backup_dir"),
    (lambda: BackupAndRestore(None), "backup_dir"),
    (lambda: BackupAndRestore("b", save_freq=10), "save_freq"),
    (lambda: BackupAndRestore("b", double_checkpoint=True), "double_checkpoint"),
])
def test_bad_arguments_name_the_argument(make, names):
    with pytest.raises(anycl.InvalidArgumentError, match=names):
        make()


def test_a_filepath_key_missing_from_the_logs_is_a_clear_error():
    callback = ModelCheckpoint("m-{val_loss:.2f}.anycl")
    callback.set_model(FakeModel())
    with pytest.raises(anycl.InvalidArgumentError, match="names 'val_loss', which is not in this epoch's logs"):
        callback.on_epoch_end(1, {"loss": 1.0})


def test_callback_base_class_is_anycls():
    assert anycl.Callback is Callback
    assert issubclass(EarlyStopping, anycl.Callback)


# -- on the device ---------------------------------------------------------------------------------
def compiled():
    model = anycl.Sequential("32,32", input_shape=(2,), outputs=2, dropout=0.0)
    model.compile(optimizer="adam", lr=0.01)
    return model


class Predictions(Callback):
    """Each epoch end's predictions on a few rows (they see that epoch's weights)."""

    def __init__(self, x, runtime):
        super().__init__()
        self.x, self.runtime, self.by_epoch = x, runtime, {}

    def on_epoch_end(self, epoch, logs):
        self.by_epoch[epoch] = self.model.predict(self.x, runtime=self.runtime)


@pytest.mark.parametrize("patience", [0, 2])
def test_early_stopping_ends_a_real_fit_after_patience_epochs(runtime, patience):
    x, y = circle()
    # With min_delta 100 only the first epoch improves, so training stops after 1 + max(patience, 1) epochs.
    stop = EarlyStopping(monitor="loss", min_delta=100, patience=patience)
    model = compiled()
    history = model.fit(x, y, epochs=5, batch_size=32, callbacks=[stop], runtime=runtime)
    expected = 1 + max(patience, 1)
    assert history.epoch == list(range(1, expected + 1))
    assert stop.stopped_epoch == expected and stop.best_epoch == 1


@pytest.mark.parametrize("mode", ["min", "max"])  # "max" on val_loss makes an early epoch the best one
def test_restore_best_weights_equals_the_best_epochs_checkpoint(runtime, tmp_path, mode):
    x, y = circle()
    rows = x[:64]
    stop = EarlyStopping(monitor="val_loss", mode=mode, patience=10, restore_best_weights=True)
    best = ModelCheckpoint(str(tmp_path / "best-{epoch}.anycl"), monitor="val_loss", mode=mode, save_best_only=True)
    seen = Predictions(rows, runtime)
    model = compiled()
    history = model.fit(x, y, epochs=4, batch_size=32, validation_split=0.25, callbacks=[seen, stop, best],
                        runtime=runtime)
    losses = history.history["val_loss"]
    best_epoch = history.epoch[int(np.argmin(losses) if mode == "min" else np.argmax(losses))]
    assert stop.best_epoch == best_epoch and stop.stopped_epoch == 0
    assert best.saved[-1] == str(tmp_path / f"best-{best_epoch}.anycl")
    restored = model.predict(rows, runtime=runtime)
    assert np.array_equal(restored, anycl.load_model(best.saved[-1]).predict(rows, runtime=runtime))
    assert np.array_equal(restored, seen.by_epoch[best_epoch])
    if best_epoch != history.epoch[-1]:
        assert not np.array_equal(restored, seen.by_epoch[history.epoch[-1]]), "the last epoch's weights stayed"


def test_model_checkpoint_names_files_by_the_format_on_a_real_fit(runtime, tmp_path):
    x, y = circle()
    every = ModelCheckpoint(str(tmp_path / "m-{epoch:02d}-{val_loss:.3f}.anycl"))
    best = ModelCheckpoint(str(tmp_path / "best-{epoch}.anycl"), save_best_only=True)
    model = compiled()
    history = model.fit(x, y, epochs=3, batch_size=32, validation_split=0.25, callbacks=[every, best], runtime=runtime)
    names = [f"m-{e:02d}-{v:.3f}.anycl" for e, v in zip(history.epoch, history.history["val_loss"])]
    assert [os.path.basename(p) for p in every.saved] == names
    running, improved = None, []
    for epoch, value in zip(history.epoch, history.history["val_loss"]):
        if running is None or value < running:
            running = value
            improved.append(f"best-{epoch}.anycl")
    assert [os.path.basename(p) for p in best.saved] == improved
    assert sorted(os.listdir(tmp_path)) == sorted(names + improved)
    last = anycl.load_model(every.saved[-1])
    assert np.array_equal(last.predict(x[:32], runtime=runtime), model.predict(x[:32], runtime=runtime))


def test_a_callback_without_the_keras_hooks_still_works(runtime):
    class Plain:  # the protocol before set_model/on_train_begin/on_train_end: only on_epoch_end
        def __init__(self):
            self.epochs = []

        def on_epoch_end(self, epoch, logs):
            self.epochs.append(epoch)

        def on_progress(self, epoch, step, steps, logs):
            pass

    x, y = circle()
    plain = Plain()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled().fit(x, y, epochs=2, batch_size=32, callbacks=[plain], runtime=runtime)
    assert plain.epochs == [1, 2]


def test_a_checkpoint_that_cannot_be_written_ends_fit_with_the_error(runtime, tmp_path):
    x, y = circle()
    checkpoint = ModelCheckpoint(str(tmp_path / "missing-folder" / "m-{epoch}.anycl"))
    model = compiled()
    with pytest.raises(anycl.Error, match="missing-folder"):
        model.fit(x, y, epochs=3, batch_size=32, callbacks=[checkpoint], runtime=runtime)
    assert checkpoint.saved == []


class CrashAfter(Callback):
    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise RuntimeError("simulated crash")


def test_backup_and_restore_refuses_another_run_in_its_own_words(runtime, tmp_path):
    x, y = circle()
    backup = BackupAndRestore(tmp_path / "b")
    with pytest.raises(RuntimeError, match="simulated crash"):
        compiled().fit(x, y, epochs=3, batch_size=32, callbacks=[backup, CrashAfter(1)], runtime=runtime)
    # Another batch size: refused before any weight changes, the backup kept for the run that wrote it.
    model = compiled()
    with pytest.raises(anycl.InvalidArgumentError, match=r"BackupAndRestore: the backup in .*batch.*delete"):
        model.fit(x, y, epochs=3, batch_size=16, callbacks=[BackupAndRestore(tmp_path / "b")], runtime=runtime)
    assert (tmp_path / "b" / "checkpoint.anyclckpt").is_file()
    with pytest.raises(anycl.InvalidArgumentError, match="checkpoint_dir .* and BackupAndRestore's backup_dir"):
        model.fit(x, y, epochs=3, batch_size=32, callbacks=[BackupAndRestore(tmp_path / "b")],
                  checkpoint_dir=str(tmp_path / "other"), runtime=runtime)


def test_backup_and_restore_continues_after_an_early_stop_is_deleted(runtime, tmp_path):
    x, y = circle()
    # An early stop ends fit normally (as in Keras): the backup goes; keep it with delete_checkpoint=False.
    kept = BackupAndRestore(tmp_path / "kept", delete_checkpoint=False)
    history = compiled().fit(x, y, epochs=4, batch_size=32, runtime=runtime,
                             callbacks=[kept, EarlyStopping(monitor="loss", min_delta=100, patience=1)])
    assert len(history.epoch) == 2 and (tmp_path / "kept" / "checkpoint.anyclckpt").is_file()
    gone = BackupAndRestore(tmp_path / "gone")
    compiled().fit(x, y, epochs=2, batch_size=32, callbacks=[gone], runtime=runtime)
    assert not gone.restored and not (tmp_path / "gone" / "checkpoint.anyclckpt").exists()
    # The kept one continues its run to epoch 4: the History holds epochs 3 and 4.
    again = BackupAndRestore(tmp_path / "kept", delete_checkpoint=False)
    history = compiled().fit(x, y, epochs=4, batch_size=32, callbacks=[again], runtime=runtime)
    assert again.restored and history.epoch == [3, 4]
