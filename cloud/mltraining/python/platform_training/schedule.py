"""How long to train and when to stop, chosen from the dataset's size.

Small datasets were the trap: 26 training images at batch 32 is one optimizer step per epoch, so 20
epochs trained 20 steps and the model answered one label for everything. Defaults here are counted in
optimizer steps instead, and training keeps the checkpoint that validated best.
"""
import copy
import math

from . import protocol

MIN_BATCH, MAX_BATCH = 8, 32
MIN_EPOCHS, MAX_EPOCHS = 20, 300


def batch_size(options, train_count):
    """The given batch size, or about an eighth of the training images, between 8 and 32."""
    if options.batch_size:
        return options.batch_size
    return max(MIN_BATCH, min(MAX_BATCH, 2 ** int(math.log2(max(1, train_count // 8)))))


def epochs(options, train_count, batch, min_steps):
    """The given epochs, or enough epochs for `min_steps` optimizer steps (between 20 and 300)."""
    if options.epochs:
        return options.epochs
    per_epoch = math.ceil(train_count / batch)
    return max(MIN_EPOCHS, min(MAX_EPOCHS, math.ceil(min_steps / per_epoch)))


def patience(options, total_epochs):
    """Epochs without a better validation result before stopping: the given one (0 turns early
    stopping off), or a quarter of the epochs, at least 10."""
    if options.early_stopping_patience is not None:
        return options.early_stopping_patience
    return max(10, total_epochs // 4)


class BestCheckpoint:
    """Keeps the weights of the best validation so far: the highest metric, and among equal metrics the
    lowest validation loss by at least 2 % (tiny validation sets saturate the metric long before training
    is done)."""

    def __init__(self, model, metric_name, patience_evaluations):
        self.model = model
        self.metric_name = metric_name
        self.patience = patience_evaluations
        self.metric, self.loss, self.metrics, self.epoch = -math.inf, math.inf, {}, 0
        self.state = None
        self.since_better = 0

    def offer(self, epoch, metric, loss, metrics):
        # A loss-only gain must be worth 2 %: small ones go on forever once the metric is saturated, and
        # would keep a finished model training until the last epoch.
        better = metric > self.metric + 1e-9 or (metric >= self.metric - 1e-9 and loss < self.loss * 0.98)
        if better:
            self.metric, self.loss, self.metrics, self.epoch = metric, loss, dict(metrics), epoch
            self.state = copy.deepcopy(self.model.state_dict())
            self.since_better = 0
        else:
            self.since_better += 1
        return better

    def exhausted(self):
        return self.patience > 0 and self.since_better >= self.patience

    def restore(self):
        if self.state is not None:
            self.model.load_state_dict(self.state)
        return self.metrics


def report_chance(metrics, metric_name, chance, chance_how):
    """Adds chance_<metric> and better_than_chance to the metrics, and says it plainly in the log when
    the model is no better than a constant answer."""
    value = metrics[metric_name]
    metrics[f"chance_{metric_name}"] = chance
    better = value > chance + 1e-9
    metrics["better_than_chance"] = 1.0 if better else 0.0
    if not better:
        protocol.log(f"the model is no better than chance: validation {metric_name} {value:.3f} is not above "
                     f"{chance:.3f}, what {chance_how} scores. It has not learned to tell the labels apart; add "
                     f"images (at least tens per label), check the labels, or train longer", "warn")
    return metrics
