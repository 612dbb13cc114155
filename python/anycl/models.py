"""Keras' `keras.models` names: `from anycl.models import Sequential, load_model`."""

from .model import Sequential, load_model

__all__ = ["Sequential", "load_model"]
