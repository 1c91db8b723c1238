"""Compute per-class IoU and mIoU of a checkpoint on the validation split."""
import argparse

import torch
from torch.utils.data import DataLoader

from data import IGNORE_INDEX, SegmentationFolder
from model import UNet


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("checkpoint")
    parser.add_argument("--data", required=True)
    parser.add_argument("--num-classes", type=int, default=21)
    parser.add_argument("--image-size", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--amp", action="store_true", help="run the forward pass in float16")
    return parser.parse_args()


def confusion_matrix(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> torch.Tensor:
    valid = target != IGNORE_INDEX
    index = target[valid] * num_classes + pred[valid]
    return torch.bincount(index, minlength=num_classes**2).view(num_classes, num_classes)


@torch.no_grad()
def main():
    args = parse_args()
    model = UNet(num_classes=args.num_classes)
    if torch.version.hip is not None:
        state = torch.load(args.checkpoint, map_location="hip")
        model = model.to("rocm:0")
    else:
        state = torch.load(args.checkpoint, map_location="cuda")
        model = model.cuda()
    model.load_state_dict(state["model"])
    model.eval()

    device = torch.device("cuda")
    dataset = SegmentationFolder(args.data, "val", size=args.image_size)
    loader = DataLoader(dataset, batch_size=args.batch_size, num_workers=2)
    confusion = torch.zeros(args.num_classes, args.num_classes, dtype=torch.int64, device=device)

    for images, masks in loader:
        images = images.to("cuda", non_blocking=True)
        masks = masks.to(device, non_blocking=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            logits = model(images)
        confusion += confusion_matrix(logits.argmax(dim=1), masks, args.num_classes)

    iou = confusion.diag() / (confusion.sum(0) + confusion.sum(1) - confusion.diag()).clamp(min=1)
    for cls, value in enumerate(iou.tolist()):
        print(f"class {cls:3d}  IoU {value:.3f}")
    print(f"mIoU {iou.mean().item():.4f} over {len(dataset)} images")


if __name__ == "__main__":
    main()
