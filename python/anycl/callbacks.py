"""Keras' callbacks over fit()'s callback protocol: the Callback base class, EarlyStopping (with
restore_best_weights), ModelCheckpoint (with save_best_only), ReduceLROnPlateau and BackupAndRestore.
anycl's callbacks receive 1-based epochs (Keras': 0-based); the file names and messages here count from
1, as Keras' do."""

import math
import os
import warnings

from . import errors


class Callback:
    """Subclass and pass to fit(callbacks=[...]). fit() calls set_model(model), on_train_begin(logs),
    on_epoch_end(epoch, logs) after each epoch (`epoch` counts from 1), on_progress(epoch, step, steps,
    logs) within one, and on_train_end(logs) when training ends without an exception. Return True from
    on_epoch_end or on_progress to stop training after the current step (or set
    self.model.stop_training = True)."""

    def __init__(self):
        self.model = None

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_progress(self, epoch, step, steps, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass


def _mode(mode, monitor, who):
    """Keras' comparison for `mode`: "min" (lower is better), "max", or "auto" (max for accuracy-like
    names, min for the rest: loss, mae, mse...). Returns True when higher is better."""
    if not isinstance(monitor, str) or not monitor:
        raise errors.InvalidArgumentError(f"{who}: monitor must be a name from fit()'s logs (e.g. 'val_loss'), "
                                          f"got {monitor!r}")
    if mode not in ("auto", "min", "max"):
        raise errors.InvalidArgumentError(f"{who}: mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode == "auto":
        return "acc" in monitor or monitor.startswith("fmeasure")
    return mode == "max"


def _number(value, name, who, minimum=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise errors.InvalidArgumentError(f"{who}: {name} must be a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise errors.InvalidArgumentError(f"{who}: {name} must be at least {minimum}, got {value!r}")
    return value


def _count(value, name, who):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise errors.InvalidArgumentError(f"{who}: {name} must be a non-negative integer, got {value!r}")
    return value


class EarlyStopping(Callback):
    """Keras' EarlyStopping: stops training when `monitor` has not improved (by more than
    `min_delta`) for `patience` epochs. `mode` "auto" minimises loss-like names and maximises
    accuracy-like ones. With `baseline`, the count of epochs without improvement restarts only when the
    value also beats the baseline. Epochs before `start_from_epoch` (Keras' 0-based count: the first
    `start_from_epoch` epochs) are not watched. With `restore_best_weights=True` the model gets the best
    epoch's weights back when training ends (on_train_end: the model's weights cannot be replaced while
    fit() runs); a fit that was stopped by an exception keeps the weights reached, as in Keras.
    After fit: `stopped_epoch` (1-based, 0 when it never stopped training) and `best_epoch` (1-based)."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        who = "EarlyStopping"
        self.monitor = monitor
        self.higher_is_better = _mode(mode, monitor, who)
        self.mode = mode
        self.min_delta = abs(_number(min_delta, "min_delta", who))
        self.patience = _count(patience, "patience", who)
        self.baseline = None if baseline is None else _number(baseline, "baseline", who)
        self.restore_best_weights = bool(restore_best_weights)
        self.start_from_epoch = _count(start_from_epoch, "start_from_epoch", who)
        self.verbose = verbose
        self.on_train_begin()

    def on_train_begin(self, logs=None):
        # Keras resets here so that one instance serves several fits.
        self.wait, self.stopped_epoch, self.best, self.best_weights, self.best_epoch = 0, 0, None, None, 0

    def _improves(self, value, reference):
        if reference is None:
            return True
        if self.higher_is_better:
            return value - self.min_delta > reference
        return value + self.min_delta < reference

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. Available "
                          f"metrics are: {','.join(logs or {})} (val_ metrics need validation_split or "
                          "validation_data in fit)", stacklevel=2)
            return False
        if epoch - 1 < self.start_from_epoch:  # Keras compares its 0-based epoch
            return False
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._improves(value, self.best):
            self.best, self.best_epoch = value, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improves(value, self.baseline):
                self.wait = 0
            return False
        if self.wait >= self.patience and epoch > 1:
            self.stopped_epoch = epoch
            if self.model is not None:
                self.model.stop_training = True
            return True
        return False

    def on_train_end(self, logs=None):
        if self.stopped_epoch and self.verbose:
            print(f"Epoch {self.stopped_epoch}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch}.")
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Keras' ModelCheckpoint: saves the model through model.save() at the end of every epoch, or
    with `save_best_only=True` only when `monitor` improved on the best value so far (`mode` as
    EarlyStopping's). `filepath` is formatted with `epoch` (1-based, as in Keras' file names) and the
    logs' keys: "m-{epoch:02d}-{val_loss:.3f}.anycl". The file is anycl's model file (load_model reads
    it). `save_freq` must be "epoch": anycl's callbacks see training at epoch ends and at time
    intervals, not at every batch."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, mode="auto",
                 save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        who = "ModelCheckpoint"
        if not isinstance(filepath, str) and not hasattr(filepath, "__fspath__"):
            raise errors.InvalidArgumentError(f"{who}: filepath must be a path (str or os.PathLike), got {filepath!r}")
        self.filepath = str(filepath.__fspath__() if hasattr(filepath, "__fspath__") else filepath)
        if not self.filepath:
            raise errors.InvalidArgumentError(f"{who}: filepath is empty — name the file to write")
        self.monitor = monitor
        self.higher_is_better = _mode(mode, monitor, who)
        self.mode = mode
        if save_freq != "epoch":
            raise errors.InvalidArgumentError(
                f"{who}: save_freq must be 'epoch', got {save_freq!r} — anycl's callbacks see training at epoch "
                "ends (saving every N batches is not offered)")
        self.save_freq = save_freq
        self.save_best_only = bool(save_best_only)
        self.verbose = verbose
        if initial_value_threshold is not None:
            _number(initial_value_threshold, "initial_value_threshold", who)
        self.initial_value_threshold = initial_value_threshold
        self.best = initial_value_threshold
        self.saved = []  # the paths written, in order (anycl's addition)

    def _path(self, epoch, logs):
        try:
            return self.filepath.format(epoch=epoch, **(logs or {}))
        except KeyError as e:
            raise errors.InvalidArgumentError(
                f"ModelCheckpoint: filepath {self.filepath!r} names {e.args[0]!r}, which is not in this epoch's "
                f"logs ({', '.join(['epoch', *(logs or {})])}) — val_ keys need validation_split or "
                "validation_data in fit") from None
        except (ValueError, IndexError) as e:
            raise errors.InvalidArgumentError(f"ModelCheckpoint: filepath {self.filepath!r} is not a valid format "
                                              f"string ({e}) — e.g. 'model-{{epoch:02d}}.anycl'") from None

    def on_epoch_end(self, epoch, logs=None):
        path = self._path(epoch, logs)
        if self.save_best_only:
            value = (logs or {}).get(self.monitor)
            if value is None:
                warnings.warn(f"Can save best model only with {self.monitor} available, skipping.", stacklevel=2)
                return False
            better = self.best is None or (value > self.best if self.higher_is_better else value < self.best)
            if not better:
                if self.verbose:
                    print(f"Epoch {epoch}: {self.monitor} did not improve from {self.best:.5f}")
                return False
            if self.verbose:
                was = "inf" if self.best is None else f"{self.best:.5f}"
                print(f"Epoch {epoch}: {self.monitor} improved from {was} to {value:.5f}, saving model to {path}")
            self.best = value
        elif self.verbose:
            print(f"Epoch {epoch}: saving model to {path}")
        self.model.save(path)
        self.saved.append(path)
        return False


class ReduceLROnPlateau(Callback):
    """Keras' ReduceLROnPlateau: multiplies the learning rate by `factor` when `monitor` has not
    improved by more than `min_delta` for `patience` epochs, then waits `cooldown` epochs before counting
    again; never below `min_lr`. The library applies it between epochs (fit() hands these settings to
    anycl_train), so its state is in the training's checkpoints and a reduction survives a resume. It
    monitors the loss: 'val_loss' (Keras' default; without validation data it warns, as Keras does, and
    never reduces) or 'loss', with mode 'auto' or 'min'. fit()'s logs carry 'learning_rate' (the rate
    of each epoch's last step), as Keras' logs do with this callback."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        who = "ReduceLROnPlateau"
        if monitor not in ("val_loss", "loss"):
            raise errors.InvalidArgumentError(
                f"{who}: monitor must be 'val_loss' or 'loss' (anycl reduces on a plateau of the loss), got "
                f"{monitor!r}")
        if mode not in ("auto", "min"):
            raise errors.InvalidArgumentError(f"{who}: mode must be 'auto' or 'min' for a loss, got {mode!r}")
        if kwargs:
            raise errors.InvalidArgumentError(f"{who}: unexpected arguments {', '.join(sorted(kwargs))}")
        if not 0 < _number(factor, "factor", who) < 1.0:
            raise errors.InvalidArgumentError(f"{who}: factor must be in (0, 1) (Keras: ReduceLROnPlateau does not "
                                              f"support a factor >= 1.0), got {factor!r}")
        self.monitor, self.factor, self.mode, self.verbose = monitor, float(factor), mode, verbose
        self.patience = _count(patience, "patience", who)
        self.min_delta = abs(_number(min_delta, "min_delta", who))
        self.cooldown = _count(cooldown, "cooldown", who)
        self.min_lr = _number(min_lr, "min_lr", who, minimum=0)
        self.learning_rates = []  # each epoch's rate, as fit()'s logs give it (anycl's addition)

    def on_train_begin(self, logs=None):
        self.learning_rates = []

    def on_epoch_end(self, epoch, logs=None):
        rate = (logs or {}).get("learning_rate")
        if rate is not None:
            if self.verbose and self.learning_rates and rate < self.learning_rates[-1]:
                print(f"Epoch {epoch - 1}: ReduceLROnPlateau reducing learning rate to {rate}.")
            self.learning_rates.append(rate)
        return False

    def _fill(self, options):
        """Sets the plateau fields of the C API's anycl_train_options."""
        options.lr_schedule = b"plateau"
        options.monitor = self.monitor.encode()
        options.factor, options.patience, options.min_delta = self.factor, self.patience, self.min_delta
        options.cooldown, options.min_lr = self.cooldown, self.min_lr


class BackupAndRestore(Callback):
    """Keras' BackupAndRestore: fit() keeps a training checkpoint in `backup_dir` (at each epoch end
    and when training stops), and a fit() that finds one there continues that run from where it
    stopped — weights, optimizer state, learning-rate schedule, epoch and step — with the losses and
    weights the run would have reached without the interruption (the library's checkpoints, as
    fit(checkpoint_dir=...) writes them). The History of the continuing fit() holds the epochs it ran.
    When fit() ends without an exception (training done, or stopped by a callback) the backup is
    deleted, unless `delete_checkpoint=False`. The continuing run must be the same model, compile()
    arguments, batch_size, seed and training data; anything else is refused with the difference
    named. `save_freq` must be "epoch" (a backup is also written at a stop, whatever the step)."""

    _FILE = "checkpoint.anyclckpt"  # what the library writes in a checkpoint folder

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True, double_checkpoint=False,
                 save_before_preemption=False):
        super().__init__()
        who = "BackupAndRestore"
        if not isinstance(backup_dir, str) and not hasattr(backup_dir, "__fspath__"):
            raise errors.InvalidArgumentError(f"{who}: backup_dir must be a folder path (str or os.PathLike), got "
                                              f"{backup_dir!r}")
        self.backup_dir = os.fspath(backup_dir)
        if not self.backup_dir:
            raise errors.InvalidArgumentError(f"{who}: backup_dir is empty — name the folder for the backup")
        if save_freq != "epoch":
            raise errors.InvalidArgumentError(
                f"{who}: save_freq must be 'epoch', got {save_freq!r} — anycl backs up at each epoch end and "
                "when training stops (every N batches is not offered)")
        for name, value in (("double_checkpoint", double_checkpoint),
                            ("save_before_preemption", save_before_preemption)):
            if value:
                raise errors.InvalidArgumentError(f"{who}: {name}=True is not offered — anycl writes each backup "
                                                  "atomically (the previous one survives a crash while writing)")
        self.save_freq = save_freq
        self.delete_checkpoint = bool(delete_checkpoint)
        self.restored = False  # whether the last fit() continued from a backup (anycl's addition)

    @property
    def backup_path(self):
        """The checkpoint file inside backup_dir."""
        return os.path.join(self.backup_dir, self._FILE)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint:
            try:
                os.remove(self.backup_path)
            except FileNotFoundError:
                pass
