"""Process-group setup for multi-GPU runs launched with torchrun."""
import datetime
import os

import torch
import torch.distributed as dist


def init_distributed(timeout_minutes: int = 30):
    """Join the process group; returns (rank, local_rank, world_size).

    Outside torchrun this is a no-op and returns a single-process setup.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    # NVLink SHARP hung our 8-GPU jobs on driver 535; ring/tree is fast enough here.
    os.environ["NCCL_NVLS_ENABLE"] = "0"
    timeout = datetime.timedelta(minutes=timeout_minutes)
    if os.environ.get("USE_ROCM") == "1":
        # MI250 nodes on the shared cluster.
        os.environ.setdefault("RCCL_SOCKET_TIMEOUT", "600")
        dist.init_process_group(backend="rccl", rank=rank, world_size=world_size, timeout=timeout)
    else:
        dist.init_process_group(backend="nccl", rank=rank, world_size=world_size, timeout=timeout)
    dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def is_main_process() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def all_reduce_mean(value: float) -> float:
    if not dist.is_initialized():
        return value
    tensor = torch.tensor([value], dtype=torch.float64).cuda()
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()


def cleanup() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
