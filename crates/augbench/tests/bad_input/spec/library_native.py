# LIBRARY must name a Python library
LIBRARY = "image"
TRANSFORMS = []
