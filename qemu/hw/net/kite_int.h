/*
 * Kite NIC: device state shared by the model's files.
 *
 * kite.c owns the PCI function, BAR0 global registers, reset and
 * interrupts; kite_eth.c the Ethernet function; kite_rdma.c the command
 * queue and the UCTX/PD/MR/GID tables; kite_queue.c the event, completion
 * and work queues and the doorbell BAR; kite_srq.c shared receive queues
 * (and XRC SRQs);
 * kite_mw.c memory windows; kite_pbl.c page buffer lists; kite_engine.c
 * the RDMA data engine (RoCEv2 framing, UD, the receive side); kite_rc.c
 * the RC, UC and XRC transports (requester, responder, retransmission);
 * kite_mcast.c multicast groups; kite_cntr.c QP counter sets; kite_loss.c
 * loss, duplication and reordering on demand.
 *
 * Threading: every entry point (MMIO, bottom halves, timers, net backend
 * callbacks, QOM property setters) runs with the BQL held, so the state
 * below needs no further locking.
 *
 * Copyright (c) 2026 Kite
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_NET_KITE_INT_H
#define HW_NET_KITE_INT_H

#include "hw/pci/pci.h"
#include "net/net.h"
#include "qemu/timer.h"
#include "qom/object.h"

#include "kite_kshim.h"
#include "kite_eth.h"

#define TYPE_KITE "kite"
OBJECT_DECLARE_SIMPLE_TYPE(KiteState, KITE)

/* Object table sizes (QUERY_DEVICE limits). */
#define KITE_MAX_UCTX           256     /* 1..255; 0 is the kernel */
#define KITE_MAX_PD             1024    /* PDN 0 never allocated */
#define KITE_MAX_EQ             64
#define KITE_MAX_CQ             1024    /* CQN 0 never allocated */
#define KITE_MAX_QP             1024    /* QPN 0 never, 1 only for GSI */
#define KITE_MAX_MR             4096    /* key index 0 never allocated */
#define KITE_MAX_SRQ            256     /* SRQN 0 never allocated */
#define KITE_MAX_XRCD           256     /* XRC domain 0 never allocated */
#define KITE_MAX_CNTR           64      /* QP counter sets; 0 is the default */
#define KITE_GID_TBL_LEN        16
/* Multicast groups (kite_mcast.c). */
#define KITE_MAX_MCAST_GRP              64
#define KITE_MAX_MCAST_QP_ATTACH        32      /* QPs per group */
#define KITE_MAX_TOTAL_MCAST_QP_ATTACH  512     /* attachments in all */
#define KITE_GSI_QPN            1

/* Commands executed per command queue bottom-half run. */
#define KITE_CMDQ_BUDGET        16
/* Pending doorbells handled per doorbell bottom-half run. */
#define KITE_DB_BUDGET          64
/* WQEs the data engine executes or flushes per bottom-half run. */
#define KITE_ENGINE_BUDGET      32
/* Engine runs a command may make first (kite_engine_drain()). */
#define KITE_ENGINE_DRAIN_RUNS  64
/* WQEs of one queue per turn, so that busy QPs do not starve others. */
#define KITE_ENGINE_QP_BURST    8

/* The largest payload of one RoCE packet: the largest path MTU, 4096. */
#define KITE_ROCE_MAX_PAYLOAD   KITE_MTU_BYTES(KITE_MTU_4096)
/* The GRH area ahead of a UD receive buffer's data (IBA 11.4.1.1). */
#define KITE_GRH_LEN            40

/*
 * The largest RoCEv2 frame the engine builds: Ethernet 14, 802.1Q 4,
 * IPv6 40, UDP 8, BTH 12, XRCETH 4, RETH 16 (or DETH 8), ImmDt 4, 4096
 * bytes of payload, 3 pad bytes and the ICRC.
 */
#define KITE_ROCE_MAX_FRAME     (14 + 4 + 40 + 8 + 12 + 4 + 16 + 4 + \
                                 KITE_ROCE_MAX_PAYLOAD + 3 + 4)
#define KITE_ROCE_UDP_PORT      4791
#define KITE_GSI_QKEY           0x80010000u
#define KITE_ROCE_SPORT_MIN     0xc000

/* KITE_CQE_VENDOR_SYNDROME values (diagnostics only). */
/* The access bits of a QP (MODIFY_QP). */
#define KITE_ACCESS_ALL (KITE_ACCESS_LOCAL_WRITE | KITE_ACCESS_REMOTE_WRITE | \
                         KITE_ACCESS_REMOTE_READ | KITE_ACCESS_REMOTE_ATOMIC | \
                         KITE_ACCESS_FLUSH_GLOBAL)
/* The access bits of an MR (REG_MR command and work request). */
#define KITE_ACCESS_MR_ALL (KITE_ACCESS_ALL | KITE_ACCESS_MW_BIND)
/* The access bits of a memory window. */
#define KITE_ACCESS_REMOTE (KITE_ACCESS_REMOTE_WRITE | \
                            KITE_ACCESS_REMOTE_READ | \
                            KITE_ACCESS_REMOTE_ATOMIC)

#define KITE_VSYND_DMA          0x01    /* host memory access failed */
#define KITE_VSYND_UNSUPPORTED  0x02    /* not implemented by this engine */
#define KITE_VSYND_AV           0x03    /* malformed address vector */
#define KITE_VSYND_KEY          0x04    /* key, PD, access or bounds */
#define KITE_VSYND_WQE          0x05    /* malformed WQE */

/*
 * A validated page buffer list. Queues cache the data page addresses
 * (@pages, npages entries, NULL at level 0 where @addr is the page);
 * memory regions keep only the description.
 */
typedef struct KitePbl {
    uint64_t addr;
    uint32_t npages;
    uint8_t level;
    uint8_t page_shift;
    uint64_t *pages;
} KitePbl;

typedef struct KiteEQ {
    bool valid;
    bool armed;
    bool overflowed;
    uint8_t log_depth;
    uint8_t vector;
    uint32_t cfg;
    uint32_t pi;                /* EQEs written, free-running */
    uint16_t ci;                /* last consumer count from a doorbell */
    bool db_pending;            /* arm to evaluate in the doorbell BH */
    KitePbl pbl;
    /*
     * Adaptive interrupt moderation (prm_eq.rst), with mod_max_us != 0:
     * the hold-off now, when the vector was last raised, the CQEs written
     * to the EQ's CQs since then and, of those, the ones written while a
     * raise was held; when the hold-off ends, when the hold's last CQE
     * came (its beginning before the first) and the shortest time
     * between two of its CQEs so far (INT64_MAX: none yet).
     */
    KiteState *s;
    uint16_t mod_max_us;
    uint8_t mod_target;
    bool mod_held;
    uint32_t mod_hold_us;
    uint32_t mod_cqes;
    uint32_t mod_held_cqes;
    int64_t mod_last_raise;
    int64_t mod_due;
    int64_t mod_last_cqe;
    int64_t mod_min_gap;
    QEMUTimer *mod_timer;
} KiteEQ;

typedef struct KiteCQ {
    KiteState *s;
    uint32_t cqn;
    bool valid;
    uint32_t uctx;
    uint32_t eqn;
    uint32_t cfg;
    uint8_t log_depth;
    uint8_t cqe_shift;          /* 6 or 7 */
    uint16_t mod_count;
    uint16_t mod_period;
    uint64_t dbrec_addr;
    uint32_t state;             /* KITE_CQ_STATE_* */
    uint32_t pi;                /* CQEs written, free-running */
    uint32_t ci;                /* last read from the doorbell record */
    /* Event state machine. */
    uint8_t arm_state;          /* KITE_CQ_ARM_STATE_* */
    uint8_t last_sn;
    uint8_t last_fired_sn;
    bool sol_valid;             /* sol_idx names a solicited/error CQE */
    uint32_t sol_idx;
    uint32_t cqes_since_arm;
    bool fire_pending;          /* moderation is delaying a fire */
    QEMUTimer *mod_timer;
    /* A latched arm doorbell, evaluated in the doorbell BH. */
    bool db_pending;
    uint8_t db_cmd;
    uint8_t db_sn;
    KitePbl pbl;
} KiteCQ;

typedef struct KiteWQ {
    uint8_t log_depth;
    uint8_t wqe_shift;
    uint16_t pi;
    uint16_t ci;
    KitePbl pbl;
} KiteWQ;

/*
 * A receive WQE a QP took from its SRQ (kite_srq.c): the header and data
 * segments, validated, kept until the message it receives completes.
 */
typedef struct KiteRwqe {
    bool held;
    uint16_t tag;               /* the CQE's wqe_idx */
    uint32_t nsge;
    /* struct kite_wqe_sge[], read with kite_sge_decode() */
    uint8_t sge[KITE_MAX_SGE * sizeof(struct kite_wqe_sge)];
} KiteRwqe;

typedef struct KiteSRQ {
    bool valid;
    uint32_t pdn;
    uint32_t uctx;
    uint32_t cfg;
    uint32_t state;             /* KITE_SRQ_STATE_* */
    bool armed;
    uint32_t limit;
    uint32_t nqp;               /* QPs attached; XRC: always 0 */
    uint32_t xrcd;              /* an XRC SRQ: its domain; else 0 */
    uint32_t cqn;               /* XRC: the CQ of its receive completions */
    KiteWQ wq;
} KiteSRQ;

/* RC transport state of a QP (kite_rc.c); zero in RESET. */
#define KITE_RC_RDQ             128     /* max_dest_rd_atomic limit */
#define KITE_RC_RSPQ            (2 * KITE_RC_RDQ + 1)
/*
 * Requester limits: WQEs outstanding, how far past the oldest
 * unacknowledged PSN a packet may be, AckReq inside long messages.
 */
#define KITE_RC_SQ_WINDOW       16
#define KITE_RC_PSN_WINDOW      64
#define KITE_RC_ACKREQ_EVERY    32
/*
 * Congestion window: how far past the oldest unacknowledged PSN a packet
 * may be, at most KITE_RC_PSN_WINDOW. AIMD as in TCP: halved at each loss
 * (each go-back-N), down to KITE_RC_CWND_MIN; one more packet for every
 * window's worth of packets acknowledged. A wire drops what it cannot
 * buffer (the emulated one: what its sockets' receive buffers cannot
 * hold); a window that does not back off turns one loss into a storm of
 * retransmissions.
 */
#define KITE_RC_CWND_MIN        4
/*
 * Adaptive retransmission (prm_qp.rst): the shortest probe timeout, and
 * how many probes (each waiting twice as long as the one before) may go
 * out before progress or the local ACK timeout.
 */
#define KITE_RC_RTO_MIN_NS      (2 * SCALE_MS)
#define KITE_RC_PROBES_MAX      8

/* A requester WQE started and not yet completed. */
typedef struct KiteRcSwqe {
    uint8_t op;                 /* KITE_WQE_OP_* */
    bool signaled;              /* completes with a CQE */
    uint16_t wqe_idx;
    uint32_t mtu;               /* the path MTU it was segmented by */
    uint32_t first_psn;         /* PSN of its first packet */
    uint32_t npsn;              /* PSNs it uses */
    uint32_t acked;             /* PSNs acknowledged or answered */
    uint64_t total;             /* message length */
    int64_t sent_ns;            /* QEMU_CLOCK_VIRTUAL of its first packet */
    bool resent;                /* sent again: no round-trip sample */
    uint32_t xrc_srqn;          /* XRC initiator: the XRCETH of its packets */
} KiteRcSwqe;

/* A response the responder owes, sent in order by the engine. */
#define KITE_RC_RSP_ACK         0       /* ACK or NAK */
#define KITE_RC_RSP_READ        1
#define KITE_RC_RSP_ATOMIC      2

typedef struct KiteRcResp {
    uint8_t kind;               /* KITE_RC_RSP_* */
    uint8_t synd;               /* ACK: AETH syndrome */
    bool replay;                /* READ: answers a duplicate request */
    uint16_t mr_index;          /* READ: the MR validated at acceptance */
    uint32_t mr_gen;            /* READ: its registration (KiteMR.gen) */
    uint32_t psn;               /* READ: PSN of the first response */
    uint32_t msn;
    uint32_t len;               /* READ */
    uint64_t val;               /* READ: address; atomic: original value */
} KiteRcResp;

/*
 * A READ, atomic, ATOMIC WRITE or FLUSH request the responder accepted,
 * kept to answer its duplicates (the last KITE_RC_RDQ of them, at least
 * max_dest_rd_atomic).
 */
#define KITE_RC_HIST_READ       1
#define KITE_RC_HIST_ATOMIC     2
#define KITE_RC_HIST_AWRITE     3       /* ATOMIC WRITE */
#define KITE_RC_HIST_FLUSH      4

typedef struct KiteRcHist {
    uint8_t kind;               /* KITE_RC_HIST_*, 0: unused */
    uint16_t mr_index;          /* READ: the MR validated at acceptance */
    uint32_t mr_gen;
    uint32_t psn;               /* first PSN */
    uint32_t npsn;              /* PSNs it uses */
    uint64_t abs;               /* its first PSN counted from RTR */
    uint32_t key;               /* READ: R_Key */
    uint32_t len;               /* READ: DMA length */
    uint64_t va;                /* READ: address */
    uint64_t orig;              /* atomic: the original value */
} KiteRcHist;

typedef struct KiteRcState {
    /*
     * Requester: the WQEs from sq.ci to sq.ci + nout - 1 are outstanding
     * (swqe[], indexed by SQ counter modulo the window); the next packet
     * to send is packet tx_pkt of WQE sq.ci + tx.
     */
    KiteRcSwqe swqe[KITE_RC_SQ_WINDOW];
    uint16_t nout;
    uint16_t nrd;               /* outstanding READ and atomic WQEs */
    uint16_t tx;
    uint32_t tx_pkt;
    bool tx_blocked;            /* WQE sq.ci + tx failed: wait to head */
    bool reg_wait;              /* a REG_MR failed early: wait for none out */
    uint16_t cwnd;              /* congestion window, 0: KITE_RC_PSN_WINDOW */
    uint16_t cwnd_acked;        /* packets acknowledged towards cwnd + 1 */
    /* Packets, and messages ended, since the last packet with AckReq. */
    uint16_t noack;
    uint16_t noack_msgs;
    uint8_t retry;              /* transport retries left */
    uint8_t rnr_retry;          /* RNR retries left */
    bool timed_out;             /* the timer expired: retransmit */
    bool retry_started;         /* went back, no progress since */
    bool rnr_wait;              /* deadline is an RNR back-off */
    int64_t deadline;           /* QEMU_CLOCK_VIRTUAL ns, 0: none */
    /* Adaptive retransmission: message round trips (ns) and probes. */
    bool rtt_known;
    int64_t srtt;
    int64_t rttvar;
    uint8_t probes;             /* probes since progress */
    bool probe_due;             /* the probe timer expired: go back */
    int64_t probe_deadline;     /* QEMU_CLOCK_VIRTUAL ns, 0: none */

    /* Responder. */
    bool comm_est;              /* KITE_EQE_QP_COMM_EST posted */
    uint32_t epsn;              /* expected PSN */
    uint64_t epsn_abs;          /* PSNs executed since RTR, not wrapping */
    uint32_t msn;
    bool nak_sent;              /* sequence NAK sent for epsn */
    bool in_send;               /* inside a SEND: RQ WQE at rq.ci */
    bool in_write;              /* inside a WRITE */
    bool uc_drop;               /* UC: dropping until a message's first packet */
    uint32_t send_off;          /* bytes of the message so far */
    uint64_t wr_va;
    uint32_t wr_key;
    uint32_t wr_len;
    uint32_t wr_off;
    /* Responses (ACKs, READ responses, atomic ACKs) in PSN order. */
    KiteRcResp rsp[KITE_RC_RSPQ];
    uint16_t rsp_head;          /* up to KITE_RC_RSPQ - 1: wider than 8 bits */
    uint16_t rsp_n;
    uint16_t rsp_rd;            /* READ and atomic entries */
    uint32_t rd_pkt;            /* next response packet of a READ head */
    /* Accepted READ and atomic requests, a ring; the next one at hist_next. */
    KiteRcHist hist[KITE_RC_RDQ];
    uint8_t hist_next;
} KiteRcState;

typedef struct KiteQP {
    bool valid;
    uint32_t type;              /* KITE_QPT_* */
    uint32_t flags;
    uint32_t pdn;
    uint32_t send_cqn;
    uint32_t recv_cqn;
    uint32_t uctx;
    uint32_t sq_cfg;
    uint32_t rq_cfg;
    uint8_t state;              /* KITE_QPS_* */
    uint32_t attr_mask;         /* KITE_QP_ATTR_* the QP has */
    struct kite_cmd_modify_qp attr;     /* little-endian, as in commands */
    KiteWQ sq;
    KiteWQ rq;                  /* unused with an SRQ */
    uint64_t rq_dbrec;          /* KITE_QP_F_RQ_DBREC: its record; else 0 */
    /*
     * 0: receives from rq. An XRC target: the XRC SRQ of the last request
     * (and of the message in progress), which also set pdn.
     */
    uint32_t srqn;
    uint32_t xrcd;              /* an XRC target: its domain */
    KiteRwqe rwqe;              /* SRQ: the WQE of the message in progress */
    bool last_wqe;              /* SRQ: KITE_EQE_QP_LAST_WQE posted */
    uint32_t cntr;              /* the counter set it counts in */
    KiteRcState rc;
} KiteQP;

/* A QP counter set (kite_cntr.c); set 0 always exists. */
typedef struct KiteCntr {
    bool valid;
    uint32_t nqp;               /* QPs counting in it */
    uint64_t v[KITE_QP_STAT_COUNT];
} KiteCntr;

#define KITE_MR_STATE_VALID     0       /* window: bound */
#define KITE_MR_STATE_INVALID   1       /* fast registration, not mapped;
                                           window: unbound or invalidated */

/*
 * An entry of the memory translation table: a memory region, or a memory
 * window (mw_type != 0, kite_mw.c), which shares the table's key space.
 */
typedef struct KiteMR {
    bool valid;
    uint8_t tag;
    uint8_t state;              /* KITE_MR_STATE_* */
    bool fast;                  /* created by ALLOC_MR */
    uint8_t mw_type;            /* a window: KITE_MW_TYPE_*; an MR: 0 */
    uint32_t gen;               /* registration number, unique per reset */
    uint8_t alloc_tag;          /* fast, window: the tag it was allocated with */
    uint32_t pdn;
    uint32_t uctx;
    uint32_t access;            /* window: KITE_ACCESS_REMOTE_* */
    uint32_t flags;
    uint32_t max_pages;
    uint64_t iova;              /* window: its first address in the MR */
    uint64_t length;            /* window: 0 while unbound */
    uint64_t dm_off;            /* KITE_MR_F_DM: iova's offset in BAR4 */
    KitePbl pbl;                /* description only, no page cache */
    uint32_t nmw;               /* MR: windows bound to it */
    uint32_t mw_mr;             /* bound window: the MR's index */
    uint32_t mw_qpn;            /* bound type 2 window: its QP */
} KiteMR;

typedef struct KiteGid {
    bool valid;
    uint32_t type;              /* KITE_NET_* */
    uint8_t gid[16];
    uint8_t mac[6];
    uint16_t vlan;
} KiteGid;

/* A multicast group: in use while a QP is attached (nqp > 0). */
typedef struct KiteMcg {
    uint8_t gid[16];
    uint32_t nqp;
    uint32_t qpn[KITE_MAX_MCAST_QP_ATTACH];
} KiteMcg;

typedef struct KiteRdma {
    /* Command queue. */
    uint32_t cmdq_base_lo;
    uint32_t cmdq_base_hi;
    uint32_t cmdq_cfg;
    uint32_t cmdq_pi;
    uint32_t cmdq_ci;
    uint32_t cmdq_status;
    QEMUBH *cmdq_bh;

    /* Doorbells latched for the doorbell bottom half. */
    QEMUBH *db_bh;
    DECLARE_BITMAP(eq_db_pending, KITE_MAX_EQ);
    DECLARE_BITMAP(cq_db_pending, KITE_MAX_CQ);

    bool uctx[KITE_MAX_UCTX];
    struct {
        bool valid;
        uint32_t uctx;
    } pd[KITE_MAX_PD];
    KiteEQ eq[KITE_MAX_EQ];
    KiteCQ cq[KITE_MAX_CQ];
    KiteQP qp[KITE_MAX_QP];
    uint32_t next_qpn;          /* where the round-robin QPN search starts */
    KiteMR mr[KITE_MAX_MR];
    KiteGid gid[KITE_GID_TBL_LEN];
    KiteSRQ srq[KITE_MAX_SRQ];
    bool xrcd[KITE_MAX_XRCD];
    KiteCntr cntr[KITE_MAX_CNTR];
    KiteMcg mcg[KITE_MAX_MCAST_GRP];
    uint32_t mcast_attached;    /* attachments in all groups */
    uint32_t mr_gen;            /* the last KiteMR.gen handed out */

    /* Events dropped because EQ0 did not exist (QOM "dropped-events"). */
    uint32_t dropped_events;

    /* RDMA data engine (kite_engine.c). */
    QEMUBH *engine_bh;
    DECLARE_BITMAP(sq_pending, KITE_MAX_QP);
    DECLARE_BITMAP(rq_pending, KITE_MAX_QP);
    uint32_t engine_cursor;     /* next QPN to look at, round robin */
    bool engine_tx_waiting;     /* the backend queued a frame */
    uint32_t fault_icrc;        /* corrupt the ICRC of the next N frames */
    uint8_t engine_frame[KITE_ROCE_MAX_FRAME];
    uint8_t rc_frame[KITE_ROCE_MAX_FRAME];      /* responder's packets */
    /*
     * Scratch buffers, per device: the model runs under the BQL, one
     * thread, and no path keeps its buffer across a return. The UD
     * requester (kite_ud_send()) gathers a message into ud_payload; the
     * UD receive path (kite_ud_deliver()) puts the GRH area and the
     * payload together in ud_msg; the RC requester (kite_rc_send_pkt())
     * gathers a packet's payload into rc_payload; the RC responder
     * (kite_rc_read_resp()) reads a READ response packet's payload into
     * rc_read_payload.
     */
    uint8_t ud_payload[KITE_ROCE_MAX_PAYLOAD];
    uint8_t ud_msg[KITE_GRH_LEN + KITE_ROCE_MAX_PAYLOAD];
    uint8_t rc_payload[KITE_ROCE_MAX_PAYLOAD];
    uint8_t rc_read_payload[KITE_ROCE_MAX_PAYLOAD];
    QEMUTimer *rc_timer;        /* RC ack and RNR timeouts, all QPs */
    /* QPs that armed a deadline since the timer last found them idle. */
    DECLARE_BITMAP(rc_timed, KITE_MAX_QP);

    /* Fault injection (QOM properties). */
    bool fault_cmd_hang;
    int32_t fault_cmd_opcode;
    uint8_t fault_cmd_status;
} KiteRdma;

/*
 * Device-side fuzzing (QOM "fault-corrupt", "fault-corrupt-count",
 * "fault-seed", "fault-injected"): corrupt what the driver reads from DMA
 * memory and registers, at the point where the model writes or answers it.
 */
typedef enum KiteFault {
    KITE_FAULT_CQE_CQN,         /* the CQE goes to another CQ */
    KITE_FAULT_CQE_QPN,         /* a QPN no QP has */
    KITE_FAULT_CQE_WQE_IDX,     /* a WQE index that is not outstanding */
    KITE_FAULT_CQE_OPCODE,      /* an undefined CQE opcode */
    KITE_FAULT_CQE_LEN,         /* a byte count beyond any posted length */
    KITE_FAULT_CQE_OWNER,       /* the owner bit of the other pass */
    KITE_FAULT_CQE_SYNDROME,    /* an error CQE with an undefined syndrome */
    KITE_FAULT_EQE_TYPE,        /* an undefined event type */
    KITE_FAULT_EQE_OBJ,         /* an object number no object has */
    KITE_FAULT_CMD_COOKIE,      /* CMD_DONE with a cookie never posted */
    KITE_FAULT_CMD_STATUS,      /* an undefined completion status code */
    KITE_FAULT_CMD_RESULT,      /* a result (number, key, count) off range */
    KITE_FAULT_REG_STATUS,      /* STATUS: reserved bits, READY clear */
    KITE_FAULT_REG_VERSION,     /* HW_REV / FW_VER: another revision */
    KITE_FAULT_COUNT
} KiteFault;

typedef struct KiteFuzz {
    uint32_t mask;              /* BIT(KiteFault) of the classes armed */
    uint32_t count;             /* corruptions left */
    uint64_t rng;               /* xorshift64* state, from fault-seed */
    uint32_t injected[KITE_FAULT_COUNT];
} KiteFuzz;

/* Loss on demand (QOM "loss-*", kite_loss.c). */
typedef enum KiteLossDir {
    KITE_LOSS_RX,               /* RoCEv2 frames from the wire */
    KITE_LOSS_TX,               /* RoCEv2 frames sent, loopback included */
    KITE_LOSS_DIRS
} KiteLossDir;

typedef struct KiteLossPath {
    uint32_t drop;              /* per mille */
    uint32_t dup;
    uint32_t reorder;
    uint8_t *held;              /* a frame held back, delivered later */
    size_t held_len;
    uint64_t dropped;
    uint64_t duplicated;
    uint64_t reordered;
} KiteLossPath;

typedef struct KiteLoss {
    KiteLossPath path[KITE_LOSS_DIRS];
    uint64_t seed;
    uint64_t rng;               /* xorshift64* state */
    QEMUTimer *timer;           /* releases held frames */
} KiteLoss;

/* RC transport counters (QOM "rc-counts"), for tests and diagnostics. */
typedef struct KiteRcCounts {
    uint64_t retries;           /* go-back-N started (timeout or early) */
    uint64_t early_retries;     /* started by a NAK, gap or lost response */
    uint64_t timeouts;          /* local ACK timeouts */
    uint64_t probes;            /* go-back-N started by the probe timer */
    uint64_t stale;             /* responses for PSNs already answered */
    uint64_t dup_requests;      /* duplicate requests received */
    uint64_t dup_replays;       /* READ/atomic answered from the history */
    uint64_t dup_dropped;       /* duplicate READ/atomic not in the history */
    uint64_t uc_dropped;        /* UC packets dropped (PSN, message, errors) */
} KiteRcCounts;

struct KiteState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion regs;
    MemoryRegion db;
    /* BAR4: device memory, RAM the guest maps; dm_ptr is its host view. */
    MemoryRegion dm;
    uint8_t *dm_ptr;

    QEMUTimer *reset_timer;
    uint32_t status;            /* without KITE_STATUS_LINK_UP */
    bool link_up;
    uint32_t icr;
    uint32_t imr;

    /*
     * The real-time clock (KITE_REG_RTC_*): rtc_base at the virtual-clock
     * instant rtc_virt, running at 1 + rtc_ppb / 10^9 nanoseconds per
     * nanosecond since; rtc_arg is the next command's argument.
     */
    int64_t rtc_base;
    int64_t rtc_virt;
    int32_t rtc_ppb;
    uint64_t rtc_arg;

    /* Bad guest writes seen (offsets or values), QOM "bad-writes". */
    uint32_t bad_writes;

    /*
     * Fault injection: "fault-fatal" makes the device fatal with a code;
     * with "fault-fatal-silent" it raises neither interrupt nor event (a
     * device that stops talking: only STATUS tells).
     */
    bool fault_fatal_silent;

    /* RC requesters probe before the local ACK timeout, "rc-rto-adaptive". */
    bool rc_rto_adaptive;

    uint64_t stats[KITE_STAT_COUNT];

    KiteEth eth;
    KiteRdma rdma;
    KiteFuzz fuzz;
    KiteLoss loss;
    KiteRcCounts rc_counts;

    /* Properties. */
    NICConf conf;
    uint32_t fw_ver;
    uint64_t serial;
    uint32_t reset_delay_us;
    uint32_t cmd_timeout_ms;    /* KITE_RDMA_CMD_TIMEOUT */
};

/* kite.c */
void kite_guest_error(KiteState *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void kite_dma_error(KiteState *s, const char *what, uint64_t addr,
                    uint64_t len, bool write);
bool kite_ready(KiteState *s);
void kite_raise_vector(KiteState *s, unsigned vector);
void kite_link_changed(KiteState *s, bool up);
uint32_t kite_fw_ver(KiteState *s);
uint64_t kite_clock_ns(void);
void kite_cqe_stamp(KiteState *s, struct kite_cqe *cqe);
uint32_t kite_hw_rev(void);

/* kite_rdma.c */
void kite_rdma_init(KiteState *s);
void kite_rdma_instance_init(KiteState *s);
void kite_rdma_exit(KiteState *s);
void kite_rdma_reset(KiteState *s);
uint32_t kite_rdma_read(KiteState *s, hwaddr off);
void kite_rdma_write(KiteState *s, hwaddr off, uint32_t val);
void kite_rdma_receive(KiteState *s, const uint8_t *buf, size_t len);
bool kite_uctx_valid(KiteState *s, uint32_t uctx);
uint8_t kite_active_mtu(KiteState *s);
bool kite_pd_valid(KiteState *s, uint32_t pdn);
bool kite_xrcd_valid(KiteState *s, uint32_t xrcd);

/* Command execution context. */
typedef struct KiteCmdCtx {
    uint8_t in[KITE_CMD_PAYLOAD_SIZE];
    uint16_t in_len;
    uint16_t out_len;
    bool out_dma;               /* out_addr != 0 */
    uint8_t *out;               /* out_len bytes, zeroed */
    uint32_t out_size;          /* bytes of output produced */
    uint32_t result;
    uint8_t code;
    uint16_t syndrome;
} KiteCmdCtx;

/* Complete ctx with an error code; returns false for "return" chaining. */
static inline bool kite_cmd_err(KiteCmdCtx *c, uint8_t code, size_t off)
{
    c->code = code;
    c->syndrome = off;
    return false;
}

/*
 * Output min(out_len / 8, @count) little-endian counters of @v; result: how
 * many. E_LENGTH unless out_len is a multiple of 8.
 */
void kite_cmd_put_counters(KiteCmdCtx *c, const uint64_t *v, uint32_t count);

/* struct kite_cmd_obj input; uctx must be zero unless @uctx_ok. */
static inline bool kite_cmd_obj_in(KiteCmdCtx *c, uint32_t *obj, bool uctx_ok)
{
    if (c->in_len < sizeof(struct kite_cmd_obj)) {
        return kite_cmd_err(c, KITE_CMD_E_LENGTH, 0);
    }
    if (!uctx_ok && ldl_le_p(c->in + offsetof(struct kite_cmd_obj, uctx))) {
        return kite_cmd_err(c, KITE_CMD_E_PARAM,
                            offsetof(struct kite_cmd_obj, uctx));
    }
    *obj = ldl_le_p(c->in + offsetof(struct kite_cmd_obj, obj));
    return true;
}

/* kite_queue.c: commands */
void kite_cmd_create_eq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_destroy_eq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_create_cq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_query_cq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_modify_cq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_destroy_cq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_create_qp(KiteState *s, KiteCmdCtx *c);
void kite_cmd_modify_qp(KiteState *s, KiteCmdCtx *c);
void kite_cmd_query_qp(KiteState *s, KiteCmdCtx *c);
void kite_cmd_destroy_qp(KiteState *s, KiteCmdCtx *c);
/* kite_queue.c: machinery */
void kite_queue_reset(KiteState *s);
void kite_eq_post(KiteState *s, uint32_t eqn, uint8_t type, uint32_t obj,
                  uint32_t data);
void kite_async_event(KiteState *s, uint8_t type, uint32_t obj,
                      uint32_t data);
bool kite_cq_write_cqe(KiteState *s, KiteCQ *cq, const struct kite_cqe *cqe);
void kite_qp_error(KiteState *s, uint32_t qpn);
KiteCQ *kite_cq_lookup(KiteState *s, uint32_t cqn);
bool kite_pd_used(KiteState *s, uint32_t pdn);
bool kite_uctx_used_by_queues(KiteState *s, uint32_t uctx);
bool kite_gid_get(KiteState *s, unsigned index, KiteGid *out);
extern const MemoryRegionOps kite_db_ops;
void kite_db_bh(void *opaque);
/* QOM "debug-cqe": CQN | flags, writes one synthetic CQE. */
#define KITE_DEBUG_CQE_SOLICITED        BIT(24)
#define KITE_DEBUG_CQE_ERROR            BIT(25)
void kite_debug_cqe(KiteState *s, uint32_t arg);

/* kite_rdma.c: device-side fuzzing */
bool kite_fault_take(KiteState *s, KiteFault f);
uint32_t kite_fault_rand(KiteState *s);
uint32_t kite_fault_reg(KiteState *s, hwaddr off, uint32_t val);
void kite_fault_cqe(KiteState *s, struct kite_cqe *cqe, bool *flip_owner);

/* kite_pbl.c */
/* Flags for kite_pbl_load(). */
#define KITE_PBL_QUEUE          BIT(0)  /* LAST/NEXT_TO_LAST rules */
#define KITE_PBL_CACHE          BIT(1)  /* keep the page list */
/*
 * Validate the PBL at byte @off of the command input and walk it.
 * @bytes: for queues, the queue size the PBL must describe exactly.
 * Returns false with c->code/syndrome set.
 */
bool kite_pbl_load(KiteState *s, KiteCmdCtx *c, size_t off, uint64_t bytes,
                   unsigned flags, KitePbl *pbl);
void kite_pbl_free(KitePbl *pbl);
/* Guest address of entry @idx (mod the queue depth) of @size bytes. */
uint64_t kite_pbl_entry(const KitePbl *pbl, uint32_t idx, uint8_t log_depth,
                        uint8_t entry_shift);

/* kite_engine.c: the RDMA data engine */
void kite_engine_init(KiteState *s);
void kite_engine_exit(KiteState *s);
void kite_engine_reset(KiteState *s);
/* Work may be pending on a queue of @qpn (doorbell, state change). */
void kite_engine_kick(KiteState *s, uint32_t qpn, bool sq, bool rq);
void kite_engine_drain(KiteState *s);
/* A RoCEv2 frame steered from the Ethernet function. */
void kite_engine_receive(KiteState *s, const uint8_t *buf, size_t len);
/*
 * The RoCEv2 ICRC of the IP packet at @l3 (IPv4 with a 20-byte header,
 * or IPv6), @len bytes from the IP header to the end of the payload and
 * pad, without the ICRC itself; to be stored little-endian.
 */
uint32_t kite_roce_icrc(const uint8_t *l3, size_t len, bool ipv6);

/* Engine internals shared by kite_engine.c and kite_rc.c. */
typedef struct KiteRoceTx {
    uint8_t dmac[6];
    uint8_t smac[6];
    uint16_t vlan;              /* KITE_VLAN_*, 0: untagged */
    bool ipv6;
    uint8_t sgid[16];
    uint8_t dgid[16];
    uint8_t hop_limit;
    uint8_t tclass;
    uint32_t flow_label;
    uint16_t sport;
    uint8_t opcode;             /* BTH opcode */
    bool solicited;
    bool ackreq;
    uint32_t dqpn;
    uint32_t psn;
    uint32_t qkey;
    uint32_t sqpn;
    bool has_imm;
    uint8_t imm[4];             /* as on the wire */
    bool rc;                    /* ext[] follows the BTH instead of DETH */
    bool xrc;                   /* an XRC request: XRCETH before ext[] */
    uint32_t xrc_srqn;          /* its XRCETH */
    uint8_t ext_len;
    uint8_t ext[32];
} KiteRoceTx;

typedef struct KiteRoceRx {
    const uint8_t *smac;
    bool vlan;
    uint16_t tci;
    bool ipv6;
    const uint8_t *l3;
    uint8_t opcode;
    bool solicited;
    bool ackreq;
    uint32_t dqpn;
    uint32_t psn;
    uint32_t qkey;
    uint32_t sqpn;
    bool has_imm;
    uint32_t imm;               /* raw, as on the wire */
    bool rc;                    /* RC or UC: ext[] follows the BTH */
    bool uc;                    /* UC; opcode is the RC equivalent */
    bool xrc;                   /* XRC; opcode is the RC equivalent */
    uint32_t xrc_srqn;          /* XRC request: the XRCETH's SRQ number */
    const uint8_t *ext;         /* RC: headers after the BTH (and XRCETH) */
    const uint8_t *payload;
    uint32_t len;
} KiteRoceRx;

size_t kite_roce_build(uint8_t *f, const KiteRoceTx *t,
                       const uint8_t *payload, uint32_t len);
uint16_t kite_roce_sport(uint32_t flow_label, uint32_t sqpn, uint32_t dqpn);
const char *kite_roce_parse(const uint8_t *buf, size_t len, KiteRoceRx *p);
void kite_rx_drop(KiteState *s, const char *why);
void kite_engine_xmit(KiteState *s, uint8_t *f, size_t len);
/* kite_engine_xmit() without the loss hooks (kite_loss.c). */
void kite_engine_xmit_now(KiteState *s, uint8_t *f, size_t len);
bool kite_dma_rw(KiteState *s, const char *what, uint64_t addr, void *buf,
                 uint64_t len, bool write);
KiteMR *kite_key_check(KiteState *s, uint32_t pdn, uint32_t key,
                       uint64_t addr, uint64_t len, uint32_t access);
/* A work request executed by the engine itself: LOCAL_INV, REG_MR, BIND_MW. */
static inline bool kite_wqe_op_local(uint8_t op)
{
    return op == KITE_WQE_OP_LOCAL_INV || op == KITE_WQE_OP_REG_MR ||
           op == KITE_WQE_OP_BIND_MW;
}

/* A data segment of a WQE (struct kite_wqe_sge), decoded. */
typedef struct KiteSge {
    uint32_t len;
    uint32_t key;
    uint64_t addr;
} KiteSge;

/* Decode data segment @i of the array @sges (struct kite_wqe_sge[]). */
static inline void kite_sge_decode(const uint8_t *sges, unsigned i,
                                   KiteSge *out)
{
    const uint8_t *sge = sges + i * sizeof(struct kite_wqe_sge);

    out->len = ldl_le_p(sge + offsetof(struct kite_wqe_sge, length));
    out->key = ldl_le_p(sge + offsetof(struct kite_wqe_sge, lkey));
    out->addr = ldq_le_p(sge + offsetof(struct kite_wqe_sge, addr));
}

/* The sum of the lengths of the @nsge data segments @sges. */
static inline uint64_t kite_sge_total(const uint8_t *sges, unsigned nsge)
{
    uint64_t total = 0;
    KiteSge sge;
    unsigned i;

    for (i = 0; i < nsge; i++) {
        kite_sge_decode(sges, i, &sge);
        total += sge.len;
    }
    return total;
}

bool kite_mr_rw(KiteState *s, KiteMR *mr, uint64_t addr, uint8_t *buf,
                uint64_t len, bool write);
uint32_t kite_synd(uint8_t synd, uint8_t vendor);
void kite_engine_cqe(KiteState *s, uint32_t cqn, struct kite_cqe *cqe,
                     uint8_t opcode);
void kite_req_cqe(KiteState *s, uint32_t qpn, KiteQP *qp,
                  uint16_t wqe_idx, uint8_t wqe_op, uint32_t synd);
void kite_resp_err_cqe(KiteState *s, uint32_t qpn, KiteQP *qp,
                       uint16_t wqe_idx, uint32_t synd);
void kite_engine_qp_fail(KiteState *s, uint32_t qpn, KiteQP *qp, bool send);
void kite_sq_one(KiteState *s, uint32_t qpn, KiteQP *qp);
/* Deliver the UD packet @p to @qp (state, Q_Key, receive WQE checked). */
void kite_ud_deliver(KiteState *s, uint32_t qpn, KiteQP *qp,
                     const KiteRoceRx *p);
uint32_t kite_rq_scatter_at(KiteState *s, KiteQP *qp, const uint8_t *msg,
                            uint32_t len, uint64_t at);
uint32_t kite_recv_scatter_sges(KiteState *s, KiteQP *qp, const uint8_t *sges,
                                uint32_t nsge, const uint8_t *msg,
                                uint32_t len, uint64_t at);

/*
 * kite_srq.c: shared receive queues, and the receive WQE source of a QP
 * (its RQ, or its SRQ) for the receive paths.
 */
void kite_cmd_create_srq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_modify_srq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_query_srq(KiteState *s, KiteCmdCtx *c);
void kite_cmd_destroy_srq(KiteState *s, KiteCmdCtx *c);
void kite_srq_reset(KiteState *s);
KiteSRQ *kite_srq_lookup(KiteState *s, uint32_t srqn);
void kite_db_srq(KiteState *s, hwaddr addr, unsigned page, uint64_t val);
bool kite_srq_pd_used(KiteState *s, uint32_t pdn);
bool kite_srq_uctx_used(KiteState *s, uint32_t uctx);
bool kite_srq_xrcd_used(KiteState *s, uint32_t xrcd);
bool kite_srq_cq_used(KiteState *s, uint32_t cqn);
/*
 * An XRC target's request names XRC SRQ @srqn: false if it names none of
 * the target's domain (or another SRQ than the message in progress);
 * else the SRQ becomes the QP's (srqn, and pdn for the key checks).
 */
bool kite_xrc_srq_use(KiteState *s, KiteQP *qp, uint32_t srqn);
/*
 * The CQ an XRC target's receives complete in: its last request's XRC
 * SRQ's (kite_xrc_srq_use()); 0 for another QP, or a target that has
 * taken no request yet.
 */
uint32_t kite_xrc_tgt_cqn(KiteState *s, const KiteQP *qp);
/* kite_recv_take(): no WQE could be taken (SRQ empty or in error). */
#define KITE_RECV_NONE          UINT32_MAX
/* A producer counter @pi of @wq no more than its depth ahead of the device. */
static inline bool kite_wq_pi_ok(const KiteWQ *wq, uint16_t pi)
{
    return (uint16_t)(pi - wq->ci) <= (1U << wq->log_depth);
}
/* KITE_QP_F_RQ_DBREC: the RQ's producer counter from its doorbell record. */
void kite_rq_dbrec_read(KiteState *s, uint32_t qpn, KiteQP *qp);
/* No receive WQE is available to start a message. */
bool kite_recv_empty(KiteState *s, KiteQP *qp);
/*
 * Start a message: an SRQ QP takes the WQE at the SRQ's consumer index.
 * 0, KITE_RECV_NONE, or a syndrome (the WQE was taken and is malformed).
 */
uint32_t kite_recv_take(KiteState *s, KiteQP *qp);
/* A WQE is taken or at the RQ's consumer index (a message in progress). */
bool kite_recv_busy(KiteQP *qp);
/* The wqe_idx of the message's CQE. */
uint16_t kite_recv_idx(KiteQP *qp);
/* The message's CQE was written: release its WQE. */
void kite_recv_done(KiteQP *qp);
/*
 * Write the receive CQE @cqe of @qp: to its receive CQ, or for an XRC
 * target to the CQ of the XRC SRQ of the message, with cqe.srqn set.
 */
void kite_recv_cqe(KiteState *s, KiteQP *qp, struct kite_cqe *cqe,
                   uint8_t opcode);
/*
 * A QP with an SRQ in ERR: flush its WQE, post the last-WQE event (not
 * for an XRC target).
 */
void kite_srq_qp_flush(KiteState *s, uint32_t qpn, KiteQP *qp);

/* kite_queue.c: a valid QP, or NULL */
KiteQP *kite_qp_lookup(KiteState *s, uint32_t qpn);

/* kite_cntr.c: QP counter sets */
void kite_cmd_alloc_cntr(KiteState *s, KiteCmdCtx *c);
void kite_cmd_dealloc_cntr(KiteState *s, KiteCmdCtx *c);
void kite_cmd_query_cntr(KiteState *s, KiteCmdCtx *c);
void kite_cmd_set_qp_cntr(KiteState *s, KiteCmdCtx *c);
void kite_cntr_reset(KiteState *s);
/* A QP joins (CREATE_QP) or leaves (DESTROY_QP) its counter set. */
void kite_cntr_qp_init(KiteState *s, KiteQP *qp);
void kite_cntr_qp_fini(KiteState *s, KiteQP *qp);

/* Count @n for KITE_QP_STAT_@stat in @qp's counter set. */
static inline void kite_qp_count(KiteState *s, KiteQP *qp, unsigned stat,
                                 uint64_t n)
{
    s->rdma.cntr[qp->cntr].v[stat] += n;
}

/* A RoCEv2 frame of @len bytes @qp sent. */
static inline void kite_qp_count_tx(KiteState *s, KiteQP *qp, size_t len)
{
    kite_qp_count(s, qp, KITE_QP_STAT_TX_PKTS, 1);
    kite_qp_count(s, qp, KITE_QP_STAT_TX_BYTES, len);
}
/* kite_mcast.c: UD multicast groups */
void kite_cmd_attach_mcast(KiteState *s, KiteCmdCtx *c);
void kite_cmd_detach_mcast(KiteState *s, KiteCmdCtx *c);
void kite_mcast_reset(KiteState *s);
/* DESTROY_QP: detach @qpn from every group. */
void kite_mcast_qp_destroyed(KiteState *s, uint32_t qpn);
bool kite_gid_is_v4mapped(const uint8_t *gid);
/* An IPv4-mapped 224.0.0.0/4 or an IPv6 ff00::/8 GID. */
bool kite_gid_is_mcast(const uint8_t *gid);
/* The Ethernet multicast address of the multicast GID @gid. */
void kite_mcast_mac(const uint8_t *gid, uint8_t *mac);
/* The parsed packet's destination address is a multicast one. */
bool kite_mcast_rx_is_mcast(const KiteRoceRx *p);
/* A packet with DestQP KITE_MCAST_QPN: to every QP of its group. */
void kite_mcast_receive(KiteState *s, const uint8_t *frame, size_t len,
                        const KiteRoceRx *p);
/* A multicast frame this port sends: its attached QPs receive it too. */
void kite_mcast_loopback(KiteState *s, const uint8_t *frame, size_t len);

/*
 * kite_mw.c: memory windows. They live in the memory translation table
 * (KiteMR with mw_type set); a bound window names the MR it opens.
 */
KiteMR *kite_mr_alloc(KiteState *s, KiteCmdCtx *c, uint8_t tag);
void kite_cmd_alloc_mw(KiteState *s, KiteCmdCtx *c);
void kite_cmd_dealloc_mw(KiteState *s, KiteCmdCtx *c);
/* The window entry @key's index names, or NULL (tag not checked). */
KiteMR *kite_mw_lookup(KiteState *s, uint32_t key);
/* Execute the BIND_MW WQE @wqe (one stride) of @qp: 0 or a syndrome. */
uint32_t kite_mw_bind(KiteState *s, uint32_t qpn, KiteQP *qp,
                      const uint8_t *wqe, uint32_t stride);
/*
 * LOCAL_INV or SEND_WITH_INV of the window @mw by @qp, with @key: false if
 * the key or the window's state, type or QP forbid it.
 */
bool kite_mw_invalidate(KiteState *s, uint32_t qpn, KiteQP *qp, KiteMR *mw,
                        uint32_t key);
/*
 * A remote key for [addr, addr + len) with @access on @qp: an MR's key
 * (kite_key_check()) or a bound window's; the MR to access, or NULL.
 */
KiteMR *kite_rkey_check(KiteState *s, uint32_t qpn, KiteQP *qp, uint32_t key,
                        uint64_t addr, uint64_t len, uint32_t access);
/* QP @qpn is destroyed: the type 2 windows bound to it are invalidated. */
void kite_mw_qp_destroyed(KiteState *s, uint32_t qpn);

/* kite_loss.c: loss on demand */
void kite_loss_instance_init(KiteState *s);
void kite_loss_init(KiteState *s);
void kite_loss_reset(KiteState *s);
void kite_loss_exit(KiteState *s);
/* A frame on path @dir: dropped, held back, delivered once or twice. */
void kite_loss_frame(KiteState *s, KiteLossDir dir, uint8_t *f, size_t len);

/* kite_rc.c: the RC transport, and UC and XRC which share it */
static inline bool kite_qp_xrc(const KiteQP *qp)
{
    return qp->type == KITE_QPT_XRC_INI || qp->type == KITE_QPT_XRC_TGT;
}

/* RC, UC, XRC: the transports of kite_rc.c. */
static inline bool kite_qp_connected(const KiteQP *qp)
{
    return qp->type == KITE_QPT_RC || qp->type == KITE_QPT_UC ||
           kite_qp_xrc(qp);
}

/* Acknowledged transports: RC and XRC. */
static inline bool kite_qp_reliable(const KiteQP *qp)
{
    return qp->type == KITE_QPT_RC || kite_qp_xrc(qp);
}

/* An XRC opcode is the RC one + 0xa0 (IBA A14). */
#define KITE_XRC_OPCODE         0xa0
/* An RC opcode that a responder sends (READ responses, ACK, atomic ACK). */
bool kite_rc_opcode_is_response(uint8_t opcode);

void kite_rc_instance_init(KiteState *s);
void kite_rc_init(KiteState *s);
void kite_rc_reset(KiteState *s);
void kite_rc_exit(KiteState *s);
void kite_rc_qp_reset(KiteQP *qp);
int kite_rc_ext_len(uint8_t opcode);
uint32_t kite_engine_local_op(KiteState *s, uint32_t qpn, KiteQP *qp,
                              const uint8_t *wqe, uint32_t stride);
bool kite_rc_sq_process(KiteState *s, uint32_t qpn, KiteQP *qp, int *budget);
bool kite_rc_rq_process(KiteState *s, uint32_t qpn, KiteQP *qp, int *budget);
void kite_rc_receive(KiteState *s, uint32_t qpn, KiteQP *qp,
                     const KiteRoceRx *p);
/* kite_engine.c: count a received frame for QP @qpn (see the definition) */
void kite_qp_count_rx(KiteState *s, uint32_t qpn, size_t len, uint64_t drops);

#endif /* HW_NET_KITE_INT_H */
