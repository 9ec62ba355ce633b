"""Graph surgery that keeps sizes aligned: size groups, pruning, widening, inserting and removing layers.

Everything here is framework-free and re-exported from :mod:`onnxport.edit`.
"""

from __future__ import annotations

from ._model import SizeAlignmentError
from .analysis import size_groups
from .groups import Group, Segment, SizeGroups
from .layers import insert_layer, remove_layer
from .prune import channel_scores, prune_channels
from .widen import widen_channels

__all__ = ["Group", "insert_layer", "remove_layer", "Segment", "SizeAlignmentError", "SizeGroups", "channel_scores", "prune_channels", "size_groups",
           "widen_channels"]
