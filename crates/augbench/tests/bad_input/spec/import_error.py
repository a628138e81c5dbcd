import not_a_module_anyone_has

LIBRARY = "pillow"
TRANSFORMS = []
