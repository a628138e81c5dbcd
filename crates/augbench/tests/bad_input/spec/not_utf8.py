LIBRARY = "pillow"  # café
TRANSFORMS = []
