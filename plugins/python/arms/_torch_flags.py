"""torch's process-wide flags set for the calls inside `with`, put back after.

An arm that needs a flag (cuDNN's f32 convolution precision, cuBLAS's reduced-precision split
sums, the f32 products' TF32) sets it around its own call only: a candidate timed in the same
worker then runs as its author left torch. Each flag is read before it is set; one that torch
refuses to read (its two APIs left unequal by code beside: RuntimeError) is left as it is.
"""


class Flag:
    """One flag: read() gives its value (or raises RuntimeError), write(v) sets it."""

    def __init__(self, read, write):
        self.read = read
        self.write = write

    @classmethod
    def attribute(cls, owner, name):
        return cls(lambda: getattr(owner, name), lambda v: setattr(owner, name, v))


class Settings:
    """The flags given, each at its wanted value inside `with`, each put back after where it
    was changed. `wanted`: [(Flag, value)]."""

    def __init__(self, wanted):
        self._wanted = list(wanted)
        self._changed = []

    def __enter__(self):
        self._changed = []
        for flag, want in self._wanted:
            try:
                was = flag.read()
            except RuntimeError:  # left unequal by code beside: as is
                continue
            if was != want:
                flag.write(want)
                self._changed.append((flag, was))
        return self

    def __exit__(self, *exc):
        for flag, was in reversed(self._changed):
            flag.write(was)
        self._changed = []
        return False
