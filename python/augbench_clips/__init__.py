"""augbench's video decoder for the clip cache: reads each video once with OpenCV, samples
``clip_length`` frames with the same rule as the Rust coordinator, writes them as PNG frames.
"""
