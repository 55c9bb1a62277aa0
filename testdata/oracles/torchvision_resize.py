"""Oracle for resize.TorchVision: torchvision's tensor resize (BICUBIC, antialias=True) on uint8
images, the call qwen-vl-utils' fetch_video makes. Run by resize/torchvision_test.go with Debian's
python3-torch / python3-torchvision.

usage: torchvision_resize.py OUTDIR SW,SH,DW,DH [...]
For each case it writes OUTDIR/<i>.in (SH×SW×3 uint8: a seeded mix of noise, gradients and edges)
and OUTDIR/<i>.out (DH×DW×3 uint8, the resized tensor's values, which are integers), and prints one
JSON line with the torch and torchvision versions."""

import json
import sys

import numpy as np
import torch
import torchvision
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F


def image(i, w, h):
    rng = np.random.default_rng(1000 + i)
    yy, xx = np.mgrid[0:h, 0:w]
    a = np.empty((h, w, 3), dtype=np.float64)
    a[..., 0] = 255.0 * xx / max(w - 1, 1)
    a[..., 1] = 255.0 * ((xx // 7 + yy // 5) % 2)
    a[..., 2] = 127.5 + 127.5 * np.sin(xx * 0.37 + yy * 0.21)
    noisy = rng.random((h, w)) < 0.5
    a[noisy] = rng.integers(0, 256, (int(noisy.sum()), 3))
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


def main():
    out = sys.argv[1]
    for i, spec in enumerate(sys.argv[2:]):
        sw, sh, dw, dh = (int(v) for v in spec.split(","))
        a = image(i, sw, sh)
        t = torch.from_numpy(a).permute(2, 0, 1).unsqueeze(0)
        r = F.resize(t, [dh, dw], interpolation=InterpolationMode.BICUBIC, antialias=True).float()
        if not bool(torch.all(r == r.round())) or float(r.min()) < 0 or float(r.max()) > 255:
            raise SystemExit("resize output is not integer-valued uint8 range")
        open("%s/%d.in" % (out, i), "wb").write(a.tobytes())
        open("%s/%d.out" % (out, i), "wb").write(r[0].permute(1, 2, 0).to(torch.uint8).contiguous().numpy().tobytes())
    print(json.dumps({"torch": torch.__version__, "torchvision": torchvision.__version__, "cases": len(sys.argv) - 2}))


if __name__ == "__main__":
    main()
