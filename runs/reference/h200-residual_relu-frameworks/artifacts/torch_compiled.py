def compiled(x, residual, out):
    out.copy_(F.threshold(torch.add(x, residual), 0.0, 0.0))
