"""A Keras-shaped model over the C API: compile / fit / evaluate / predict, save and load_model,
export_onnx. Arrays go in and out as numpy; float32 and uint8 features are passed without a copy
when C-contiguous (uint8 is scaled by 1/255 on the device, as `anycl train` does)."""

import ctypes
import json
import os
import signal
import threading
import warnings

import numpy as np

from . import errors
from . import tuning as _tuning
from ._callbacks import CallbackGuard
from .callbacks import Callback  # noqa: F401 — anycl.Callback, kept importable from here
from ._lib import EPOCH_CALLBACK, PROGRESS_CALLBACK, Epoch, ModelOptions, TrainOptions, check, lib, text
from ._arguments import _device_spec, _finite, _fit_arguments, _integer, _path
from ._backup import _backup_and_restore, _backup_words
from ._input import DATA_FORMATS, model_data_format, model_input_shape, split_input_layer
from ._progress import ProgressBar, verbosity
from ._safety import (_handle_from_model_file, _in_flight, _made_here, _model_file_bytes, _predict_in_chunks,
                      _sigint_during_fit)
from ._targets import labels_from_one_hot
from .layers import Layer, fuse_activations, to_layer_string


def devices():
    """Every OpenCL device as a list of dicts (the JSON of `anycl devices --json`)."""
    return json.loads(text(lib.anycl_devices_json))


class Runtime:
    """One device: its context, queue and compiled kernels. `device` as anycl's --device
    (index, "p:d", "gpu", "cpu", a vendor or part of the name); None: $ANYCL_DEVICE, else the best."""

    def __init__(self, device=None):
        self._h = ctypes.c_void_p()
        self._pid = os.getpid()
        check(lib.anycl_runtime_create(_device_spec(device), ctypes.byref(self._h)))

    @property
    def device_name(self):
        return text(lib.anycl_runtime_device_name, self._h)

    def __del__(self):
        if getattr(self, "_h", None) and _made_here(self):
            lib.anycl_runtime_destroy(self._h)
        self._h = None

    # A runtime is a device's context and queue: copies share it (it is never owned twice), and it
    # cannot travel to another process (create one there).
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise TypeError("an anycl.Runtime cannot be pickled (it is this process's device context) — create "
                        "anycl.Runtime() in the other process; models pickle, and use the default runtime there")


def _validation_set(validation_data, model):
    try:
        return _Dataset(validation_data[0], validation_data[1], model)
    except errors.Error as e:
        raise type(e)(f"validation_data: {e}") from None


_default_runtime = None
_default_runtime_lock = threading.Lock()  # threads' first calls create one default runtime, not several


def _runtime(runtime):
    global _default_runtime
    if runtime is not None:
        return runtime
    with _default_runtime_lock:
        if _default_runtime is None:
            _default_runtime = Runtime()
        return _default_runtime


class History:
    """What fit returns, as Keras' History: history["loss"], ["accuracy"] (a regressor's ["mae"]),
    ["val_loss"], ...; epoch numbers."""

    def __init__(self, metric="accuracy"):
        self.history = {"loss": [], metric: []}
        self.epoch = []
        self.seconds = []


# Keras' names of the one metric anycl computes per loss: the first is the default key in fit's logs,
# History and evaluate; compile(metrics=[...]) may choose another of the same metric.
_METRIC_NAMES = {"mse": ("mae", "mean_absolute_error"),
                 "mae": ("mae", "mean_absolute_error"),
                 "huber": ("mae", "mean_absolute_error"),
                 "binary_crossentropy": ("accuracy", "acc", "binary_accuracy"),
                 "softmax_cross_entropy": ("accuracy", "acc", "sparse_categorical_accuracy"),
                 "categorical_crossentropy": ("accuracy", "acc", "categorical_accuracy")}


def _metric_name(loss, metrics):
    names = _METRIC_NAMES.get(loss, ("accuracy",))
    if isinstance(metrics, (list, tuple)):
        for m in metrics:
            if isinstance(m, str) and m in names:
                return m
    return names[0]


def _features(x, expected, what="x"):
    if not isinstance(x, np.ndarray):
        raise errors.DTypeError(f"{what} must be a numpy array, got {type(x).__name__}")
    if x.dtype not in (np.float32, np.uint8):
        raise errors.DTypeError(
            f"{what} has dtype {x.dtype}; anycl takes float32 features or uint8 images — convert with "
            f"{what}.astype(np.float32)")
    if x.ndim < 2:
        raise errors.ShapeError(f"{what} has shape {x.shape}; pass one row per sample: (samples, features...)")
    per_sample = int(np.prod(x.shape[1:]))
    if per_sample != expected:
        raise errors.ShapeError(
            f"{what} has shape {x.shape}: {per_sample} values per sample, but the model takes {expected}")
    if x.shape[0] == 0:
        raise errors.ShapeError(f"{what} holds no samples")
    return np.ascontiguousarray(x)  # no copy when already C-contiguous


def _each(callbacks, hook, argument):
    for c in callbacks:
        method = getattr(c, hook, None)
        if method is not None:
            method(argument)


# Losses whose targets are float32 rows of the output width (the others take integer class labels).
_FLOAT_TARGET_LOSSES = ("mse", "mae", "huber", "binary_crossentropy")


def _check_output_activation(activation, loss):
    """A sigmoid output Dense goes with binary_crossentropy (the sigmoid is in the loss), a softmax one
    with the softmax cross-entropy."""
    if activation == "sigmoid" and loss != "binary_crossentropy":
        raise errors.InvalidArgumentError(
            f"the output Dense says activation='sigmoid', which anycl computes in the binary_crossentropy loss — "
            f"compile(loss='binary_crossentropy'), or leave the activation out for the {loss} loss")
    if activation == "softmax" and loss != "softmax_cross_entropy":
        raise errors.InvalidArgumentError(
            f"the output Dense says activation='softmax', which goes with sparse_categorical_crossentropy (or "
            f"categorical_crossentropy on one-hot targets) — leave the activation out for the {loss} loss")


class _Dataset:
    def __init__(self, x, y, model):
        self.h = ctypes.c_void_p()
        x = _features(model._images(x), model.input_size)
        n = x.shape[0]
        y = np.asarray(y)
        if y.shape[0] != n:
            raise errors.ShapeError(f"x holds {n} samples but y holds {y.shape[0]}")
        self.keep = [x]
        if model.loss in _FLOAT_TARGET_LOSSES:
            if model.loss == "binary_crossentropy" and (np.issubdtype(y.dtype, np.integer) or y.dtype == np.bool_):
                y = y.astype(np.float32)  # 0/1 labels, as Keras takes them for a sigmoid output
            if y.dtype != np.float32:
                raise errors.DTypeError(
                    f"{model.loss} targets must be float32, got {y.dtype} — use y.astype(np.float32)")
            y = np.ascontiguousarray(y.reshape(n, -1))
            if y.shape[1] != model.outputs:
                raise errors.ShapeError(f"y has {y.shape[1]} values per sample, the model outputs {model.outputs}")
            self.keep.append(y)
            check(lib.anycl_dataset_create_targets(x.ctypes.data, n, x[0].size, y.ctypes.data, model.outputs,
                                                   ctypes.byref(self.h)))
            return
        if getattr(model, "_one_hot", False):
            y = labels_from_one_hot(y, model.outputs)
        if not np.issubdtype(y.dtype, np.integer):
            raise errors.DTypeError(f"class labels must be integers, got {y.dtype}" + _one_hot_hint(y, model))
        if y.ndim != 1:
            raise errors.ShapeError(f"class labels must be one per sample, shape ({n},), got {y.shape}"
                                    + _one_hot_hint(y, model))
        if y.size and (y.min() < 0 or y.max() >= model.outputs):
            bad = int(np.argmax((y < 0) | (y >= model.outputs)))
            raise errors.InvalidArgumentError(
                f"y[{bad}] = {y[bad]} is not a class index in [0, {model.outputs}) — labels must be 0 .. classes-1")
        y = np.ascontiguousarray(y, dtype=np.int32)
        self.keep.append(y)
        create = lib.anycl_dataset_create_classes_u8 if x.dtype == np.uint8 else lib.anycl_dataset_create_classes
        check(create(x.ctypes.data, n, x[0].size, y.ctypes.data, model.outputs, ctypes.byref(self.h)))

    def __del__(self):
        if getattr(self, "h", None):
            lib.anycl_dataset_destroy(self.h)
            self.h = None


def _one_hot_hint(y, model):
    if y.ndim == 2 and y.shape[1] == model.outputs:
        return " — for one-hot targets compile(loss='categorical_crossentropy')"
    return ""


class Sequential:
    """A model: layer objects (anycl.layers) or the `--layers` string with `outputs`.

        model = anycl.Sequential([Dense(512, activation="relu"), Dropout(0.2), Dense(512, activation="relu"),
                                  Dropout(0.2), Dense(10)], input_shape=(784,))
        model = anycl.Sequential("512,512", input_shape=(784,), outputs=10, dropout=0.2)
        model = anycl.Sequential()                     # Keras' way: add() the layers, the first gives the shape
        model.add(Dense(512, activation="relu", input_shape=(784,)))

    The input shape is Sequential's input_shape=, the first layer's input_shape= (Keras 2), or an
    Input(shape=...) first; the model is built at compile().

    A hidden Dense or Conv2D object that names no activation is linear, as in Keras; in the string form
    a token without one takes `activation` (relu by default, as `anycl train --layers`).
    """

    def __init__(self, layers=None, input_shape=None, outputs=None, activation="relu",
                 init="glorot_uniform", dropout=None, data_format=None, name=None):
        self.name = name  # Keras' model name (a label only)
        if layers is None and outputs is not None:
            layers = "512,512"  # the --layers string form's default hidden layers
        self._added = None  # the layer objects of Sequential() + add(), described at compile()
        if isinstance(layers, str):
            if outputs is None:
                raise errors.InvalidArgumentError("with a --layers string, pass outputs= (classes or targets)")
            self._layers, self.outputs, self.activation = layers, _integer(outputs, "outputs"), activation
            self.dropout = 0.2 if dropout is None else float(dropout)
            layers, given = (), None  # the string's layers name no data format
        else:
            if activation != "relu" or dropout is not None or outputs is not None:
                raise errors.InvalidArgumentError(
                    "Sequential([...layers...]) takes activation=, dropout= and outputs= from the layers: pass "
                    "Dense(units, activation=...) and Dropout(rate) objects (the last Dense gives the outputs), "
                    "or use the --layers string form: Sequential(\"512,512\", outputs=10, activation=..., dropout=...)")
            elements = list(layers or [])
            self._layer_objects = elements  # as given, for add() before compile()
            layers, given = split_input_layer(elements)
            if not layers:  # Keras' Sequential() (or Sequential([Input(...)])): layers come with add()
                self._added = elements
            else:
                self._describe_layers(layers)
        if data_format is not None and data_format not in DATA_FORMATS:
            raise errors.InvalidArgumentError(
                f"data_format must be 'channels_first' or 'channels_last', got {data_format!r}")
        self._input_arguments = (input_shape, data_format)
        self.input_shape, self.data_format = None, data_format or "channels_first"
        if self._added is None:
            self.input_shape, self.data_format = model_input_shape(input_shape, given,
                                                                   model_data_format(data_format, layers))
        self.init = init
        self.loss = None
        self.stop_training = False
        self._h = None
        self._optimizer, self._lr = "rmsprop", 0.0

    def _describe_layers(self, layers):
        layers = fuse_activations(layers)  # Keras' Activation / LeakyReLU / ELU layers join the layer before
        self._layers, self.outputs, self.activation = to_layer_string(layers)
        self._output_activation = layers[-1].activation  # 'sigmoid': in binary_crossentropy
        self.dropout = 0.0  # dropout comes from Dropout objects

    def add(self, layer):
        """Keras' add: appends a layer (an anycl.layers object; an Input first gives the input shape).
        The model is built from its layers at compile(), so add() comes before compile()."""
        if getattr(self, "_h", None):
            raise errors.InvalidArgumentError(
                "add(): this model is already built (compile() or load_model made it, and anycl cannot grow a "
                "built model) — build a new Sequential with every layer, then compile() it")
        if not isinstance(layer, Layer):
            raise errors.InvalidArgumentError(
                f"add() takes an anycl layer (anycl.layers: Dense, Conv2D, ..., or anycl.Input), got {layer!r}")
        if getattr(self, "_added", None) is None:
            if not hasattr(self, "_layer_objects"):
                raise errors.InvalidArgumentError(
                    "add(): this model was made from a --layers string, which holds all its layers — put the "
                    "layer in the string, or build Sequential() from layer objects and add() them")
            self._added = list(self._layer_objects)
        split_input_layer(self._added + [layer])  # an Input or input_shape= where it cannot be is refused now
        self._added.append(layer)

    def _build_description(self):
        """Sequential() + add(): the --layers text and the input shape, from the layers added."""
        if getattr(self, "_added", None) is None:
            return
        layers, given = split_input_layer(self._added)
        if not layers:
            raise errors.InvalidArgumentError(
                "the model has no layers — add() them (the last a Dense output layer), e.g. "
                "model.add(Dense(10, activation='softmax'))")
        self._describe_layers(layers)
        input_shape, data_format = self._input_arguments
        self.input_shape, self.data_format = model_input_shape(input_shape, given,
                                                               model_data_format(data_format, layers))

    # -- construction ---------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, lr=0.0, learning_rate=None, metrics=None):
        """Chooses the optimizer (sgd, momentum, nesterov, rmsprop, adam, adamw), its learning rate
        (0: its default) and the loss ('softmax_cross_entropy' — Keras' 'sparse_categorical_crossentropy'
        with from_logits —, 'categorical_crossentropy' (the same on one-hot targets, which must be hard
        labels), 'binary_crossentropy' (a sigmoid output, binary or multi-label; 0/1 targets),
        'mse', 'mae' or 'huber' (delta 1); Keras' long names too; None: the loaded model's loss, else
        softmax_cross_entropy).
        Creates the model (weights come from the seed at fit). On a loaded, trained or already compiled
        model with the same loss it keeps the weights and only chooses a new optimizer, as Keras does
        (another loss on a trained or loaded model is refused; on a compiled, untrained one it makes a
        new model). `metrics` is accepted for Keras scripts: the metric is always accuracy (classifier)
        or mae (regression). Refused while the model is training."""
        self._refuse_during_fit("compile()")
        if not getattr(self, "_h", None):
            self._build_description()  # Sequential() + add(): the layers are all there now
        self._metrics = metrics
        optimizer, lr, schedule = _optimizer_settings(optimizer, lr, learning_rate)
        learning_rate = None  # resolved into lr and schedule
        aliases = {"sparse_categorical_crossentropy": "softmax_cross_entropy", "mean_squared_error": "mse",
                   "mean_absolute_error": "mae", "huber_loss": "huber",
                   "categorical_crossentropy": "softmax_cross_entropy"}  # one-hot rows, trained as their labels
        one_hot = getattr(self, "_one_hot", False) if loss is None else loss == "categorical_crossentropy"
        loss = aliases.get(loss, loss)
        _check_output_activation(getattr(self, "_output_activation", None),
                                 loss or self.loss or "softmax_cross_entropy")
        if self._keeps_weights_at_compile(optimizer, self.loss if loss is None else loss, lr, learning_rate):
            self._schedule, self._one_hot = schedule, one_hot
            return self
        self._optimizer = optimizer
        self._lr = float(learning_rate if learning_rate is not None else lr)
        self._schedule = schedule
        if getattr(self, "_loaded", False) and loss is not None and loss != self.loss:
            raise errors.InvalidArgumentError(
                f"compile: this model was loaded with the {self.loss} loss and keeps its weights; it "
                f"cannot switch to {loss!r} — compile() without loss=, or build a new Sequential")
        self._one_hot = one_hot
        if self._h and (loss is None or loss == self.loss):
            return self  # compiled before (or loaded): the weights stay, the optimizer is new, as in Keras
        self.loss = loss or "softmax_cross_entropy"
        self._set_handle(self._create(self.loss))
        return self

    def _create(self, loss):
        """A C model of this description with `loss` (no weights yet)."""
        o = ModelOptions()
        lib.anycl_model_options_init(ctypes.byref(o))
        o.layers, o.activation, o.init = self._layers.encode(), self.activation.encode(), self.init.encode()
        o.dropout, o.loss = self.dropout, loss.encode()
        for i, v in enumerate(self.input_shape):
            o.input_shape[i] = v
        o.outputs = self.outputs
        h = ctypes.c_void_p()
        check(lib.anycl_model_create(ctypes.byref(o), ctypes.byref(h)))
        return h

    # -- safety: what training and compile() may not do to each other (docs/guarantees.md) ----------
    def _refuse_during_fit(self, call):
        if getattr(self, "_fitting", False):
            raise errors.InvalidArgumentError(
                f"{call} was called while this model is training (from a callback, or from another thread) — "
                "it would replace the model fit() is using; call it after fit() returns (a callback can end "
                "training early: set model.stop_training = True)")

    def _has_weights(self):
        flag = ctypes.c_int(0)
        if getattr(self, "_h", None):
            check(lib.anycl_model_has_weights(self._h, ctypes.byref(flag)))
        return bool(flag.value)

    def _keeps_weights_at_compile(self, optimizer, loss, lr, learning_rate):
        """compile() of a trained model keeps its weights, as Keras does: only the optimizer and its
        learning rate change. True when it did so (compile() then has nothing more to do)."""
        if not self._has_weights():
            return False
        if loss != self.loss:
            raise errors.InvalidArgumentError(
                f"compile(loss={loss!r}): this model was trained with loss={self.loss!r}, and anycl cannot change "
                "the loss of a trained model without losing its weights — compile with the same loss, or build a "
                "new model for the other loss")
        self._optimizer = optimizer
        self._lr = float(learning_rate if learning_rate is not None else lr)
        return True

    def _set_handle(self, h):
        if self._h and _made_here(self):
            lib.anycl_model_destroy(self._h)
        self._h, self._pid = h, os.getpid()
        n = ctypes.c_size_t()
        check(lib.anycl_model_input_size(h, ctypes.byref(n)))
        self.input_size = n.value
        check(lib.anycl_model_output_size(h, ctypes.byref(n)))
        self.outputs = n.value

    def _images(self, x, what="x"):
        """x as the model computes on it: (n, C, H, W) images stay, (n, H, W, C) ones are converted
        with data_format="channels_last" and refused otherwise (they would train on scrambled pixels)."""
        shape = getattr(self, "input_shape", None)
        if not isinstance(x, np.ndarray) or x.ndim != 4 or not shape or len(shape) != 3:
            return x
        c, h, w = shape
        if getattr(self, "data_format", "channels_first") == "channels_last":
            if x.shape[1:] != (h, w, c):
                raise errors.ShapeError(f"{what} has shape {x.shape}; with data_format='channels_last' the model "
                                        f"takes (samples, {h}, {w}, {c})")
            return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        if x.shape[1:] == (c, h, w):
            return x
        if x.shape[1:] == (h, w, c):
            raise errors.ShapeError(
                f"{what} has shape {x.shape}: channels last (samples, height, width, channels), as Keras holds "
                f"images, but the model takes channels first (samples, {c}, {h}, {w}) — pass "
                f"{what}.transpose(0, 3, 1, 2), or build the model with data_format='channels_last'")
        raise errors.ShapeError(f"{what} has shape {x.shape}; the model takes images of shape (samples, {c}, {h}, {w})")

    def _handle(self):
        if not self._h:
            raise errors.InvalidArgumentError("compile() the model first (it chooses the optimizer and loss)")
        return self._h

    def __del__(self):
        if getattr(self, "_h", None) and _made_here(self):
            lib.anycl_model_destroy(self._h)
        self._h = None

    # -- copies and pickling: a real copy through the model file's bytes (never two owners of one
    # handle); a model without weights is rebuilt from its description --------------------------------
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("_h", "_pid", "_fitting")}
        state["_compiled"] = bool(getattr(self, "_h", None))
        state["_model_file"] = _model_file_bytes(self._h) if self._has_weights() else None
        return state

    def __setstate__(self, state):
        state = dict(state)
        model_file, compiled = state.pop("_model_file"), state.pop("_compiled")
        self.__dict__.update(state)
        self._h = None
        if model_file is not None:
            self._set_handle(_handle_from_model_file(model_file))
        elif compiled:
            self.compile(self._optimizer, self.loss, self._lr, learning_rate=state.get("_schedule"))
            self._one_hot = state.get("_one_hot", False)  # categorical_crossentropy's one-hot targets

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False,
                layer_range=None):
        """Prints Keras' table of the layers, as Keras does, and returns None: each line goes to
        `print_fn` (default print). Before compile() it describes the layers as compile() will build
        them (as Keras' summary of a model whose input shape is known). line_length, positions,
        expand_nested, show_trainable and layer_range are accepted for Keras' signature; the table's
        layout is anycl's. The text itself: summary_text()."""
        for line in self.summary_text().splitlines():
            (print if print_fn is None else print_fn)(line)

    def summary_text(self):
        """summary()'s table as one string."""
        if getattr(self, "_h", None):
            return text(lib.anycl_model_summary, self._h)
        self._build_description()
        h = self._create(self.loss or "softmax_cross_entropy")
        try:
            return text(lib.anycl_model_summary, h)
        finally:
            lib.anycl_model_destroy(h)

    # -- training -------------------------------------------------------------------------------
    def fit(self, x, y, epochs=1, batch_size=128, validation_split=0.0, validation_data=None, seed=1,
            callbacks=(), checkpoint_dir=None, verbose=0, runtime=None, autotune=True):
        """Trains on x (float32 or uint8, (samples, features...)) and y (integer class indices, or
        float32 targets for mse). Returns a History. Ctrl-C stops after the current step (the model
        keeps the weights reached), then raises KeyboardInterrupt. On a CPU with neither a tuning nor
        a specific tuning database entry, the first fit tunes CLBlast's GEMM at the model's shapes, as
        `anycl train` does (about two minutes, once per device and driver; autotune=False or
        ANYCL_AUTOTUNE=off skips it; anycl.tune)."""
        self._refuse_during_fit("fit()")
        epochs, batch_size, seed, validation_split, checkpoint = _fit_arguments(
            epochs, batch_size, seed, validation_split, validation_data, checkpoint_dir)
        checkpoint, resume = _backup_and_restore(callbacks, checkpoint)
        bar = ProgressBar(verbosity(verbose), epochs)
        h = self._handle()
        rt = _runtime(runtime)
        _tuning.first_use(self, rt, batch_size, verbose, autotune)
        train = _Dataset(x, y, self)
        val = _validation_set(validation_data, self) if validation_data is not None else None
        metric = self.metrics_names[1]
        history = History(metric)
        records = []  # each epoch's figures, as the callback receives them (epochs is no allocation size)
        interrupted = []
        self.stop_training = False
        callbacks = list(callbacks)
        _each(callbacks, "set_model", self)  # Keras' hooks, where a callback has them (anycl.Callback does)
        _each(callbacks, "on_train_begin", {})

        exiting = []  # the interpreter is exiting: stop after the current step (_InFlight.close)

        def wants_stop(result):
            return bool(result) or self.stop_training or bool(interrupted) or bool(exiting)

        def on_epoch(e, _user):
            e = e.contents
            records.append(Epoch.from_buffer_copy(e))
            logs = _epoch_logs(e, metric, rate_in_logs)
            bar.epoch_end(e.epoch, e.seconds, logs, -(-len(train.keep[0]) // batch_size))
            stop = False
            try:
                for c in callbacks:
                    stop = c.on_epoch_end(e.epoch, logs) or stop
            except KeyboardInterrupt:
                interrupted.append(True)
            return 1 if wants_stop(stop) else 0

        def on_progress(p, _user):
            p = p.contents
            logs = {"loss": p.loss, metric: p.accuracy}
            bar.progress(p.epoch, p.step, p.steps, p.seconds, logs)
            stop = False
            try:
                for c in callbacks:
                    stop = c.on_progress(p.epoch, p.step, p.steps, logs) or stop
            except KeyboardInterrupt:
                interrupted.append(True)
            return 1 if wants_stop(stop) else 0

        o = TrainOptions()
        lib.anycl_train_options_init(ctypes.byref(o))
        o.epochs, o.batch, o.seed = epochs, batch_size, seed
        o.optimizer, o.lr = self._optimizer.encode(), self._lr
        o.validation_split = validation_split
        schedule_arrays, rate_in_logs = _schedule_options(o, getattr(self, "_schedule", None), callbacks,
                                                          validation_split > 0 or val is not None)
        o.checkpoint_dir = checkpoint
        o.resume_from = resume
        o.progress_interval_s = 0.25  # how soon a Ctrl-C or a callback's stop is seen
        guard = CallbackGuard()  # a callback's exception stops training and is raised below
        epoch_cb, progress_cb = EPOCH_CALLBACK(guard.wrap(on_epoch)), PROGRESS_CALLBACK(guard.wrap(on_progress))
        o.on_epoch, o.on_progress = epoch_cb, progress_cb

        # Ctrl-C sets a flag that the next callback turns into a stop after the current step; an
        # application's own SIGINT handler is called instead (chained, not replaced).
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, _sigint_during_fit(interrupted, signal.getsignal(signal.SIGINT)))
        done, stopped = ctypes.c_size_t(), ctypes.c_int()
        self._fitting = True  # compile() and a nested fit() are refused until it returns
        try:
            with _in_flight.call(stop=lambda: exiting.append(True)), _backup_words(resume):
                check(lib.anycl_train(h, rt._h, train.h, val.h if val else None, ctypes.byref(o), None, 0,
                                      ctypes.byref(done), ctypes.byref(stopped)))
        finally:
            self._fitting = False
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        guard.reraise()
        del schedule_arrays  # what the schedule fields pointed to, alive until anycl_train returned
        for e in records[: done.value]:  # the epochs completed (a failed one's callback never ran)
            history.epoch.append(e.epoch)
            history.seconds.append(e.seconds)
            for k, v in _epoch_logs(e, metric, rate_in_logs).items():
                history.history.setdefault(k, []).append(v)
        if interrupted:
            raise KeyboardInterrupt("anycl: training stopped after the current step (the model keeps its weights)")
        last = {k: v[-1] for k, v in history.history.items() if v}
        _each(callbacks, "on_train_end", last)  # after fit's lock is released: set_weights works here
        return history

    @property
    def metrics_names(self):
        """Keras' names for what evaluate returns and fit's logs hold: ["loss", "accuracy"] or ["loss",
        "mae"] (regression); the metric under the name compile(metrics=[...]) gave it, where it is one
        of Keras' names for it ("acc", "mean_absolute_error", ...)."""
        loss = "categorical_crossentropy" if getattr(self, "_one_hot", False) else self.loss
        return ["loss", _metric_name(loss, getattr(self, "_metrics", None))]

    def evaluate(self, x, y, batch_size=None, verbose=0, return_dict=False, runtime=None):
        """Keras' evaluate on labelled data, dropout off: [loss, accuracy] for a classifier (integer
        labels), [loss, mae] for regression (float32 targets; the loss is the mean squared error);
        a dict keyed by metrics_names with return_dict=True. `batch_size` and `verbose` are accepted
        for Keras scripts (anycl evaluates in device batches of its own; the result is the same)."""
        data = _Dataset(x, y, self)
        loss, metric = ctypes.c_double(), ctypes.c_double()
        check(lib.anycl_evaluate_metric(self._handle(), _runtime(runtime)._h, data.h, ctypes.byref(loss),
                                        ctypes.byref(metric)))
        values = [loss.value, metric.value]
        return dict(zip(self.metrics_names, values)) if return_dict else values

    def predict(self, x, batch_size=None, verbose=0, runtime=None):
        """Class probabilities (softmax; the sigmoid of each output for binary_crossentropy) or predicted
        values (mse, mae, huber), shape (samples, outputs).
        `batch_size` and `verbose` are Keras' (anycl runs device batches of its own; the result is the
        same for every batch size)."""
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1):
            raise errors.InvalidArgumentError(
                f"predict: batch_size must be a positive integer or None, got {batch_size!r}")
        h = self._handle()
        x = _features(self._images(x), self.input_size)
        _finite(x, "x")
        if x.dtype == np.uint8:
            x = x.astype(np.float32) / np.float32(255)
        out = np.empty((x.shape[0], self.outputs), dtype=np.float32)
        _predict_in_chunks(h, _runtime(runtime), x, out)
        return out

    # -- weights --------------------------------------------------------------------------------
    def _weight_shapes(self):
        h = self._handle()
        n = ctypes.c_size_t()
        check(lib.anycl_model_weight_count(h, ctypes.byref(n)))
        shapes = []
        for i in range(n.value):
            ndim, dims = ctypes.c_size_t(), (ctypes.c_size_t * 4)()
            check(lib.anycl_model_weight_shape(h, i, ctypes.byref(ndim), dims))
            shapes.append(tuple(dims[: ndim.value]))
        return shapes

    def get_weights(self):
        """Keras' get_weights: a list of float32 arrays, per Dense layer its kernel (in, out) and bias
        (out,), per Conv2D its kernel (kh, kw, in, out) and bias (out,), per BatchNormalization its
        gamma, beta, moving_mean and moving_variance (channels,). Needs weights (fit, load or
        set_weights first)."""
        out = []
        for i, shape in enumerate(self._weight_shapes()):
            a = np.empty(shape, dtype=np.float32)
            check(lib.anycl_model_get_weights(self._h, i, a.ctypes.data, a.size))
            out.append(a)
        return out

    def set_weights(self, weights):
        """Keras' set_weights: arrays in get_weights()' order and shapes (e.g. from a Keras model, or
        a PyTorch one with its Linear weight transposed). fit() then trains on from them."""
        shapes = self._weight_shapes()
        weights = list(weights)
        if len(weights) != len(shapes):
            raise errors.ShapeError(f"set_weights: the model has {len(shapes)} weight arrays, got {len(weights)}")
        arrays = []
        for i, (w, shape) in enumerate(zip(weights, shapes)):
            w = np.asarray(w)
            if w.shape != shape:
                raise errors.ShapeError(f"set_weights: array {i} has shape {w.shape}, the model's is {shape}")
            arrays.append(np.ascontiguousarray(w, dtype=np.float32))
        for i, a in enumerate(arrays):
            check(lib.anycl_model_set_weights(self._h, i, a.ctypes.data, a.size))

    # -- files ----------------------------------------------------------------------------------
    def save(self, path):
        """Writes the model file (.anycl) atomically."""
        check(lib.anycl_model_save(self._handle(), _path(path, "path")))

    def export_onnx(self, path):
        """Writes the model as ONNX (opset 13; softmax output for classifiers)."""
        check(lib.anycl_model_export_onnx(self._handle(), _path(path, "path")))


def _epoch_logs(e, metric, rate=False):
    """One anycl_epoch as Keras' logs: loss and the metric, then val_loss and val_<metric>; with `rate`
    (a schedule or ReduceLROnPlateau), learning_rate."""
    logs = {"loss": e.loss, metric: e.accuracy}
    if e.has_validation:
        logs.update({"val_loss": e.val_loss, "val_" + metric: e.val_accuracy})
    if rate:
        logs["learning_rate"] = e.learning_rate
    return logs


def _optimizer_settings(optimizer, lr, learning_rate):
    """compile()'s optimizer (a name or an anycl.optimizers object) and rate (a number or a schedule) as
    the C API takes them: (name, lr, schedule or None)."""
    from .optimizers import Optimizer
    from .optimizers.schedules import LearningRateSchedule

    if isinstance(optimizer, Optimizer):
        if learning_rate is None:
            learning_rate = optimizer.learning_rate
        optimizer = optimizer.name
    elif not isinstance(optimizer, str):
        raise errors.InvalidArgumentError(
            f"optimizer must be a name (sgd, momentum, nesterov, rmsprop, adam, adamw) or an anycl.optimizers "
            f"object (SGD, RMSprop, Adam, AdamW), got {optimizer!r}")
    rate = learning_rate if learning_rate is not None else lr
    if isinstance(rate, LearningRateSchedule):
        return optimizer, float(rate._initial()), rate
    return optimizer, float(rate), None


def _schedule_options(options, schedule, callbacks, validating):
    """The schedule fields of anycl_train_options, from compile()'s schedule or a ReduceLROnPlateau
    callback. Returns what they point to (keep it until anycl_train returns) and whether the logs carry
    learning_rate."""
    from .callbacks import ReduceLROnPlateau

    plateaus = [c for c in callbacks if isinstance(c, ReduceLROnPlateau)]
    if len(plateaus) > 1:
        raise errors.InvalidArgumentError("fit: more than one ReduceLROnPlateau callback — pass one")
    if plateaus and schedule is not None:
        raise errors.InvalidArgumentError(
            "fit: ReduceLROnPlateau cannot change the rate of an optimizer compiled with a learning-rate schedule "
            "(as in Keras) — use the schedule or the callback")
    if plateaus:
        if plateaus[0].monitor == "val_loss" and not validating:
            warnings.warn("Learning rate reduction is conditioned on metric `val_loss` which is not available "
                          "(pass validation_split or validation_data to fit, or monitor='loss'): the rate stays "
                          "constant", stacklevel=3)
            return None, True
        plateaus[0]._fill(options)
        return None, True
    if schedule is not None:
        return schedule._fill(options), True
    return None, False


def load_model(path):
    """A model read from a model file (`model.save` or `anycl train --save`), ready to predict,
    evaluate or train on (compile() again to change the optimizer)."""
    h = ctypes.c_void_p()
    check(lib.anycl_model_load(_path(path, "path"), ctypes.byref(h)))
    model = Sequential.__new__(Sequential)
    model.input_shape, model.loss, model.stop_training, model._h = None, None, False, None
    model._optimizer, model._lr, model._loaded = "rmsprop", 0.0, True
    model.data_format, model.name = "channels_first", None
    model._set_handle(h)
    shape = (ctypes.c_size_t * 3)()
    check(lib.anycl_model_input_shape(h, shape))
    model.input_shape = tuple(v for v in shape if v)  # (features,) or (C, H, W): image arrays are checked
    model.loss = text(lib.anycl_model_loss, h)
    return model
