"""augbench's video decoding in Python: ``decode`` reads each video once with OpenCV for the clip
cache (same sampling rule as the Rust coordinator, frames written as PNG); ``bench`` and
``decoders`` serve the decode scenario, where OpenCV, PyAV, decord and torchvision (torchcodec)
each decode the same sampled frames of the same files.
"""
