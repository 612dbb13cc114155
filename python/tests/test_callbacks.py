# Callbacks see the model as it is (docs/guarantees.md, "Callbacks"): inside on_epoch_end, save,
# predict and evaluate see the weights of that epoch's end; compile() and a nested fit() there are
# refused with a clear error (no crash); compile() after training keeps the weights, as in Keras.
import numpy as np
import pytest

import anycl

from test_threads import circle


def model_trained(runtime, epochs=2):
    x, y = circle()
    model = anycl.Sequential("32,32", input_shape=(2,), outputs=2, dropout=0.0)
    model.compile(optimizer="adam", lr=0.01)
    if epochs:
        model.fit(x, y, epochs=epochs, batch_size=32, runtime=runtime)
    return model


class Recorder(anycl.Callback):
    """Saves, predicts and evaluates the model at every epoch end, as ModelCheckpoint would."""

    def __init__(self, model, runtime, folder):
        self.model, self.runtime, self.folder = model, runtime, folder
        self.paths, self.predictions, self.evaluations = [], [], []

    def on_epoch_end(self, epoch, logs):
        x, y = circle()
        path = str(self.folder / f"epoch{epoch}.anycl")
        self.model.save(path)
        self.paths.append(path)
        self.predictions.append(self.model.predict(x[:50], runtime=self.runtime))
        self.evaluations.append(self.model.evaluate(x, y, runtime=self.runtime))


@pytest.mark.parametrize("first_epochs", [0, 2])  # the first fit (no weights before it) and a later one
def test_save_predict_and_evaluate_in_on_epoch_end_see_that_epochs_weights(runtime, tmp_path, first_epochs):
    x, y = circle()
    model = model_trained(runtime, first_epochs)
    before = model.predict(x[:50], runtime=runtime) if first_epochs else None
    recorder = Recorder(model, runtime, tmp_path)
    model.fit(x, y, epochs=3, batch_size=32, callbacks=[recorder], runtime=runtime)
    assert len(recorder.paths) == 3
    for i, path in enumerate(recorder.paths):
        saved = anycl.load_model(path).predict(x[:50], runtime=runtime)
        assert np.array_equal(saved, recorder.predictions[i]), f"epoch {i + 1}'s file and predictions differ"
        if before is not None:
            assert not np.array_equal(saved, before), f"epoch {i + 1}'s file holds the weights from before fit"
    assert not np.array_equal(recorder.predictions[0], recorder.predictions[2])
    assert np.array_equal(recorder.predictions[-1], model.predict(x[:50], runtime=runtime))
    assert recorder.evaluations[-1] == pytest.approx(model.evaluate(x, y, runtime=runtime))


class Meddler(anycl.Callback):
    """Calls what cannot work during training, and keeps what it raised."""

    def __init__(self, model, call):
        self.model, self.call, self.raised = model, call, []

    def on_epoch_end(self, epoch, logs):
        x, y = circle()
        try:
            if self.call == "compile":
                self.model.compile(optimizer="sgd")
            else:
                self.model.fit(x, y, epochs=1)
        except anycl.InvalidArgumentError as e:
            self.raised.append(str(e))


@pytest.mark.parametrize("call", ["compile", "fit"])
def test_compile_or_fit_inside_fit_is_refused_and_training_goes_on(runtime, call):
    x, y = circle()
    model = model_trained(runtime, 0)
    meddler = Meddler(model, call)
    history = model.fit(x, y, epochs=2, batch_size=32, callbacks=[meddler], runtime=runtime)
    assert len(meddler.raised) == 2 and "while this model is training" in meddler.raised[0], meddler.raised
    assert len(history.history["loss"]) == 2
    model.predict(x[:4], runtime=runtime)  # the model is intact


def test_compile_after_fit_keeps_the_weights(runtime):
    x, y = circle()
    model = model_trained(runtime, 3)
    trained = model.predict(x, runtime=runtime)
    model.compile(optimizer="sgd", lr=0.001)
    assert np.array_equal(model.predict(x, runtime=runtime), trained)
    fresh = model_trained(runtime, 0)
    fresh.compile(optimizer="sgd", lr=0.001)
    continued = model.fit(x, y, epochs=1, batch_size=32, runtime=runtime).history["loss"][0]
    from_scratch = fresh.fit(x, y, epochs=1, batch_size=32, runtime=runtime).history["loss"][0]
    assert continued < from_scratch


def test_compile_with_another_loss_after_fit_is_refused(runtime):
    model = model_trained(runtime, 1)
    with pytest.raises(anycl.InvalidArgumentError, match="loss"):
        model.compile(loss="mse")
