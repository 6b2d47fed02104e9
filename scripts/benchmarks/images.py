"""images: real photographs for the image-classification preprocessing (no model).

scikit-learn bundles two photographs (china.jpg and flower.jpg, 427x640 RGB, CC-licensed); they
are decoded with Pillow and written into data/images/ (or --out DIR):
  photos.npy           uint8 [2, 427, 640, 3]: both photographs, HWC
  photos_portrait.npy  uint8 [2, 640, 427, 3]: the same, transposed (portrait orientation)
  crops.npy            uint8 [64, 300, 400, 3]: crops at seeded random places, half of them
                       mirrored; the resnet50 benchmark's images
  reference.json       what was written, with sha256s
"""

import argparse

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
from sklearn.datasets import load_sample_images

CROPS = 64
CROP_H, CROP_W = 300, 400


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("images"), help="output folder (default: data/images)")
    args = ap.parse_args()

    bunch = load_sample_images()
    photos = np.stack([np.asarray(image, dtype=np.uint8) for image in bunch.images])
    assert photos.shape == (2, 427, 640, 3), photos.shape
    rng = np.random.default_rng(0)
    crops = np.empty((CROPS, CROP_H, CROP_W, 3), np.uint8)
    for i in range(CROPS):
        photo = photos[i % 2]
        top = int(rng.integers(0, photo.shape[0] - CROP_H + 1))
        left = int(rng.integers(0, photo.shape[1] - CROP_W + 1))
        crop = photo[top : top + CROP_H, left : left + CROP_W]
        crops[i] = crop[:, ::-1] if i % 4 >= 2 else crop

    with common.Staging(args.out) as tmp:
        files = {
            "photos.npy": photos,
            "photos_portrait.npy": np.ascontiguousarray(photos.transpose(0, 2, 1, 3)),
            "crops.npy": crops,
        }
        for name, array in files.items():
            np.save(tmp / name, array)
        common.write_json(
            tmp / "reference.json",
            {
                "source": "sklearn.datasets.load_sample_images (china.jpg, flower.jpg)",
                "files": {name: {"shape": list(a.shape), "sha256": common.sha256(tmp / name)} for name, a in files.items()},
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
    common.log(f"images: {len(photos)} photographs, {CROPS} crops of {CROP_H}x{CROP_W}")


if __name__ == "__main__":
    main()
