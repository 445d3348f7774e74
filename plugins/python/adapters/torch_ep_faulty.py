"""Planted faults in the torch reference adapter (torch_ep): the suites
must catch each through the bridge (suites/l1/torch.sh,
suites/l2/torch.sh), as numpy_ep_faulty's.

    --engine plugin:python,module=torch_ep_faulty,fault=NAME
             [,torch_ep's options]

fault=order  the last rank sums the destination ranks descending (the
             others ascending) while the canonical order is declared:
             wrong bits on random data wherever it has two sources
fault=stale  the last rank's receive buffers are filled once: from its
             second dispatch on it decodes the first step's tokens (the
             collective still runs, into a scratch buffer)
fault=zero   a rank with no tokens raises in dispatch, after the
             exchange: the max() of its empty top-k ids
"""
import torch_ep as ref

OPTIONS = dict(ref.OPTIONS, fault=("order", "stale", "zero"))


def parse(options):
    o = ref.parse(options, OPTIONS)
    if "fault" not in o:
        raise ValueError("want fault=order|stale|zero")
    return o


def query(options):
    o = parse(options)
    caps = ref.declare(o)
    if o["fault"] == "order":
        caps["order"] = "canonical"
    return caps


class Faulty(ref.Engine):
    def __init__(self, env, o):
        super().__init__(env, o)
        self.fault = o["fault"]
        self.last = env.rank + 1 == env.world

    def exchange(self, blob):
        if self.fault == "stale" and self.last and self.calls > 0:
            scratch = [self.torch.empty_like(b) for b in self.recv]
            self.dist.all_gather(scratch, blob, group=self.pg)
            return self.recv  # the first step's, never refilled
        return super().exchange(blob)

    def dispatch(self, inp):
        res = super().dispatch(inp)
        if self.fault == "zero":
            # after the exchange, as a library that keeps statistics of
            # its own tokens: torch's max() of no elements raises
            self.top = int(self.view(inp.topk_idx).max())
        return res

    def dest_order(self):
        order = list(super().dest_order())
        return order[::-1] if self.fault == "order" and self.last else order


def create(env):
    return Faulty(env, parse(env.options))


dispatch, combine, destroy = ref.dispatch, ref.combine, ref.destroy
