"""The model of pipeline_step.py: scenarios/dense-step-h200.yaml's dense Llama-like model
(dense_step.py's widths) cut into pipeline stages, built as production frameworks build it: RoPE,
SwiGLU and the loss each one fused kernel (torch.compile), RMSNorm PyTorch's fused kernel, weight
gradients summed over micro-batches by the dW GEMM itself (beta = 1), and every linear layer's
weight gradient deferrable to a later task (DualPipe's WeightGradStore)."""
import torch
import torch.nn.functional as F

from dense_step import BATCH, DT, FFN, HEAD_DIM, HEADS, HIDDEN, KV_HEADS, SEQ, VOCAB  # noqa: F401 - the same widths


# --- the model, with weight gradients that can wait -------------------------------------------

class WeightGrads:
    """Where deferred (x, dy, w) triples go, per GPU, while a backward_input task of that GPU's rank
    runs (absent: not deferring). Autograd runs a GPU's backward on that GPU's worker thread, and
    the ranks' tasks are issued from threads of their own, so the list is looked up by the GPU."""
    collecting = {}


@torch.no_grad()  # a deferred one runs outside autograd's backward: record nothing
def weight_grad_into(w, x, dy):
    """dW = dy^T x, summed into w.grad by the GEMM itself (beta = 1) from the second micro-batch on:
    Megatron's gradient_accumulation_fusion, which the simulator assumes (it has no separate
    accumulation op); eager autograd would add each micro-batch's dW in an extra elementwise pass."""
    x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    if w.grad is None:
        w.grad = dy2.t().matmul(x2)
    else:
        w.grad.addmm_(dy2.t(), x2)


# Elementwise chains fused into one kernel each way (torch.compile: Inductor's Triton kernels), as
# production frameworks fuse them (Megatron/TE: fused RoPE, SwiGLU, cross entropy) and as the
# simulator prices them (one op each, at the fused kernels' measured HBM rate).
@torch.compile(dynamic=False)
def rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], -1) * sin


@torch.compile(dynamic=False)
def swiglu(gate_up):
    gate, up = gate_up.chunk(2, -1)
    return F.silu(gate) * up


@torch.compile(dynamic=False)
def loss_fn(logits, labels):
    return F.cross_entropy(logits.view(-1, VOCAB).float(), labels.view(-1))


class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return F.linear(x, w)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        dx = dy.matmul(w)
        queue = WeightGrads.collecting.get(dy.device.index)
        if queue is not None:
            queue.append((x.detach(), dy.detach(), w))
        else:
            weight_grad_into(w, x, dy)
        return dx, None  # w.grad is written above or by the later weight task, not by autograd


def param(gen, device, *shape, scale=0.02):
    """Drawn on GPU 0 (one generator, one kernel grid) and moved, so every copy is the same."""
    t = torch.randn(*shape, device="cuda:0", generator=gen, dtype=torch.float32)
    return (scale * t).to(DT).to(device).requires_grad_(True)


def generator(seed):
    return torch.Generator(device="cuda:0").manual_seed(seed)


def layer_params(index, device):
    """Layer `index`'s parameters, the same on every GPU and in every copy (seeded by the index)."""
    gen = generator(1000 + index)
    return {
        "attn_norm": torch.ones(HIDDEN, device=device, dtype=DT, requires_grad=True),
        "qkv": param(gen, device, (HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN),
        "o": param(gen, device, HIDDEN, HEADS * HEAD_DIM),
        "ffn_norm": torch.ones(HIDDEN, device=device, dtype=DT, requires_grad=True),
        "up": param(gen, device, 2 * FFN, HIDDEN),
        "down": param(gen, device, HIDDEN, FFN),
    }


class Stage:
    """Layers [first, first + count) on `device`; the embedding when `embed`, the final norm, head
    and loss when `head`."""

    def __init__(self, device, first, count, embed, head):
        self.device, self.first, self.count, self.has_embed, self.has_head = device, first, count, embed, head
        self.layers = [layer_params(first + i, device) for i in range(count)]
        self.embed = param(generator(7), device, VOCAB, HIDDEN, scale=1.0) if embed else None
        self.head = param(generator(8), device, VOCAB, HIDDEN) if head else None
        self.final_norm = torch.ones(HIDDEN, device=device, dtype=DT, requires_grad=True) if head else None
        inv = 1.0 / (10000 ** (torch.arange(0, HEAD_DIM, 2, device=device).float() / HEAD_DIM))
        ang = torch.outer(torch.arange(SEQ, device=device).float(), inv)
        self.cos = torch.cat([ang.cos(), ang.cos()], -1).to(DT)
        self.sin = torch.cat([ang.sin(), ang.sin()], -1).to(DT)

    def named_params(self):
        out = []
        if self.has_embed:
            out.append(("embed", self.embed))
        for i, lay in enumerate(self.layers):
            out += [(f"layer{self.first + i}.{k}", v) for k, v in lay.items()]
        if self.has_head:
            out += [("final_norm", self.final_norm), ("head", self.head)]
        return out


    def forward(self, x, labels):
        """x: token ids (stage 0) or the previous stage's activations; returns activations, or
        the loss on the last stage."""
        if self.has_embed:
            x = F.embedding(x, self.embed)
        for lay in self.layers:
            h = F.rms_norm(x, (HIDDEN,), lay["attn_norm"], 1e-5)
            qkv = Linear.apply(h, lay["qkv"])
            q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
            q = q.view(BATCH, SEQ, HEADS, HEAD_DIM).transpose(1, 2)
            k = k.view(BATCH, SEQ, KV_HEADS, HEAD_DIM).transpose(1, 2)
            v = v.view(BATCH, SEQ, KV_HEADS, HEAD_DIM).transpose(1, 2)
            q, k = rope(q, self.cos, self.sin), rope(k, self.cos, self.sin)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            a = a.transpose(1, 2).reshape(BATCH, SEQ, HEADS * HEAD_DIM)
            x = x + Linear.apply(a, lay["o"])
            h = F.rms_norm(x, (HIDDEN,), lay["ffn_norm"], 1e-5)
            x = x + Linear.apply(swiglu(Linear.apply(h, lay["up"])), lay["down"])
        if self.has_head:
            x = F.rms_norm(x, (HIDDEN,), self.final_norm, 1e-5)
            logits = Linear.apply(x, self.head)
            return loss_fn(logits, labels)
        return x
