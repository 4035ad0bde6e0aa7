/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * READ_ONCE and WRITE_ONCE for the BPF side: a load or store that clang makes exactly once,
 * where it stands (a word other CPUs write or read meanwhile). They order nothing: the
 * protocols that need order say how they get it (proc_lock.bpf.h, deferred.bpf.h).
 */
#ifndef INFLIGHT_ONCE_BPF_H
#define INFLIGHT_ONCE_BPF_H

#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif

#endif /* INFLIGHT_ONCE_BPF_H */
