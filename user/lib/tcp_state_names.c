// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "tcp_state_names.h"

static const char *const names[CS_TCP_MAX_STATES] = {
	[CS_TCP_ESTABLISHED] = "established", [CS_TCP_SYN_SENT] = "syn_sent",
	[CS_TCP_SYN_RECV] = "syn_recv",       [CS_TCP_FIN_WAIT1] = "fin_wait1",
	[CS_TCP_FIN_WAIT2] = "fin_wait2",     [CS_TCP_TIME_WAIT] = "time_wait",
	[CS_TCP_CLOSE] = "close",             [CS_TCP_CLOSE_WAIT] = "close_wait",
	[CS_TCP_LAST_ACK] = "last_ack",       [CS_TCP_LISTEN] = "listen",
	[CS_TCP_CLOSING] = "closing",         [CS_TCP_NEW_SYN_RECV] = "new_syn_recv",
};

const int tcp_state_order[TCP_STATE_ORDER_LEN] = {
	CS_TCP_ESTABLISHED, CS_TCP_SYN_SENT,  CS_TCP_SYN_RECV,	 CS_TCP_FIN_WAIT1,
	CS_TCP_FIN_WAIT2,   CS_TCP_TIME_WAIT, CS_TCP_CLOSE,	 CS_TCP_CLOSE_WAIT,
	CS_TCP_LAST_ACK,    CS_TCP_LISTEN,    CS_TCP_CLOSING,
};

const char *tcp_state_name(int state)
{
	if (state <= 0 || state >= CS_TCP_MAX_STATES)
		return "unknown";
	return names[state];
}
