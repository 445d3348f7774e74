"""Planted faults in a copy of the reference adapter (numpy_ep), each on
the last rank only: the suites must catch every one of them with the
right verdict (suites/l1/python.sh, suites/l2/python.sh).

    --engine plugin:python,module=numpy_ep_faulty,fault=NAME[,bound=F]
             [,numpy_ep's options]

fault=weight  combine weighs each token's first term twice (the first
              destination's row, or the first slot's copy)
fault=drop    dispatch drops the last row it keeps (not counted)
fault=vary    declares the fixed combine order, but sums in an order that
              changes every call (the slots, or the destination ranks,
              rotated by one)
fault=bound   declares no fixed order with order_bound=F (default 0:
              epgate's own bound), and its combine lands three times
              epgate's error bound away from the exact sum
fault=mark    marks its library's call out of order (env.mark: a start
              twice, no end): a timed step must fail, not time a span
              that is not one
fault=capture declares itself capture-safe (flags capture_safe), but
              returns new receive arrays at every dispatch (numpy_ep's
              own way): a replay would write where the capture's recv
              does not point, which the replay boundary must refuse
              (every rank)
"""
import numpy as np

import numpy_ep as ref

OPTIONS = dict(ref.OPTIONS,
               fault=("weight", "drop", "vary", "bound", "mark", "capture"),
               bound=None)


def parse(options):
    o = ref.parse(options, OPTIONS)
    if "fault" not in o:
        raise ValueError("want fault=weight|drop|vary|bound|mark|capture")
    try:
        o["bound"] = float(o.get("bound", 0))
    except ValueError:
        raise ValueError("option bound=%s: want a number" % o["bound"])
    return o


def query(options):
    o = parse(options)
    caps = ref.declare(o)
    if o["fault"] == "vary":
        caps["order"] = "fixed"
    if o["fault"] == "bound":
        caps["order"], caps["order_bound"] = "any", o["bound"]
    if o["fault"] == "capture":
        caps["flags"] = caps.get("flags", []) + ["capture_safe"]
    return caps


class Faulty(ref.Engine):
    def __init__(self, env, o):
        super().__init__(env, o)
        self.fault = o["fault"] if env.rank + 1 == env.world else None

    def dispatched(self, res):
        full = np.nonzero(res["count"] > 0)[0]
        if self.fault == "drop" and len(full):
            res["count"][full[-1]] -= 1  # the last group's last row
        return res

    def dest_order(self):
        order = list(super().dest_order())
        if self.fault == "vary":
            n = self.calls % max(len(order), 1)
            order = order[n:] + order[:n]
        return order

    def slot_order(self):
        order = list(super().slot_order())
        if self.fault == "vary":
            n = self.calls % max(len(order), 1)
            order = order[n:] + order[:n]
        return order

    def combine(self, inp, y, out):
        # the exact sum and its magnitude, as epgate's reference keeps them
        self.sum64 = np.zeros((inp.tokens, self.env.hidden), np.float64)
        self.mag64 = np.zeros_like(self.sum64)
        super().combine(inp, y, out)

    def add(self, acc, toks, vals, first):
        if self.fault == "weight" and first:
            vals = vals * np.float32(2)
        super().add(acc, toks, vals, first)
        self.sum64[toks] += vals
        self.mag64[toks] += np.abs(vals)

    def result(self, acc):
        if self.fault != "bound":
            return acc
        # u = 2^-(p-1) of the combine dtype: epgate's bound is
        # 4u * sum |terms| + u * |sum|
        u = 2.0 ** (-7 if self.env.combine_dtype == "bf16" else -23)
        bound = 4 * u * self.mag64 + u * np.abs(self.sum64)
        return (self.sum64 + 3 * bound).astype(np.float32)


def create(env):
    return Faulty(env, parse(env.options))


def dispatch(engine, inp):
    if engine.fault == "mark":
        engine.env.mark(0)
        engine.env.mark(0)
    return ref.dispatch(engine, inp)


combine, destroy = ref.combine, ref.destroy
