"""Image/mask folder dataset: <root>/<split>/images/*.jpg with masks in <root>/<split>/masks/*.png."""
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
IGNORE_INDEX = 255


class SegmentationFolder(Dataset):
    def __init__(self, root: str, split: str = "train", size: int = 256, augment: bool = False):
        self.image_dir = Path(root) / split / "images"
        self.mask_dir = Path(root) / split / "masks"
        self.images = sorted(self.image_dir.glob("*.jpg"))
        if not self.images:
            raise FileNotFoundError(f"no images found in {self.image_dir}")
        self.size = size
        self.augment = augment

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int):
        path = self.images[index]
        image = Image.open(path).convert("RGB").resize((self.size, self.size), Image.BILINEAR)
        mask = Image.open(self.mask_dir / f"{path.stem}.png").resize(
            (self.size, self.size), Image.NEAREST
        )

        image = torch.from_numpy(np.asarray(image, dtype=np.float32) / 255.0).permute(2, 0, 1)
        image = (image - MEAN) / STD
        mask = torch.from_numpy(np.asarray(mask, dtype=np.int64))

        if self.augment and torch.rand(()) < 0.5:
            image = image.flip(-1)
            mask = mask.flip(-1)
        return image.contiguous(), mask.contiguous()
