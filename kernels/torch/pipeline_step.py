"""Pipeline-parallel training steps on the GPUs of one host, in the order clustersim's schedule
generator gives: 1F1B, interleaved 1F1B, ZB1P, DualPipe and DualPipeV, each rank on its own GPU.

The model is scenarios/dense-step-h200.yaml's (dense_step.py: hidden 4096, GQA 32/8, SwiGLU 14336,
vocabulary 32000, BF16) with more layers, cut into the schedule's model stages (the embedding on
stage 0, final norm, head and loss on the last), built as a production framework builds it rather
than eagerly: RoPE, SwiGLU and the loss each one fused kernel (torch.compile), RMSNorm PyTorch's
fused kernel, weight gradients summed over micro-batches by the dW GEMM itself (beta = 1). Every
linear layer's backward can leave its weight gradient for later (DualPipe's WeightGradStore): a
"backward_input" task computes input gradients only and queues (x, dy) per linear, its
"backward_weight" task runs the queued dW GEMMs.

Schedules come from `clustersim schedule show KIND --stages PP --microbatches M --json S.json`:
each rank's tasks in execution order and the passes each one needs. This program has no schedule
logic of its own: the measured run and the simulated one execute the same order of chunks. (Within
DualPipe's overlapped pairs this program runs the forward, then the backward, as dualpipe.py does
for a model without an overlapped_forward_backward; the simulator interleaves the two halves' ops
on the same compute stream: the same work in another order.)

How a step runs. One process drives every GPU (peer access over NVLink); each rank has a compute
stream, and a stage boundary is a copy-engine copy (cudaMemcpyPeerAsync) on a send stream of the
producer and a receive stream of the consumer, ordered by events: issued as soon as the producer's
task is issued, awaited by the consumer's task. Each rank's tasks are issued by a CPU thread of its
own, in the rank's order, each once the tasks it needs were issued (--issue one: every rank from
one thread, as the first measurements were). Every compute stream starts behind a gate (a 30 ms
sleep kernel on rank 0 that every rank waits for), so the ranks start together with work queued;
the step is timed from the gate to each rank's last task (CUDA events), and every task is timed
too (its span includes waiting for its inputs). CUDA's launch queue holds only part of a step, so
a thread then blocks on its rank's full queue while the GPU runs; a GPU left without queued work
shows as idle time between its tasks, which each case reports (idle inside a task is not told
apart from waiting for inputs).

Check before reporting: after the timed steps, one more step from zeroed gradients; its gradients
(DualPipe's two copies summed) and losses must match the unpipelined model's (every micro-batch
through all layers on GPU 0) within BF16 tolerance, else exit 3 with nothing written.

Usage: python3 pipeline_step.py SCHEDULES_DIR OUT.json [--layers 8] [--runs 10] [--warmup 3]
                                [--micro-batch 1] [--trace CASE --trace-out TRACE.json]
SCHEDULES_DIR holds CASE.json schedules (case = file name); the layers are split evenly over the
model stages, the first stages taking the remainder. --trace profiles one more step of CASE with
torch.profiler and writes its Kineto trace, trimmed as dense_step.py trims it (for `clustersim
compare`, which reads the lowest-numbered GPU: rank 0).
"""
import argparse
import glob
import json
import os
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F

import pipeline_model
from common import provenance
from dense_step import trim
from pipeline_model import BATCH, DT, FFN, HEAD_DIM, HEADS, HIDDEN, KV_HEADS, SEQ, VOCAB, Stage, WeightGrads, \
    weight_grad_into

GATE_MS = 30.0


# --- one schedule on the GPUs ------------------------------------------------------------------

def key(d):
    return (d["micro_batch"], d["stage"], d["direction"])


class Pipeline:
    def __init__(self, sched, layers_per_stage, data):
        self.s = sched
        self.ranks = sched["ranks"]
        self.stages = sched["model_stages"]
        if len(layers_per_stage) != self.stages:
            raise ValueError(f"{len(layers_per_stage)} layer counts for {self.stages} model stages")
        firsts = [sum(layers_per_stage[:i]) for i in range(self.stages)]
        self.dev = [torch.device("cuda", r) for r in range(self.ranks)]
        self.rank_of = {}
        self.stage = {}
        for r, held in enumerate(sched["rank_stages"]):
            for st in held:
                s, d = st["stage"], st["direction"]
                self.rank_of[(s, d)] = r
                self.stage[(s, d)] = Stage(self.dev[r], firsts[s], layers_per_stage[s], s == 0, s == self.stages - 1)
        self.compute = [torch.cuda.Stream(device=d) for d in self.dev]
        self.send = [torch.cuda.Stream(device=d) for d in self.dev]
        self.recv = [torch.cuda.Stream(device=d) for d in self.dev]
        self.mpd = sched["micro_batches_per_direction"]
        # Token ids and labels of micro-batch (mb, direction) on every GPU (stage 0 and the last
        # stage of either direction may sit anywhere).
        self.data = {(mb, d): [(t.to(dv), l.to(dv)) for dv in self.dev]
                     for (mb, d), (t, l) in data.items()}

    def zero_grads(self):
        for st in self.stage.values():
            for _, p in st.named_params():
                p.grad = None

    def _ship(self, r, tensor, dest, what):
        """Makes `tensor` (on rank r, just produced on its compute stream) available on `dest`."""
        if dest == r:
            self.avail[what] = (tensor, None)
            return
        ev = torch.cuda.Event()
        ev.record(self.compute[r])
        # ATen copies between GPUs on the source's current stream, after the destination's current
        # stream, which then waits for the copy: here the send and receive streams.
        with torch.cuda.stream(self.send[r]), torch.cuda.stream(self.recv[dest]):
            self.send[r].wait_event(ev)
            tensor.record_stream(self.send[r])
            start = torch.cuda.Event(enable_timing=True)
            start.record(self.send[r])
            copy = tensor.to(self.dev[dest], non_blocking=True)
            done = torch.cuda.Event(enable_timing=True)
            done.record(self.send[r])
            arrived = torch.cuda.Event()
            arrived.record(self.recv[dest])
        self.copies.append((start, done, tensor.numel() * tensor.element_size()))
        self.avail[what] = (copy, arrived)

    def _take(self, r, what):
        tensor, ev = self.avail.pop(what)
        if ev is not None:
            self.compute[r].wait_event(ev)
            tensor.record_stream(self.compute[r])
        return tensor

    def _forward(self, r, c):
        mb, s, d = key(c)
        st = self.stage[(s, d)]
        tokens, labels = self.data[(mb, d)][r]
        if s == 0:
            inp, x = None, tokens
        else:
            x = inp = self._take(r, ("forward", mb, s - 1, d)).detach().requires_grad_(True)
        out = st.forward(x, labels)
        self.saved[(mb, s, d)] = (inp, out)
        if s == self.stages - 1:
            self.losses[(mb, d)] = out.detach()
        else:
            self._ship(r, out.detach(), self.rank_of[(s + 1, d)], ("forward", mb, s, d))

    def _backward(self, r, c, defer):
        mb, s, d = key(c)
        inp, out = self.saved.pop((mb, s, d))
        gpu = self.dev[r].index
        if defer:
            WeightGrads.collecting[gpu] = []
        try:
            if s == self.stages - 1:
                torch.autograd.backward(out)
            else:
                torch.autograd.backward(out, self._take(r, ("input_grad", mb, s + 1, d)))
        finally:
            queued = WeightGrads.collecting.pop(gpu, None)
        if defer:
            self.deferred[(mb, s, d)] = queued
        if s > 0:
            self._ship(r, inp.grad, self.rank_of[(s - 1, d)], ("input_grad", mb, s, d))

    def _weight(self, c):
        for x, dy, w in self.deferred.pop(key(c)):
            weight_grad_into(w, x, dy)

    def _task(self, r, t):
        k = t["kind"]
        if k == "forward":
            self._forward(r, t["chunk"])
        elif k == "backward":
            self._backward(r, t["chunk"], defer=False)
        elif k == "backward_input":
            self._backward(r, t["chunk"], defer=True)
        elif k == "backward_weight":
            self._weight(t["chunk"])
        elif k == "forward_backward":  # dualpipe.py without an overlapped_forward_backward: F, then B
            self._forward(r, t["chunk"])
            self._backward(r, t["bwd"], defer=False)
        else:
            raise ValueError(f"unknown task kind {k}")

    def _run_task(self, r, t, marks):
        with torch.cuda.device(self.dev[r]), torch.cuda.stream(self.compute[r]):
            a = torch.cuda.Event(enable_timing=True)
            a.record(self.compute[r])
            self._task(r, t)
            b = torch.cuda.Event(enable_timing=True)
            b.record(self.compute[r])
        marks[r].append((t["token"], t["kind"], a, b))

    def _issue_one_thread(self, marks):
        """Every rank from this thread, each task as soon as what it needs was issued."""
        tasks = self.s["tasks"]
        pos = [0] * self.ranks
        issued = set()
        while any(pos[r] < len(tasks[r]) for r in range(self.ranks)):
            moved = False
            for r in range(self.ranks):
                while pos[r] < len(tasks[r]):
                    t = tasks[r][pos[r]]
                    if not all((n["pass"],) + key(n) in issued for n in t["needs"]):
                        break
                    self._run_task(r, t, marks)
                    issued.update((p["pass"],) + key(p) for p in t["provides"])
                    pos[r] += 1
                    moved = True
            if not moved:
                raise RuntimeError(f"schedule stuck at tasks {pos}")

    def _issue_threads(self, marks):
        """Each rank from a thread of its own, a task once the threads that produce what it needs
        have issued it: a rank whose launch queue is full blocks only its own thread."""
        done = {}  # pass -> threading.Event, set once the producing task was issued
        for rank in self.s["tasks"]:
            for t in rank:
                for p in t["provides"]:
                    done[(p["pass"],) + key(p)] = threading.Event()
        failed = []

        def run(r):
            try:
                for t in self.s["tasks"][r]:
                    for n in t["needs"]:
                        while not done[(n["pass"],) + key(n)].wait(0.1):
                            if failed:
                                return
                    self._run_task(r, t, marks)
                    for p in t["provides"]:
                        done[(p["pass"],) + key(p)].set()
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                failed.append(e)

        threads = [threading.Thread(target=run, args=(r,)) for r in range(self.ranks)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if failed:
            raise failed[0]

    def step(self, gate_ms, threaded=True):
        """One step (its tasks issued by one thread per rank, or all by this one); returns (per-rank end ms after the gate, per-rank (token, kind, start, end ms)
        of each task, CPU issue ms, copies (ms, bytes))."""
        self.avail, self.saved, self.deferred, self.losses, self.copies = {}, {}, {}, {}, []
        gate_open = torch.cuda.Event()
        starts, ends, marks = [], [], []
        with torch.cuda.stream(self.compute[0]):
            if gate_ms > 0:
                torch.cuda._sleep(int(gate_ms * 2.0e6))  # cycles: at least gate_ms at SM clocks up to 2 GHz
            gate_open.record(self.compute[0])
        for r in range(self.ranks):
            self.compute[r].wait_event(gate_open)
            e = torch.cuda.Event(enable_timing=True)
            e.record(self.compute[r])
            starts.append(e)
            marks.append([])
        t0 = time.perf_counter()
        if threaded:
            self._issue_threads(marks)
        else:
            self._issue_one_thread(marks)
        for r in range(self.ranks):
            e = torch.cuda.Event(enable_timing=True)
            e.record(self.compute[r])
            ends.append(e)
        issue_ms = (time.perf_counter() - t0) * 1e3
        for d in self.dev:
            torch.cuda.synchronize(d)
        if self.avail or self.saved or self.deferred:
            raise RuntimeError(f"step left work behind: {len(self.avail)} transfers, {len(self.saved)} "
                               f"activations, {len(self.deferred)} weight gradients")
        end_ms = [starts[r].elapsed_time(ends[r]) for r in range(self.ranks)]
        spans = [[(tok, kind, starts[r].elapsed_time(a), starts[r].elapsed_time(b)) for tok, kind, a, b in marks[r]]
                 for r in range(self.ranks)]
        copies = [(s.elapsed_time(e), n) for s, e, n in self.copies]
        return end_ms, spans, issue_ms, copies


# --- the check: the same gradients without a pipeline -------------------------------------------

def reference_grads(total_layers, batches):
    """Gradients summed over micro-batches 0..n-1 and each one's loss, every layer on GPU 0."""
    dev = torch.device("cuda", 0)
    whole = Stage(dev, 0, total_layers, True, True)
    losses = []
    with torch.cuda.device(dev):
        for tokens, labels in batches:
            loss = whole.forward(tokens.to(dev), labels.to(dev))
            loss.backward()
            losses.append(float(loss.detach()))
    grads = {name: p.grad.float() for name, p in whole.named_params()}
    del whole
    return grads, losses


def check(pipe, grads_ref, losses_ref):
    got = {}
    for st in pipe.stage.values():
        for name, p in st.named_params():
            if p.grad is None or p.grad.requires_grad:
                raise RuntimeError(f"{name}: no gradient, or one that autograd recorded")
            g = p.grad.float().to("cuda:0")
            got[name] = g if name not in got else got[name] + g  # DualPipe: both copies
    worst, worst_name = 0.0, None
    for name, ref in grads_ref.items():
        if name not in got:
            raise RuntimeError(f"no pipeline gradient for {name}")
        err = float((got[name] - ref).norm() / ref.norm().clamp_min(1e-30))
        if err > worst:
            worst, worst_name = err, name
    mpd = pipe.mpd
    if len(pipe.losses) != len(losses_ref):
        raise RuntimeError(f"{len(pipe.losses)} losses for {len(losses_ref)} micro-batches")
    loss_err = max(abs(float(pipe.losses[(mb, d)]) - losses_ref[d * mpd + mb]) / abs(losses_ref[d * mpd + mb])
                   for mb, d in pipe.losses)
    # BF16 products summed in another order (micro-batches, copies, deferred dW): relative L2 errors
    # of about 1e-2 are expected; a wrong or missing gradient is off by order 1.
    return {"params": len(grads_ref), "grad_rel_l2_worst": worst, "worst_param": worst_name,
            "loss_rel_error_worst": loss_err, "tolerance": 2e-2,
            "passed": worst < 2e-2 and loss_err < 1e-3}


def median_ms(xs):
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=10) if len(xs) >= 2 else [xs[0], xs[0]]
    return {"median": statistics.median(xs), "p10": q[0], "p90": q[-1], "min": xs[0], "max": xs[-1], "runs": len(xs)}


def idle_between_tasks_ms(spans):
    return [sum(b[2] - a[3] for a, b in zip(rank, rank[1:])) for rank in spans]


def profile_step(pipe, name, out_path, args):
    from torch.profiler import ProfilerActivity, profile, record_function
    pipe.zero_grads()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("train_step"):
            pipe.step(0, args.issue == "threads")  # no gate: its sleep kernel would count as a kernel of rank 0
    tmp = "/tmp/cs_pipeline_step_full_trace.json"
    prof.export_chrome_trace(tmp)
    with open(tmp) as f:
        small = trim(json.load(f))
    kernels = [e for e in small["traceEvents"] if e.get("cat") == "kernel"]
    small["clustersim"] = {
        "what": f"one pipeline step of case {name} (kernels/torch/pipeline_step.py), every GPU; "
                "`clustersim compare` reads GPU 0 (rank 0)",
        "trimmed": "only GPU kernel, memcpy, memset and user-annotation events and metadata are kept",
        "kernels": len(kernels),
        "provenance": provenance("kernels/torch/pipeline_step.py"),
    }
    with open(out_path, "w") as f:
        json.dump(small, f)


def run_case(path, layers_per_stage, data, total_layers, args, grads_ref, losses_ref):
    with open(path) as f:
        sched = json.load(f)
    name = os.path.basename(path)[:-5]
    pipe = Pipeline(sched, layers_per_stage, data)
    threaded = args.issue == "threads"
    # Host times (perf_counter, the NVML sampler's axis) at each step's start, the GPUs idle then:
    # a run's tasks lie at that time plus the gate plus their start_ms.
    host_start = time.perf_counter()
    for i in range(args.warmup):  # allocator pools, cuBLAS heuristics; torch.compile in the first, one thread
        pipe.zero_grads()
        pipe.step(GATE_MS, threaded and i > 0)
    ends, issues, idle = [], [], []
    spans = copies = None
    run_starts = []
    for _ in range(args.runs):
        pipe.zero_grads()
        torch.cuda.synchronize()
        run_starts.append(time.perf_counter())
        end_ms, spans, issue_ms, copies = pipe.step(GATE_MS, threaded)
        ends.append(end_ms)
        issues.append(issue_ms)
        idle.append(idle_between_tasks_ms(spans))
    if args.trace == name:
        profile_step(pipe, name, args.trace_out, args)
    pipe.zero_grads()
    pipe.step(GATE_MS, threaded)
    torch.cuda.synchronize()
    chk = check(pipe, grads_ref, losses_ref)
    by_kind = {}
    for rank in spans:
        for _, kind, a, b in rank:
            by_kind.setdefault(kind, []).append(b - a)
    case = {
        "name": name,
        "schedule": sched["kind"], "stages": sched["stages"], "micro_batches": sched["micro_batches"],
        "virtual_stages": sched["virtual_stages"], "ranks": sched["ranks"], "model_stages": sched["model_stages"],
        "layers_per_stage": layers_per_stage,
        "iteration_ms": median_ms([max(e) for e in ends]),
        "rank_end_ms_median": [statistics.median(e[r] for e in ends) for r in range(sched["ranks"])],
        "task_ms_median_last_run": {k: statistics.median(v) for k, v in sorted(by_kind.items())},
        "tasks_last_run": [[{"token": tok, "kind": kind, "start_ms": a, "end_ms": b} for tok, kind, a, b in rank]
                           for rank in spans],
        "copies_last_run": {"count": len(copies), "bytes_each": copies[0][1] if copies else 0,
                            "ms_median": statistics.median(c[0] for c in copies) if copies else 0.0},
        "cpu_issue_ms_max": max(issues), "gate_ms": GATE_MS,
        "rank_end_ms_runs": [[round(x, 4) for x in e] for e in ends],
        "host_s": {"first_warmup": host_start, "runs": run_starts, "axis": "time.perf_counter"},
        "idle_between_tasks_ms_max": [max(i[r] for i in idle) for r in range(sched["ranks"])],
        "idle_between_tasks_ms_median": [statistics.median(i[r] for i in idle) for r in range(sched["ranks"])],
        "check": chk,
    }
    del pipe
    torch.cuda.empty_cache()
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("schedules")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--micro-batch", type=int, default=BATCH,
                    help="sequences per micro-batch (default 1): on more ranks one thread issues more kernels per "
                         "GPU-second, and a larger micro-batch keeps the GPUs ahead of it")
    ap.add_argument("--issue", choices=["one", "threads"], default="one",
                    help="issue every rank's tasks from one thread (default), or each rank from a thread of its own")
    ap.add_argument("--trace", help="case whose extra profiled step is written to --trace-out")
    ap.add_argument("--trace-out")
    args = ap.parse_args()
    if bool(args.trace) != bool(args.trace_out):
        ap.error("--trace and --trace-out go together")
    if args.micro_batch < 1:
        ap.error("--micro-batch must be at least 1")
    pipeline_model.BATCH = args.micro_batch  # the attention's views read it at run time
    n = torch.cuda.device_count()
    if n < 2:
        print("pipeline_step: needs 2 GPUs", file=sys.stderr)
        sys.exit(2)
    for i in range(n):
        for j in range(n):
            if i != j and not torch.cuda.can_device_access_peer(i, j):
                print(f"pipeline_step: GPU {i} cannot reach GPU {j} by peer access", file=sys.stderr)
                sys.exit(2)
    files = sorted(glob.glob(os.path.join(args.schedules, "*.json")))
    if not files:
        print(f"pipeline_step: no schedules in {args.schedules}", file=sys.stderr)
        sys.exit(1)
    # Micro-batch (mb, direction): token ids and labels; DualPipe's two directions take different ones.
    most = max(json.load(open(p))["micro_batches"] for p in files)
    g = torch.Generator(device="cpu").manual_seed(1)
    data_all = {}
    for i in range(most):
        data_all[i] = (torch.randint(0, VOCAB, (args.micro_batch, SEQ), generator=g),
                       torch.randint(0, VOCAB, (args.micro_batch, SEQ), generator=g))
    cases = []
    refs = {}  # micro-batch count -> the unpipelined gradients and losses
    for path in files:
        with open(path) as f:
            sched = json.load(f)
        mpd, dirs = sched["micro_batches_per_direction"], sched["directions"]
        data = {(mb, d): data_all[d * mpd + mb] for d in range(dirs) for mb in range(mpd)}
        stages = sched["model_stages"]
        lps = [args.layers // stages + (1 if i < args.layers % stages else 0) for i in range(stages)]
        m = sched["micro_batches"]
        if m not in refs:
            refs.clear()
            torch.cuda.empty_cache()
            refs[m] = reference_grads(args.layers, [data_all[i] for i in range(m)])
        case = run_case(path, lps, data, args.layers, args, *refs[m])
        if not case["check"]["passed"]:
            print(f"pipeline_step: {case['name']}: gradients or losses differ from the unpipelined model: "
                  f"{json.dumps(case['check'])}", file=sys.stderr)
            sys.exit(3)
        print(f"{case['name']}: step {case['iteration_ms']['median']:.2f} ms (min {case['iteration_ms']['min']:.2f}), "
              f"tasks {json.dumps({k: round(v, 2) for k, v in case['task_ms_median_last_run'].items()})}, "
              f"copy {case['copies_last_run']['ms_median']:.3f} ms, issue {case['cpu_issue_ms_max']:.1f} ms, "
              f"idle between tasks {[round(x, 3) for x in case['idle_between_tasks_ms_max']]} ms, "
              f"grad err {case['check']['grad_rel_l2_worst']:.2e}", flush=True)
        cases.append(case)
    out = {
        "schema_version": 1,
        "provenance": dict(provenance("kernels/torch/pipeline_step.py"), gpus=n,
                           gpu_names=[torch.cuda.get_device_name(i) for i in range(n)]),
        "bench": {
            "model": {"layers": args.layers, "hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS,
                      "head_dim": HEAD_DIM, "ffn": FFN, "vocab": VOCAB},
            "seq_len": SEQ, "micro_batch": args.micro_batch, "precision": "bf16",
            "stage_boundary": "copy engine (cudaMemcpyPeerAsync, BF16 activations and gradients), one process",
            "runs": args.runs, "warmup": args.warmup,
            "issue": "one CPU thread per rank" if args.issue == "threads" else "one CPU thread for every rank",
        },
        "cases": cases,
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
