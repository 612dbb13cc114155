"""fit()'s side of callbacks.BackupAndRestore: which folder the library checkpoints into and resumes
from, and its refusals in the callback's words."""

import contextlib
import os

from . import errors
from ._arguments import _path
from .callbacks import BackupAndRestore


def _backup_and_restore(callbacks, checkpoint):
    """(the checkpoint folder for anycl_train, the folder to resume from or None) for fit's callbacks
    and its checkpoint_dir (encoded, or None)."""
    backups = [c for c in callbacks if isinstance(c, BackupAndRestore)]
    if not backups:
        return checkpoint, None
    if len(backups) > 1:
        raise errors.InvalidArgumentError("fit: more than one BackupAndRestore callback — pass one")
    backup = backups[0]
    folder = _path(backup.backup_dir, "BackupAndRestore backup_dir")
    if checkpoint is not None and os.path.abspath(checkpoint) != os.path.abspath(folder):
        raise errors.InvalidArgumentError(
            f"fit: checkpoint_dir {os.fsdecode(checkpoint)!r} and BackupAndRestore's backup_dir "
            f"{backup.backup_dir!r} differ — one folder holds the run's checkpoint: drop checkpoint_dir")
    backup.restored = os.path.isfile(backup.backup_path)
    return folder, folder if backup.restored else None


@contextlib.contextmanager
def _backup_words(resume):
    """A refused resume said in BackupAndRestore's words rather than the C API's."""
    try:
        yield
    except errors.Error as e:
        text = str(e)
        prefix = "anycl_train: options.resume_from "
        if resume is None or not text.startswith(prefix):
            raise
        rest = text[len(prefix):]
        raise type(e)(f"BackupAndRestore: the backup in {rest} — continue with the run that wrote it, or delete "
                      f"{os.fsdecode(os.path.join(resume, b'checkpoint.anyclckpt'))} to start afresh") from None
