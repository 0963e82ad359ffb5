def eager(x, residual, out):
    torch.add(x, residual, out=out)
    F.threshold_(out, 0.0, 0.0)
