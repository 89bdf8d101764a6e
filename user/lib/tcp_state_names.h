/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* TCP state numbers (include/net/tcp_states.h) and the lowercase names
 * connscope prints and uses as JSON keys. */
#ifndef CONNSCOPE_TCPSTATES_H
#define CONNSCOPE_TCPSTATES_H

enum {
	CS_TCP_ESTABLISHED = 1,
	CS_TCP_SYN_SENT,
	CS_TCP_SYN_RECV,
	CS_TCP_FIN_WAIT1,
	CS_TCP_FIN_WAIT2,
	CS_TCP_TIME_WAIT,
	CS_TCP_CLOSE,
	CS_TCP_CLOSE_WAIT,
	CS_TCP_LAST_ACK,
	CS_TCP_LISTEN,
	CS_TCP_CLOSING,
	CS_TCP_NEW_SYN_RECV,
	CS_TCP_MAX_STATES,
};

/* "established", "syn_sent", ...; "unknown" out of range. */
const char *tcp_state_name(int state);

/* The states in the order summary tables and JSON list them. */
extern const int tcp_state_order[11];
#define TCP_STATE_ORDER_LEN 11

/* States in which a socket closed by its application can linger. */
static inline int tcp_state_orphanable(int s)
{
	return s == CS_TCP_FIN_WAIT1 || s == CS_TCP_FIN_WAIT2 || s == CS_TCP_CLOSING ||
	       s == CS_TCP_LAST_ACK;
}

#endif
