LIBRARY = "pillow"


def __call__(transform, image):
    return transform(image)


TRANSFORMS = "Median5"
