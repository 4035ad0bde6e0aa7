#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""An independent model of the prover's MODELLED pipeline, for tests/t_prover_model.sh.

Written from docs/prover.md, not from the C: a discrete-event simulation of proof jobs of P
partitions, all admitted at time 0, each partition taking a synthesis permit (FIFO, in job
order), synthesizing for its seeded duration, sending into a bounded channel (FIFO for its
senders), then a GPU worker taking it and the one device running it for its seeded kernel
time (in the order the workers took them). The permit comes back after the synthesis (the
incident) or after the send. Durations are drawn exactly as the prover draws them
(splitmix64's mixer over the seed, a salt and the owner id). Prints the time the last
device region ends, in seconds: the prover's "makespan_s" should equal it, up to the few
microseconds the prover takes to admit its jobs, when no real work overran the model.
"""
import argparse
import heapq

MASK = (1 << 64) - 1
SALT_DEVICE = 0x646576
SALT_HOST = 0x686F7374


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def vary(mean, spread, seed, salt, owner):
    """mean * (1 + u), u uniform in [-spread, +spread] percent, in steps of 2^-32."""
    r = mix(mix(seed ^ (salt << 32)) ^ owner) >> 32
    delta = mean * spread * (2 * r - (1 << 32))
    q = abs(delta) // (100 << 32)  # C's division truncates toward zero
    return mean + (q if delta >= 0 else -q)


def ceil_div(a, b):
    return -(-a // b)


def shape(log_n):
    n = 1 << log_n
    n_input = min(n // 8, 328)
    rows = n - n // 32  # the chain, the tie row, the input rows; the rest is padding
    return n, rows, n_input


def simulate(a):
    n, rows, _ = shape(a.log_n)
    synth_mean = ceil_div(rows * a.synth_rounds * 1000000, a.synth_rate)
    ops = (7 + 2 * (a.gpu_rounds - 1)) * (n // 2) * a.log_n + 6 * n
    kernel_mean = ceil_div(ops * 1000, a.gpu_rate)
    owners = [(j << 16) | (i + 1) for j in range(1, a.proofs + 1) for i in range(a.partitions)]
    synth = {o: vary(synth_mean, a.synth_spread, a.seed, SALT_HOST, o) for o in owners}
    kernel = {o: vary(kernel_mean, a.gpu_spread, a.seed, SALT_DEVICE, o) for o in owners}

    permits = [0] * a.pw  # when each free permit came back
    slots = [0] * a.chan_cap  # when each empty slot was emptied
    line = list(owners)  # waiting for a permit, in ticket order
    senders, chan, takes = [], [], []  # (owner, time), in arrival order
    worker_ready = [0] * a.gw
    idle = list(range(a.gw))
    device = {"free_at": 0, "busy": False, "last": 0}
    events, seq = [], [0]

    def at(t, kind, what):
        seq[0] += 1
        heapq.heappush(events, (t, seq[0], kind, what))

    def start_syntheses():
        while line and permits:
            permits.sort()
            begin = permits.pop(0)
            o = line.pop(0)
            at(begin + synth[o], "synth", o)

    def send():
        while senders and len(chan) < a.chan_cap:
            o, ready = senders.pop(0)
            slots.sort()
            t = max(ready, slots.pop(0))
            chan.append((o, t))
            if a.release == "after-send":
                permits.append(t)
        start_syntheses()

    def take():
        while idle and chan:
            idle.sort(key=lambda w: worker_ready[w])
            w = idle.pop(0)
            o, sent = chan.pop(0)
            t = max(worker_ready[w], sent)
            slots.append(t)
            takes.append((o, t, w))
            send()
        run_device()

    def run_device():
        if not device["busy"] and takes:
            o, t, w = takes.pop(0)
            begin = max(t, device["free_at"])
            device["busy"] = True
            at(begin + kernel[o], "region", w)

    start_syntheses()
    while events:
        t, _, kind, what = heapq.heappop(events)
        if kind == "synth":
            if a.release == "after-synth":
                permits.append(t)
            senders.append((what, t))
            send()
            take()
        else:
            device.update(free_at=t, busy=False, last=t)
            worker_ready[what] = t
            idle.append(what)
            take()
            run_device()
    return device["last"] / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("log-n", 17), ("pw", 4), ("gw", 2), ("chan-cap", 1),
                          ("proofs", 3), ("partitions", 10), ("synth-rate", 174),
                          ("synth-rounds", 1), ("synth-spread", 20), ("gpu-rate", 155),
                          ("gpu-rounds", 1), ("gpu-spread", 35), ("seed", 1)):
        p.add_argument("--" + name, type=int, default=default)
    p.add_argument("--release", choices=("after-synth", "after-send"), default="after-send")
    print("%.6f" % simulate(p.parse_args()))


if __name__ == "__main__":
    main()
