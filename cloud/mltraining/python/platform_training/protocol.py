"""The line protocol the training service reads from a trainer's stdout.

Every line is one JSON object with an "event" key: "log" (level, message), "progress" (epoch,
total_epochs, loss, metric_name, metric, images_per_second, elapsed_seconds) or "metrics" (the final
validation metrics). Anything else on stdout is kept as an info log line by the service.
"""
import json
import os
import sys
import threading
import time


def emit(event, **fields):
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def log(message, level="info"):
    emit("log", level=level, message=message)


def progress(epoch, total_epochs, loss, metric_name, metric, images_per_second, elapsed_seconds, epoch_fraction=None):
    emit("progress", epoch=epoch, total_epochs=total_epochs, loss=float(loss), metric_name=metric_name,
         metric=float(metric), images_per_second=float(images_per_second),
         elapsed_seconds=float(elapsed_seconds), epoch_fraction=float(epoch if epoch_fraction is None else epoch_fraction))


def exit_with_parent():
    """The service starts trainers in their own process group, so a crashed service would leave them
    running; this watchdog ends the trainer once its parent is gone."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()
