"""Train tinyseg on an image/mask folder, on one GPU or on several with torchrun."""
import argparse
import logging
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset

from data import IGNORE_INDEX, SegmentationFolder
from distributed import all_reduce_mean, cleanup, init_distributed, is_main_process
from model import UNet, count_parameters
from ops import has_fused_kernels

logger = logging.getLogger("tinyseg.train")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, help="dataset root with train/ and val/")
    parser.add_argument("--out", default="checkpoints")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--num-classes", type=int, default=21)
    parser.add_argument("--image-size", type=int, default=256)
    parser.add_argument("--log-every", type=int, default=50)
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    rank, local_rank, world_size = init_distributed()

    device = "cuda" if torch.version.cuda is not None else "cpu"
    if device == "cuda":
        torch.cuda.set_device(local_rank)
        if float(torch.version.cuda) >= 11.0:
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
    logger.info("torch %s built with CUDA %s", torch.__version__, torch.version.cuda)

    dataset = SegmentationFolder(args.data, "train", size=args.image_size, augment=True)
    if world_size > 1:
        dataset = Subset(dataset, range(rank, len(dataset), world_size))
    loader = DataLoader(
        dataset, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True, drop_last=True
    )

    model = UNet(num_classes=args.num_classes).to(device)
    if is_main_process():
        millions = count_parameters(model) / 1e6
        logger.info("UNet: %.1fM parameters, fused kernels: %s", millions, has_fused_kernels())
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank])

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * len(loader)
    )
    scaler = GradScaler()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    for epoch in range(args.epochs):
        model.train()
        start, running = time.time(), 0.0
        for step, (images, masks) in enumerate(loader):
            images = images.to(device, non_blocking=True)
            masks = masks.to(device, non_blocking=True)

            optimizer.zero_grad(set_to_none=True)
            with autocast():
                logits = model(images)
                loss = F.cross_entropy(logits, masks, ignore_index=IGNORE_INDEX)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            running += loss.item()
            if step % args.log_every == 0 and is_main_process():
                logger.info("epoch %d step %d/%d loss %.4f", epoch, step, len(loader), loss.item())

        epoch_loss = all_reduce_mean(running / len(loader))
        if is_main_process():
            logger.info("epoch %d done in %.0fs, mean loss %.4f", epoch, time.time() - start, epoch_loss)
            state = model.module.state_dict() if world_size > 1 else model.state_dict()
            torch.save({"model": state, "epoch": epoch, "args": vars(args)}, out_dir / "last.pt")

    cleanup()


if __name__ == "__main__":
    main()
