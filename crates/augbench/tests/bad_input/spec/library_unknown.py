LIBRARY = "opencv"
TRANSFORMS = []
