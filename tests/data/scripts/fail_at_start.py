"""A script that fails before its first step: its data is not where it says."""
import torch  # noqa: F401


def load(path):
    raise FileNotFoundError("no training data at %s" % path)


load("/data/imagenet/train")
