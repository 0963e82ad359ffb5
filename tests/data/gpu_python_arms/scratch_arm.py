"""A test arm (tests/gpu/test_python_arms_gpu.cpp): relu(x + residual) on CUDA with torch, whose
prepare() builds on 1 GiB of torch scratch and drops it, as a compiled arm's does. Its run()
fails where torch still keeps that scratch reserved: kq must give the memory back to the device
after every prepare(), before it sets up the next arm's buffers."""
import kq

_SCRATCH = 1 << 30


class ScratchDropped(kq.Arm):
    name = "test_scratch_dropped"
    family = "test"
    device = "cuda"
    tensors = "torch"

    def supports(self, spec):
        if not kq.matches(spec, ["input", "input", "add", "relu"]) or spec.dtype != "f32":
            return "relu(x + residual) in f32 only"
        return None

    def prepare(self, problem):
        import torch

        scratch = torch.empty(_SCRATCH, dtype=torch.uint8, device="cuda")
        scratch.fill_(1)

    def run(self, inputs, outputs):
        import torch

        reserved = torch.cuda.memory_reserved()
        if reserved >= _SCRATCH:
            raise RuntimeError("torch keeps %d bytes reserved after prepare()" % reserved)
        x, r = inputs
        torch.add(x, r, out=outputs[0])
        torch.relu_(outputs[0])
