/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Socket-storage mode's seeds: a connection held since before the attach,
 * adopted at its first send or read (seed_adopt), its storage made whole
 * in one step. Part of tcpstate_sk.bpf.h (included there, after the state
 * program, before the traffic it is adopted at), in a file of its own by
 * concern. */
#ifndef CONNSCOPE_TCPSTATE_SK_SEED_BPF_H
#define CONNSCOPE_TCPSTATE_SK_SEED_BPF_H

/* A task's read, or the kernel's own (here for handoff_taken, and the
 * traffic's programs after): kTLS's parser reads a socket in a
 * kworker, sockmap's verdict in a softirq (on x86-64 the interrupt's own
 * stack, not the task's). Only a task's read may settle an owner. */
#define PF_KTHREAD 0x00200000		/* include/linux/sched.h */
/* The task's kernel stack size, THREAD_SIZE: x86-64's interrupt stacks are
 * that size (struct irq_stack, IRQ_STACK_SIZE), and its BTF says it (16
 * KiB; 32 with KASAN, where a fixed 16 took every read for not a task's,
 * and a listener's child settled only at its first send or close). */
static __always_inline __u64 thread_size(void)
{
	if (bpf_core_type_exists(struct irq_stack))
		return bpf_core_type_size(struct irq_stack);
	return 16384;
}

static __always_inline bool rx_in_task(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 sp = (__u64)&task, base = (__u64)task->stack;

	return !(task->flags & PF_KTHREAD) && sp >= base && sp < base + thread_size();
}

/* A seed's image, made in one of this CPU's slots and handed whole to
 * bpf_sk_storage_get (which copies it in as it creates the storage), as
 * sk_state_new's image on the stack is: the send and read programs have
 * no room for it on theirs (cs_sk with the sends' snd_seq took them past
 * 512 bytes). A slot is held as quicwire's scratch is (agent_slot_hold):
 * a run that finds a slot held, by a run it interrupted (a softirq's read
 * or state change over a task's send) or, on a preemptible kernel, one
 * preempted on this CPU, tries the next, so no two runs fill one slot at
 * once. */
#define SEED_SLOTS 4

struct seed_slot {
	struct cs_sk img;
	__u32 busy;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SEED_SLOTS);
	__type(key, __u32);
	__type(value, struct seed_slot);
} seed_scratch SEC(".maps");

/* Slot i of this CPU's, held (busy) until agent_slot_put; NULL if held. */
static __always_inline struct seed_slot *seed_slot_try(__u32 i)
{
	struct seed_slot *s = bpf_map_lookup_elem(&seed_scratch, &i);

	return s && agent_slot_hold(&s->busy) ? s : NULL;
}

/* A free slot of this CPU's (written out: a loop over a key whose address
 * the lookup takes is not unrolled); NULL if all are held. */
static __always_inline struct seed_slot *seed_slot_get(void)
{
	struct seed_slot *s = seed_slot_try(0);

	if (!s)
		s = seed_slot_try(1);
	if (!s)
		s = seed_slot_try(2);
	if (!s)
		s = seed_slot_try(3);
	return s;
}

/* A socket at a port of a listener no target holds (handoff_port), met
 * without storage in a task of a target's: a connection that listener's
 * process accepted and handed to it (SCM_RIGHTS). Not in a kernel
 * context (kTLS, sockmap), whose current is any task's. */
static __always_inline bool handoff_taken(__u32 port)
{
	return handoff_port(port) && rx_in_task() && current_is_target();
}

/* A connection held since before we attached (a seed: seed_port), or
 * handed to a target after (handoff_taken), met first at a send or a
 * read, with no state change to adopt it: its storage made, and a seed's
 * adoption sent. NULL: neither, or no storage.
 * The storage is made from a whole image (seed_scratch), never zeroed
 * then filled in place: sock_send_length (where no tcp_sendmsg_locked
 * hook loads, --per-transition, a --btf file) runs after tcp_sendmsg()
 * released the socket's lock, so a softirq's state change or a read on
 * another CPU could find a half-made storage (sk 0) and take it for a
 * listener's clone (sk_child_adopt: booked passive, untold, under a
 * wrong owner). All slots held (a fifth nested run on one CPU): no
 * storage, counted as one that could not be made; the seed stays for a
 * later send or read. */
static __always_inline struct cs_sk *seed_adopt(const struct sock *sk)
{
	__u32 port = sk_local_port_btf(sk);
	struct cs_owner *found = NULL;
	struct seed_slot *slot;
	struct cs_tuple t;
	struct cs_sk *st;
	int state;

	if (seed_port(port)) {
		sk_read_tuple(sk, &t, true);
		found = bpf_map_lookup_elem(&seeds, &t);
	}
	if (!found && !handoff_taken(port))
		return NULL;
	slot = seed_slot_get();
	if (!slot) {
		stat_inc(CS_STAT_OWNER_FULL);
		return NULL;
	}
	__builtin_memset(&slot->img, 0, sizeof(slot->img));
	slot->img.sk = (__u64)sk;
	if (found) {
		slot->img.owner = *found;
		/* The books have it since the start: booked on the told key
		 * (CS_TOLD_BOOKS, as sk_state_new's seeds), so an end of it
		 * that no program runs is said lost, not counted opened. */
		slot->img.told = CS_TOLD_BIRTH | CS_TOLD_BOOKS;
		slot->img.sum = CS_SUM_BORN | CS_SUM_EST;
	} else {
		handoff_image(sk, &slot->img);
	}
	st = bpf_sk_storage_get(&sk_state, (struct sock *)sk, &slot->img,
				BPF_SK_STORAGE_GET_F_CREATE);
	agent_slot_put(&slot->busy);
	if (found)
		bpf_map_delete_elem(&seeds, &t);
	if (!st) {
		stat_inc(CS_STAT_OWNER_FULL);
		return NULL;
	}
	if (!found) {
		skb_made(sk, st);
		return st;
	}
	seed_rx_base(sk);
	skb_made(sk, st);
	state = sk->__sk_common.skc_state;
	emit_sk(sk, st, &st->owner, CS_EV_ADOPT, state, state, CS_F_NEW_OWNER, 0, 0);
	return st;
}

#endif /* CONNSCOPE_TCPSTATE_SK_SEED_BPF_H */
