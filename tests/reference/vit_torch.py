#!/usr/bin/python3
"""PyTorch peer of attnlab's ViT trainer (attnlab::train::Vit<double>, AdamW, clip_gradient_norm): writes the
binary fixture that tests/property/test_vit_parity.cpp compares the C++ model against, tensor by tensor.

  /usr/bin/python3 tests/reference/vit_torch.py [--out tests/reference/fixtures/vit_parity.bin]

Everything runs in float64 on the CPU with one thread and a fixed seed, so the fixture is byte-for-byte
reproducible with the same PyTorch build. The model is written here from torch.nn primitives (no timm), as
src/train/vit.cpp defines it:

  patches (ph × pw, Conv2d with stride = kernel) → prepend cls_token → + pos_embed (tokens = patches + 1);
  each block: x = x + proj(attn(norm1(x))); x = x + fc2(gelu_exact(fc1(norm2(x)))), LayerNorm eps 1e-6;
  norm(x[:, 0]) → head → mean cross-entropy with label smoothing ε (target (1 − ε)·onehot + ε/C).
  attention: qkv = Linear(D, 3D), columns [q | k | v], head h = columns h·dh … (h+1)·dh − 1 of each;
  optional qk-layernorm (no affine, eps 1e-6) over each head's dh entries of q and k; S = (q kᵀ)·(1/√dh);
    softmax        ϕ = softmax(S) over each row (all tokens, cls included)
    poly           ϕ = S^p / k           (convention "inside", k = √N, N = patches: the cls token not counted)
    poly-learned   ϕ = θ · S^p           θ = blocks.{l}.attn.scale, one scalar per block, initialised at 1/k
  out = ϕ v, heads concatenated, then proj.

A training step is: zero_grad, forward, backward, clip_grad_norm_(max_norm), AdamW step at that step's lr, with
timm's two parameter groups (weight decay on tensors with more than one row as the C++ stores them, i.e. every
Linear/Conv weight; none on biases, LayerNorm, cls_token, attn.scale and pos_embed).

Fixture format (little-endian throughout; "str" = uint32 byte length + UTF-8 bytes, no terminator):

  uint64  magic  = 0x5241505449564C41 (the bytes "ALVITPAR" in file order)
  uint32  version = 1
  uint32  number of cases
  per case:
    str     case name
    int64 × 10  image_h, image_w, channels, classes, patch_h, patch_w, dim, depth, heads, mlp_hidden
    int64   qkv_bias (0 or 1)
    float64 ln_eps
    str     activation as ActivationSpec::parse takes it ("softmax", "poly+qkln", "poly-learned", ...)
    int64   p
    str     k as KScale::parse takes it ("sqrtN" or a number)
    str     convention ("inside", "outside", "none")
    int64   batch B, steps S
    float64 label_smoothing, beta1, beta2, adam_eps, weight_decay, clip_max_norm
    uint32  number of tensors
    per tensor:
      str     name
      uint32  rank (1 or 2)
      int64 × rank  shape
      float64 × prod(shape)  row-major data

  Tensors of a case (shapes as the C++ stores them: rows × cols; Linear weights transposed, in × out; the
  patch-embedding weight (C·ph·pw) × D with row (channel·ph + i)·pw + j):
    train.images        (S·B) × (C·H·W)  step s uses rows s·B … (s+1)·B − 1 (channel, then row, then column)
    train.labels        S·B              class indices, stored as float64
    train.lr            S                the learning rate of each AdamW step
    param.<name>        the initial parameters, every tensor of parameter_tensors(config) by its timm name
    expected.logits     B × classes      forward of the step-0 batch at the initial parameters
    expected.loss       1                its mean label-smoothed cross-entropy
    grad.<name>         ∂loss/∂<name> of that forward (before clipping), same shape as param.<name>
    train.losses        S                the loss of each training step (before that step's update)
    train.grad_norms    S                the global gradient 2-norm of each step, before clipping
    final.<name>        the parameters after the S steps
"""
import argparse
import math
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

MAGIC = 0x5241505449564C41  # the bytes b"ALVITPAR", little-endian
VERSION = 1
LN_EPS = 1e-6
QK_EPS = 1e-6  # attnlab's Transforms::qk_eps
SEED = 20261122

# Each case: a model configuration, an activation, and the training hyperparameters. clip_max_norm is chosen
# below the gradient norm of every step (checked when the fixture is written) so that clipping is exercised.
CASES = [
    dict(name="softmax", image_h=8, image_w=12, channels=2, classes=5, patch_h=4, patch_w=3, dim=16, depth=2,
         heads=2, mlp_hidden=32, qkv_bias=True, activation="softmax", p=3, k="sqrtN", convention="inside",
         batch=4, steps=10, label_smoothing=0.1, beta1=0.9, beta2=0.95, adam_eps=1e-8, weight_decay=0.05,
         clip_max_norm=0.5, lr=3e-3),
    dict(name="poly+qkln", image_h=8, image_w=8, channels=3, classes=4, patch_h=2, patch_w=4, dim=16, depth=2,
         heads=4, mlp_hidden=24, qkv_bias=False, activation="poly+qkln", p=3, k="sqrtN", convention="inside",
         batch=3, steps=10, label_smoothing=0.2, beta1=0.8, beta2=0.99, adam_eps=1e-8, weight_decay=0.1,
         clip_max_norm=0.5, lr=2e-3),
    dict(name="poly-learned", image_h=6, image_w=9, channels=1, classes=3, patch_h=3, patch_w=3, dim=12, depth=3,
         heads=2, mlp_hidden=20, qkv_bias=True, activation="poly-learned", p=3, k="sqrtN", convention="inside",
         batch=5, steps=10, label_smoothing=0.05, beta1=0.9, beta2=0.999, adam_eps=1e-8, weight_decay=0.05,
         clip_max_norm=0.5, lr=3e-3),
]


def parse_activation(spec):
    parts = spec.split("+")
    name, transforms = parts[0], set(parts[1:])
    if name not in ("softmax", "poly", "poly-learned") or not transforms <= {"qkln"}:
        raise ValueError(f"vit_torch.py models softmax, poly and poly-learned with optional +qkln (got {spec!r})")
    return name, "qkln" in transforms


def resolve_k(k, patches):
    return math.sqrt(patches) if k == "sqrtN" else float(k)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        D = c["dim"]
        self.heads, self.head_dim = c["heads"], D // c["heads"]
        self.kind, self.qkln = parse_activation(c["activation"])
        if c["convention"] != "inside":
            raise ValueError("vit_torch.py models the inside convention only")
        patches = (c["image_h"] // c["patch_h"]) * (c["image_w"] // c["patch_w"])
        self.p = c["p"]
        self.inv_k = 1.0 / resolve_k(c["k"], patches)
        self.qkv = nn.Linear(D, 3 * D, bias=c["qkv_bias"])
        self.proj = nn.Linear(D, D)
        if self.kind == "poly-learned":
            self.scale = nn.Parameter(torch.tensor(self.inv_k))

    def forward(self, x):
        B, T, D = x.shape
        H, dh = self.heads, self.head_dim
        qkv = self.qkv(x).reshape(B, T, 3, H, dh).permute(2, 0, 3, 1, 4)  # 3, B, H, T, dh
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.qkln:
            q = F.layer_norm(q, (dh,), eps=QK_EPS)
            k = F.layer_norm(k, (dh,), eps=QK_EPS)
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(dh))
        if self.kind == "softmax":
            phi = s.softmax(dim=-1)
        elif self.kind == "poly":
            phi = s.pow(self.p) * self.inv_k
        else:
            phi = self.scale * s.pow(self.p)
        out = (phi @ v).transpose(1, 2).reshape(B, T, D)
        return self.proj(out)


class Mlp(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc1 = nn.Linear(c["dim"], c["mlp_hidden"])
        self.fc2 = nn.Linear(c["mlp_hidden"], c["dim"])

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))  # exact (erf) GELU


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm1 = nn.LayerNorm(c["dim"], eps=LN_EPS)
        self.attn = Attention(c)
        self.norm2 = nn.LayerNorm(c["dim"], eps=LN_EPS)
        self.mlp = Mlp(c)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, c):
        super().__init__()
        kernel = (c["patch_h"], c["patch_w"])
        self.proj = nn.Conv2d(c["channels"], c["dim"], kernel_size=kernel, stride=kernel)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # B, patches (row-major over the grid), D


class Vit(nn.Module):
    def __init__(self, c):
        super().__init__()
        D = c["dim"]
        self.shape = (c["channels"], c["image_h"], c["image_w"])
        patches = (c["image_h"] // c["patch_h"]) * (c["image_w"] // c["patch_w"])
        self.patch_embed = PatchEmbed(c)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, D))
        self.pos_embed = nn.Parameter(torch.zeros(1, patches + 1, D))
        self.blocks = nn.ModuleList([Block(c) for _ in range(c["depth"])])
        self.norm = nn.LayerNorm(D, eps=LN_EPS)
        self.head = nn.Linear(D, c["classes"])

    def forward(self, images):  # images: B × (C·H·W), channel-major
        x = self.patch_embed(images.reshape(images.shape[0], *self.shape))
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x[:, 0]))


def randomise(model):
    """Parameters away from timm's init, so every path carries weight: weights N(0, 1/fan_in), LayerNorm
    affine 1 ± 0.1 and ± 0.1, biases ± 0.1, cls_token and pos_embed N(0, 0.5²); attn.scale stays at 1/k."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("attn.scale"):
                continue
            if name in ("cls_token", "pos_embed"):
                p.normal_(0.0, 0.5)
            elif name.endswith(".weight") and p.dim() >= 2:
                fan_in = p[0].numel()
                p.normal_(0.0, 1.0 / math.sqrt(fan_in))
            elif "norm" in name and name.endswith(".weight"):
                p.normal_(1.0, 0.1)
            else:
                p.normal_(0.0, 0.1)


def stored(name, t):
    """A copy of a parameter (or its gradient) in the C++ layout: rows × cols, Linear weights in × out. A copy,
    not a view: training updates parameters and gradients in place."""
    t = t.detach().clone()
    if name == "patch_embed.proj.weight":
        return t.reshape(t.shape[0], -1).t()  # D × (C·ph·pw) → (C·ph·pw) × D
    if t.dim() == 2:
        return t.t()  # Linear: out × in → in × out
    if name == "cls_token":
        return t.reshape(1, -1)
    if name == "pos_embed":
        return t.reshape(t.shape[1], t.shape[2])
    return t.reshape(1, -1)  # biases, LayerNorm, attn.scale


def decays(name, p):
    return p.dim() >= 2 and name not in ("cls_token", "pos_embed")  # weights of Linear layers and the Conv2d


def build_case(c):
    torch.manual_seed(SEED + sum(map(ord, c["name"])))
    model = Vit(c).double()
    randomise(model)
    B, S, C = c["batch"], c["steps"], c["classes"]
    pixels = c["channels"] * c["image_h"] * c["image_w"]
    images = torch.randn(S * B, pixels, dtype=torch.float64)
    labels = torch.randint(0, C, (S * B,))
    lrs = [c["lr"] * (0.5 + 0.5 * math.cos(math.pi * s / S)) for s in range(S)]  # cosine, never 0

    tensors = [("train.images", images), ("train.labels", labels.double()),
               ("train.lr", torch.tensor(lrs, dtype=torch.float64))]
    tensors += [("param." + n, stored(n, p)) for n, p in model.named_parameters()]

    loss_fn = nn.CrossEntropyLoss(label_smoothing=c["label_smoothing"])
    logits = model(images[:B])
    loss = loss_fn(logits, labels[:B])
    model.zero_grad()
    loss.backward()
    tensors += [("expected.logits", logits.detach()), ("expected.loss", loss.detach().reshape(1))]
    tensors += [("grad." + n, stored(n, p.grad)) for n, p in model.named_parameters()]

    named = list(model.named_parameters())
    opt = torch.optim.AdamW(
        [{"params": [p for n, p in named if decays(n, p)], "weight_decay": c["weight_decay"]},
         {"params": [p for n, p in named if not decays(n, p)], "weight_decay": 0.0}],
        lr=lrs[0], betas=(c["beta1"], c["beta2"]), eps=c["adam_eps"], foreach=False)
    losses, norms = [], []
    for s in range(S):
        opt.zero_grad(set_to_none=False)
        loss = loss_fn(model(images[s * B:(s + 1) * B]), labels[s * B:(s + 1) * B])
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_max_norm"])
        for group in opt.param_groups:
            group["lr"] = lrs[s]
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
        if not norm.item() > c["clip_max_norm"]:
            raise RuntimeError(f"{c['name']}: step {s} gradient norm {norm.item()} does not reach the clip "
                               f"{c['clip_max_norm']}: lower clip_max_norm so that clipping is exercised")
    tensors += [("train.losses", torch.tensor(losses, dtype=torch.float64)),
                ("train.grad_norms", torch.tensor(norms, dtype=torch.float64))]
    tensors += [("final." + n, stored(n, p)) for n, p in model.named_parameters()]
    print(f"{c['name']:14s} {sum(p.numel() for p in model.parameters()):5d} parameters, loss "
          f"{losses[0]:.6f} → {losses[-1]:.6f}, gradient norms {min(norms):.3f} … {max(norms):.3f} "
          f"(clip {c['clip_max_norm']})")
    return tensors


def pack_str(s):
    b = s.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def pack_case(c, tensors):
    out = pack_str(c["name"])
    out += struct.pack("<10q", *(c[key] for key in ("image_h", "image_w", "channels", "classes", "patch_h",
                                                    "patch_w", "dim", "depth", "heads", "mlp_hidden")))
    out += struct.pack("<qd", int(c["qkv_bias"]), LN_EPS)
    out += pack_str(c["activation"]) + struct.pack("<q", c["p"]) + pack_str(c["k"]) + pack_str(c["convention"])
    out += struct.pack("<qq", c["batch"], c["steps"])
    out += struct.pack("<6d", c["label_smoothing"], c["beta1"], c["beta2"], c["adam_eps"], c["weight_decay"],
                       c["clip_max_norm"])
    out += struct.pack("<I", len(tensors))
    for name, t in tensors:
        t = t.detach().to(torch.float64).contiguous()
        if t.dim() not in (1, 2):
            raise ValueError(f"{name}: rank {t.dim()}")
        out += pack_str(name) + struct.pack("<I", t.dim()) + struct.pack(f"<{t.dim()}q", *t.shape)
        out += t.numpy().astype("<f8").tobytes()
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "fixtures", "vit_parity.bin"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    blob = struct.pack("<QII", MAGIC, VERSION, len(CASES))
    for c in CASES:
        blob += pack_case(c, build_case(c))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "wb") as f:
        f.write(blob)
    print(f"wrote {args.out}: {len(blob)} bytes, {len(CASES)} cases (torch {torch.__version__})")


if __name__ == "__main__":
    main()
