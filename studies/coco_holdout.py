"""A COCO instances file in the public layout, built with the public toolkit (pycocotools), over a
folder of images: the hold-out for augbench's COCO reader and target rows (docs/targets.md,
"A COCO hold-out"). Nothing here comes from augbench's own annotated dataset: other shapes,
COCO's own category ids (non-contiguous), crowd regions as compressed RLE strings encoded by
pycocotools, person keypoints in COCO's 17 slots with visibility 0, 1 and 2, images without any
annotation, and the fields a real file carries (info, licenses, coco_url, date_captured).

Usage (pycocotools, numpy and Pillow in the Python that runs it):
    python studies/coco_holdout.py --images DIR --out DIR/instances.json [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random

import numpy as np
from PIL import Image, ImageDraw
from pycocotools import mask as coco_mask

# COCO 2017's ids for these: person, car, dog, bottle, chair (gaps on purpose).
CATEGORIES = [(1, "person", "person"), (3, "car", "vehicle"), (18, "dog", "animal"),
              (44, "bottle", "kitchen"), (62, "chair", "furniture")]
KEYPOINTS = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
             "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
             "right_knee", "left_ankle", "right_ankle"]
SKELETON = [[16, 14], [14, 12], [17, 15], [15, 13], [12, 13], [6, 12], [7, 13], [6, 7], [6, 8], [7, 9],
            [8, 10], [9, 11], [2, 3], [1, 2], [1, 3], [2, 4], [3, 5], [4, 6], [5, 7]]


def star_polygon(rng: random.Random, w: int, h: int) -> list[float]:
    """A star-shaped polygon of 5-12 vertices around a random centre, inside the image."""
    cx, cy = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h
    radius = rng.uniform(0.05, 0.2) * min(w, h)
    angles = sorted(rng.uniform(0, 2 * math.pi) for _ in range(rng.randint(5, 12)))
    points = []
    for a in angles:
        r = radius * rng.uniform(0.5, 1.0)
        points += [min(max(cx + r * math.cos(a), 0.0), w - 1.0), min(max(cy + r * math.sin(a), 0.0), h - 1.0)]
    return [round(v, 2) for v in points]


def crowd_rle(rng: random.Random, w: int, h: int) -> tuple[dict, dict]:
    """An ellipse region as COCO's compressed RLE (pycocotools' own encoder): as the file holds
    it (a string), and as pycocotools reads it (bytes)."""
    canvas = Image.new("L", (w, h), 0)
    x0, y0 = rng.uniform(0, 0.6) * w, rng.uniform(0, 0.6) * h
    x1, y1 = x0 + rng.uniform(0.1, 0.35) * w, y0 + rng.uniform(0.1, 0.35) * h
    ImageDraw.Draw(canvas).ellipse([x0, y0, min(x1, w - 1), min(y1, h - 1)], fill=1)
    rle = coco_mask.encode(np.asfortranarray(np.array(canvas, dtype=np.uint8)))
    return {"size": rle["size"], "counts": rle["counts"].decode("ascii")}, rle


def person_keypoints(rng: random.Random, bbox: list[float]) -> tuple[list[float], int]:
    """COCO's 17 slots: a point inside the box with visibility 1 or 2, or (0, 0, 0) unlabelled."""
    x, y, bw, bh = bbox
    out, labelled = [], 0
    for _ in KEYPOINTS:
        if rng.random() < 0.3:
            out += [0, 0, 0]
            continue
        out += [round(x + rng.random() * bw, 2), round(y + rng.random() * bh, 2), rng.choice([1, 2])]
        labelled += 1
    return out, labelled


def annotations_of(rng: random.Random, image_id: int, w: int, h: int, next_id: int) -> list[dict]:
    anns = []
    for k in range(rng.randint(1, 6)):
        cat = rng.choice(CATEGORIES)[0]
        crowd = rng.random() < 0.2
        if crowd:
            seg, rle = crowd_rle(rng, w, h)
        else:
            seg = [star_polygon(rng, w, h)]
            rle = coco_mask.merge(coco_mask.frPyObjects(seg, h, w))
        bbox = [round(float(v), 2) for v in coco_mask.toBbox(rle)]
        ann = {"id": next_id + k, "image_id": image_id, "category_id": cat, "segmentation": seg,
               "area": float(coco_mask.area(rle)), "bbox": bbox, "iscrowd": int(crowd)}
        if cat == 1 and not crowd:
            ann["keypoints"], ann["num_keypoints"] = person_keypoints(rng, bbox)
        anns.append(ann)
    return anns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--unannotated", type=float, default=0.2, help="share of images left without annotations")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    files = sorted(f for f in os.listdir(args.images) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    images, anns = [], []
    for i, name in enumerate(files):
        with Image.open(os.path.join(args.images, name)) as im:
            w, h = im.size
        image_id = 100_000 + 7 * i
        images.append({"id": image_id, "file_name": name, "width": w, "height": h, "license": 4,
                       "coco_url": f"http://images.example/{name}", "date_captured": "2026-12-07 00:00:00"})
        if rng.random() >= args.unannotated:
            anns += annotations_of(rng, image_id, w, h, 900_000 + 10 * i)
    doc = {"info": {"description": "augbench COCO hold-out", "version": "1.0", "year": 2026},
           "licenses": [{"id": 4, "name": "Attribution License", "url": "http://creativecommons.org/licenses/by/2.0/"}],
           "images": images, "annotations": anns,
           "categories": [{"id": c, "name": n, "supercategory": s, **({"keypoints": KEYPOINTS, "skeleton": SKELETON} if c == 1 else {})}
                          for c, n, s in CATEGORIES]}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    crowd = sum(a["iscrowd"] for a in anns)
    people = sum("keypoints" in a for a in anns)
    annotated = len({a["image_id"] for a in anns})
    print(f"{args.out}: {len(images)} images ({annotated} annotated), {len(anns)} annotations "
          f"({crowd} crowd RLE, {people} with keypoints)")


if __name__ == "__main__":
    main()
