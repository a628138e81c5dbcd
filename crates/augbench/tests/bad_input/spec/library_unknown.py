LIBRARY = "imgaug"
TRANSFORMS = []
