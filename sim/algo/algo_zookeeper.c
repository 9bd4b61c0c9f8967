/* zookeeper: the lock recipe of the ZooKeeper documentation
 * (zookeeper.apache.org/doc/current/recipes.html#sc_recipes_Locks) against
 * one standalone ZooKeeper server, S1:
 *
 *  1. create() an EPHEMERAL_SEQUENTIAL znode under the lock's parent;
 *  2. getChildren(): the znode with the lowest sequence number holds the lock;
 *  3. otherwise exists() with a watch on the next lower znode only (no herd
 *     effect), and back to 2 when it is deleted;
 *  release: delete the znode. An ephemeral znode is deleted by the server
 *  when its session expires.
 *
 * Sessions follow SessionTrackerImpl and ExpiryQueue (apache/zookeeper,
 * zookeeper-server/.../server/ExpiryQueue.java): every request of a session,
 * a ping included, moves its expiry to roundToNextInterval(now + timeout) =
 * ((now + timeout) / tickTime + 1) * tickTime, in whole milliseconds of the
 * server's monotonic clock (Time.currentElapsedTime), and the expirer thread
 * closes the sessions of a bucket when that bucket's time comes. So a session
 * lives between its timeout and its timeout plus one tick after its last
 * request, and a time that falls exactly on a tick goes to the next bucket.
 * The negotiated timeout is clamped to [2, 20] ticks (ZooKeeperServer's
 * minSessionTimeout and maxSessionTimeout defaults). The client pings every
 * timeout/3 (ClientCnxn: readTimeout = 2/3 of the timeout, a ping when idle
 * for half of it) and gives up on a reply after readTimeout. Every operation
 * of a session that has expired is refused with SESSIONEXPIRED, whatever its
 * timing (the server's session check happens before anything else).
 *
 * A sequence number is the parent's cversion at the create, and cversion
 * counts every create and delete of a child (PrepRequestProcessor). Paths
 * repeat only when the parent is deleted and created again: then its
 * cversion starts from 0. That is zk-ruby/zk issue #34: with the parent
 * removed when empty (parent-cleanup=on, as zk-ruby's locker did), a client
 * whose session expired, reconnecting with a new session and deleting its
 * old path (release-by=path), deletes the znode of the client that holds the
 * lock now. release-by=czxid is the fix: stat the path first and delete it only
 * if its czxid (the zxid of its creation, unique for ever) is the one this
 * client created; zk-ruby's own fix compared the parent's ctime, to the same
 * effect. The grant's token is the znode's czxid: zxids only grow, so it is a
 * fencing token.
 *
 * zookeeper-multi is the same recipe, and each write to the data is a
 * ZooKeeper multi-op: check the lock znode and set the data in one
 * transaction (the resource lives in the lock service, issue 11 item 14).
 * R asks S1's state (lock_server_state) at the write's arrival: the write is
 * applied only when the writer's lock znode (its czxid, the token) still
 * exists with a live session. A paused or crashed S1 cannot run the
 * transaction, and the write fails. The data's own zxid is not counted.
 *
 * Not modelled: a quorum (S1 is a standalone server; leader election and
 * the followers' session forwarding are out), connection loss without
 * session loss (a client that reconnects within its session is the same
 * session here), ACLs, and more than ZK_MAX sessions or znodes at once. */
#include <stdio.h>
#include <string.h>

#include "lock.h"

#define ZK_MAX 256 /* sessions, znodes and watches S1 keeps at once */
#define NS_PER_MS 1000000

/* Requests (client -> S1) and replies. Requests carry the session in value
 * (0 = none), the path's sequence number in b. */
enum {
    ZK_CONNECT = 1, /* ttl_ns = requested timeout -> value = session, ttl_ns = negotiated */
    ZK_PING,
    ZK_CREATE,   /* ephemeral sequential under the parent (made if missing) -> b = seq, token = czxid */
    ZK_CHILDREN, /* b = my seq -> b = the next lower seq, -1 = mine is the lowest */
    ZK_EXISTS,   /* b = seq, with a watch -> b = 1 exists (watch set), 0 = gone */
    ZK_STAT,     /* b = seq -> token = its czxid */
    ZK_DELETE,   /* b = seq */
    ZK_DELETE_PARENT,
    ZK_REPLY, /* a = enum zk_rc */
    ZK_WATCH  /* S1 -> watcher: b = the seq whose znode was deleted */
};
enum zk_rc { ZK_OK = 0, ZK_NONODE, ZK_SESSION_EXPIRED, ZK_NOTEMPTY, ZK_FULL };

enum zk_release { ZK_RELEASE_PATH, ZK_RELEASE_CZXID };
enum zk_on_expired { ZK_EXPIRED_CONTINUE, ZK_EXPIRED_ABORT };
/* curator=: the client's connection states, as Apache Curator's
 * ConnectionStateManager posts them (off: a plain client, which learns only
 * of SESSIONEXPIRED), and which one the recipe stops its work on. */
enum zk_curator { ZK_CURATOR_OFF, ZK_CURATOR_SUSPENDED, ZK_CURATOR_LOST };
enum zk_conn { ZK_CONNECTED, ZK_SUSPENDED, ZK_LOST };

struct zk_config {
    sim_ns session_timeout_ns; /* asked for by the client */
    sim_ns tick_ns;            /* tickTime, a whole number of ms */
    int release;               /* enum zk_release */
    int parent_cleanup;        /* delete the parent when it is left empty (zk-ruby) */
    int on_expired;            /* enum zk_on_expired */
    int curator;               /* enum zk_curator */
};

struct zk_session {
    uint64_t id; /* 0 = slot free */
    int owner;   /* client node */
    int64_t timeout_ms;
    int64_t expire_ms; /* its ExpiryQueue bucket */
};

struct zk_znode {
    int used;
    int64_t seq;
    uint64_t czxid;
    uint64_t session;
    int owner;
};

struct zk_watch {
    int used;
    int client;
    uint64_t session;
    int64_t seq;
};

struct zk_server {
    uint64_t zxid;
    uint64_t next_session;
    int parent;               /* the lock's parent znode exists */
    int64_t cversion;         /* its child version: the next sequence number */
    int64_t fresh_seq;        /* one above every sequence number given (for the states) */
    int holder;               /* index of the lowest znode noted as granted, -1 = none */
    int sess_hi, zn_hi, w_hi; /* one past the highest slot of sess, zn, w ever used:
                                 nothing reads a slot at or above it, and a slot
                                 taken there (free_session, free_znode,
                                 free_watch) is written whole */
    uint64_t expirer;         /* timer handle, 0 = none */
    int64_t expirer_ms;       /* the bucket it is armed for */
    /* Last, and not zeroed before server_init (server_zero_size): 24 KiB
     * that zeroing cost each run of a ZooKeeper scenario for nothing. */
    struct zk_session sess[ZK_MAX];
    struct zk_znode zn[ZK_MAX];
    struct zk_watch w[ZK_MAX];
};

/* The lowest free slot of sess, zn or w, -1 when all ZK_MAX are taken: a
 * free slot below its hi, else hi itself (then raised by one). The slot a
 * scan of all ZK_MAX would find, since no slot at or above hi was used; the
 * caller writes a slot it takes whole. */
static int free_session(struct zk_server *s) {
    for (int i = 0; i < s->sess_hi; i++)
        if (!s->sess[i].id) return i;
    return s->sess_hi < ZK_MAX ? s->sess_hi++ : -1;
}
static int free_znode(struct zk_server *s) {
    for (int i = 0; i < s->zn_hi; i++)
        if (!s->zn[i].used) return i;
    return s->zn_hi < ZK_MAX ? s->zn_hi++ : -1;
}
static int free_watch(struct zk_server *s) {
    for (int i = 0; i < s->w_hi; i++)
        if (!s->w[i].used) return i;
    return s->w_hi < ZK_MAX ? s->w_hi++ : -1;
}

enum { T_EXPIRER = 1, T_PING, T_REQ, T_SILENCE, T_LOST };

/* States (lock_state): what a client or S1 knows at that moment. The last
 * two are zookeeper-multi's writes; zookeeper names the others only. */
enum {
    ZK_ST_SESSION,
    ZK_ST_SESSION_AGAIN,
    ZK_ST_CREATED,
    ZK_ST_WATCHING,
    ZK_ST_PRED_GONE,
    ZK_ST_LOWEST,
    ZK_ST_NODE_GONE,
    ZK_ST_TIMED_OUT,
    ZK_ST_CLIENT_EXPIRED,
    ZK_ST_EXPIRED_HOLDING,
    ZK_ST_SERVER_EXPIRED,
    ZK_ST_HOLDER_EXPIRED,
    ZK_ST_RELEASED,
    ZK_ST_DELETED_ANOTHER,
    ZK_ST_CZXID_KEPT,
    ZK_ST_PARENT_DELETED,
    ZK_ST_SEQ_REUSED,
    ZK_ST_RESTARTED,
    ZK_ST_COUNT_PLAIN, /* zookeeper's count; zookeeper-multi adds: */
    ZK_ST_MULTI_OK = ZK_ST_COUNT_PLAIN,
    ZK_ST_MULTI_FAILED,
    ZK_ST_COUNT
};
static const char *const state_names[ZK_ST_COUNT] = {
        "session-established",             /* client: CONNECT answered, a session */
        "session-reopened",                /* client: a new session after its old one expired */
        "znode-created",                   /* client: its ephemeral sequential znode exists */
        "watching-predecessor",            /* client: not the lowest, a watch on the next lower znode */
        "predecessor-gone",                /* client: the watched znode was deleted: look again */
        "lowest-znode",                    /* client: getChildren says its znode is the lowest: holds */
        "own-znode-gone",                  /* client: getChildren found its own znode deleted */
        "connection-loss",                 /* client: no reply within readTimeout */
        "session-expired",                 /* client: told SESSIONEXPIRED */
        "session-expired-holding",         /* client: told SESSIONEXPIRED while it believes it holds */
        "expirer-closed-session",          /* S1: a session's bucket came, the session is closed */
        "holder-znode-expired",            /* S1: the holder's ephemeral znode went with its session,
                                   the holder is not told */
        "released",                        /* S1: the holder deleted its own znode */
        "release-by-path-deleted-another", /* S1: a delete by path removed another client's znode */
        "release-czxid-mismatch",          /* client: the znode at its path is not its own: kept */
        "parent-deleted",                  /* S1: the empty parent went, sequence numbers restart */
        "sequence-reused",                 /* S1: a create got a sequence number given before */
        "server-restarted",                /* S1: restarted; every session gets a fresh timeout */
        "multi-applied",                   /* R: the multi's check found the writer's znode */
        "multi-failed"};                   /* R: the writer's znode or session is gone */

enum zk_phase { P_IDLE, P_ACQUIRE, P_WAIT_WATCH, P_RELEASE };
/* What the outstanding request is for. */
enum zk_step { S_NONE, S_CONNECT, S_CREATE, S_CHILDREN, S_EXISTS, S_STAT, S_DELETE, S_PARENT };

struct zk_client {
    uint32_t req; /* last request id */
    uint32_t out; /* outstanding request id, 0 = none */
    int step;     /* enum zk_step of out */
    uint32_t ping_req;
    uint64_t req_timer, ping_timer;
    uint64_t session;  /* 0 = none */
    int expired;       /* the session is known to have expired */
    sim_ns timeout_ns; /* negotiated */
    int phase;         /* enum zk_phase */
    int have_node;     /* a znode of ours (my_seq) may exist */
    int64_t my_seq;
    uint64_t my_czxid;
    int64_t watched; /* seq whose deletion we wait for */
    int holding;
    /* curator= on: the connection's state, and the timers that move it */
    int conn; /* enum zk_conn */
    uint64_t silence_timer, lost_timer;
    int gdel;          /* curator=: the recipe's release owes a delete of gdel_seq (guaranteed) */
    int64_t gdel_seq;  /* the lock znode it stopped working on */
    uint32_t gdel_req; /* that delete in flight, 0 = none */
};

static const struct zk_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

static void defaults(void *config) {
    struct zk_config *c = config;
    c->session_timeout_ns = 10 * SIM_NS_PER_S; /* kazoo's default timeout */
    c->tick_ns = 2 * SIM_NS_PER_S;             /* ZooKeeper's default tickTime */
    c->release = ZK_RELEASE_PATH;              /* the recipe: "simply delete the node" */
    c->parent_cleanup = 0;
    c->on_expired = ZK_EXPIRED_CONTINUE;
}

static int option(void *config, const char *key, const char *val, char *err, size_t n) {
    struct zk_config *c = config;
    if (strcmp(key, "session-timeout") == 0 || strcmp(key, "tick-time") == 0) {
        sim_ns v;
        if (lock_parse_duration(val, &v) != 0 || v < NS_PER_MS || v % NS_PER_MS != 0) {
            snprintf(err, n, "%s '%s' is not a positive whole number of milliseconds such as %s", key, val,
                     key[0] == 's' ? "10s" : "2000ms");
            return LSIM_EBAD_VALUE;
        }
        if (key[0] == 's') c->session_timeout_ns = v;
        else c->tick_ns = v;
        return 0;
    }
    if (strcmp(key, "release-by") == 0) {
        if (strcmp(val, "path") == 0) c->release = ZK_RELEASE_PATH;
        else if (strcmp(val, "czxid") == 0) c->release = ZK_RELEASE_CZXID;
        else {
            snprintf(err, n, "release-by '%s' is not path or czxid", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(key, "parent-cleanup") == 0) {
        if (lock_parse_bool(val, &c->parent_cleanup) != 0) {
            snprintf(err, n, "parent-cleanup '%s' is not on or off: whether a release deletes the empty parent", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(key, "curator") == 0) {
        if (strcmp(val, "off") == 0) c->curator = ZK_CURATOR_OFF;
        else if (strcmp(val, "suspended") == 0) c->curator = ZK_CURATOR_SUSPENDED;
        else if (strcmp(val, "lost") == 0) c->curator = ZK_CURATOR_LOST;
        else {
            snprintf(err, n,
                     "curator '%s' is not off (a plain client), suspended (Curator, the work stops on SUSPENDED) "
                     "or lost (Curator, the work stops on LOST)",
                     val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(key, "on-expired") == 0) {
        if (strcmp(val, "continue") == 0) c->on_expired = ZK_EXPIRED_CONTINUE;
        else if (strcmp(val, "abort") == 0) c->on_expired = ZK_EXPIRED_ABORT;
        else {
            snprintf(err, n, "on-expired '%s' is not continue or abort", val);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    snprintf(err, n,
             "unknown option '%s' for zookeeper; expected session-timeout, tick-time, release-by, parent-cleanup, "
             "on-expired, curator",
             key);
    return LSIM_EUNKNOWN_OPTION;
}

/* ---- S1: the ZooKeeper server ---------------------------------------------------- */

/* ExpiryQueue.roundToNextInterval: the next multiple of the interval strictly
 * after time (a time on a multiple goes to the next one). */
static int64_t round_to_next_interval(int64_t time_ms, int64_t interval_ms) {
    return (time_ms / interval_ms + 1) * interval_ms;
}

static int64_t now_ms(struct lock_ctx *ctx) { return lock_now(ctx, LOCK_CLOCK_MONO) / NS_PER_MS; }
static int64_t tick_ms(struct lock_ctx *ctx) { return cfg(ctx)->tick_ns / NS_PER_MS; }

static struct zk_session *session_of(struct zk_server *s, uint64_t id) {
    if (id == 0) return NULL;
    for (int i = 0; i < s->sess_hi; i++)
        if (s->sess[i].id == id) return &s->sess[i];
    return NULL;
}

/* Arm the expirer for the earliest bucket that holds a session. */
static void arm_expirer(struct lock_ctx *ctx, struct zk_server *s) {
    int64_t first = -1;
    for (int i = 0; i < s->sess_hi; i++)
        if (s->sess[i].id && (first < 0 || s->sess[i].expire_ms < first)) first = s->sess[i].expire_ms;
    if (s->expirer && first == s->expirer_ms) return;
    if (s->expirer) lock_cancel(ctx, s->expirer);
    s->expirer = 0;
    if (first < 0) return;
    sim_ns delay = first * NS_PER_MS - lock_now(ctx, LOCK_CLOCK_MONO);
    s->expirer = lock_timer(ctx, LOCK_CLOCK_MONO, delay > 0 ? delay : 0, T_EXPIRER, 0);
    s->expirer_ms = first;
}

static void touch(struct lock_ctx *ctx, struct zk_server *s, struct zk_session *se) {
    se->expire_ms = round_to_next_interval(now_ms(ctx) + se->timeout_ms, tick_ms(ctx));
    arm_expirer(ctx, s);
}

static int lowest(const struct zk_server *s) {
    int best = -1;
    for (int i = 0; i < s->zn_hi; i++)
        if (s->zn[i].used && (best < 0 || s->zn[i].seq < s->zn[best].seq)) best = i;
    return best;
}

static int znode_at(const struct zk_server *s, int64_t seq) {
    for (int i = 0; i < s->zn_hi; i++)
        if (s->zn[i].used && s->zn[i].seq == seq) return i;
    return -1;
}

/* The lowest znode is the holder: note a new one for the checker. */
static void note_holder(struct lock_ctx *ctx, struct zk_server *s) {
    int lo = lowest(s);
    if (lo < 0 || lo == s->holder) {
        s->holder = lo;
        return;
    }
    s->holder = lo;
    lock_note_grant(ctx, s->zn[lo].owner, s->zn[lo].czxid, 0, SIM_NEVER);
}

/* Delete znode i (by a request of requester, or by its session's expiry when
 * requester < 0): cversion moves, watches on its path fire. */
static void delete_znode(struct lock_ctx *ctx, struct zk_server *s, int i, int requester) {
    int was_holder = i == s->holder;
    int64_t seq = s->zn[i].seq;
    if (was_holder) {
        if (requester >= 0) lock_note_delete(ctx, requester, s->zn[i].owner);
        else lock_note_expire(ctx, s->zn[i].owner);
        s->holder = -1;
    } else if (requester >= 0 && requester != s->zn[i].owner) {
        lock_note(ctx, "delete: removed a waiting client's znode", seq, s->zn[i].owner);
    }
    if (requester < 0) lock_state(ctx, was_holder ? ZK_ST_HOLDER_EXPIRED : ZK_ST_SERVER_EXPIRED);
    else lock_state(ctx, requester == s->zn[i].owner ? ZK_ST_RELEASED : ZK_ST_DELETED_ANOTHER);
    s->zn[i].used = 0;
    s->cversion++;
    s->zxid++;
    for (int k = 0; k < s->w_hi; k++)
        if (s->w[k].used && s->w[k].seq == seq) {
            struct lock_msg m = {0};
            m.type = ZK_WATCH;
            m.b = seq;
            m.value = s->w[k].session;
            lock_send(ctx, s->w[k].client, &m);
            s->w[k].used = 0;
        }
    note_holder(ctx, s);
}

static void expire_session(struct lock_ctx *ctx, struct zk_server *s, struct zk_session *se) {
    lock_note(ctx, "session expired: its ephemeral znodes are deleted", (int64_t)se->id, se->owner);
    lock_state(ctx, ZK_ST_SERVER_EXPIRED);
    uint64_t id = se->id;
    se->id = 0;
    s->zxid++; /* the closeSession transaction */
    for (int k = 0; k < s->w_hi; k++)
        if (s->w[k].used && s->w[k].session == id) s->w[k].used = 0;
    for (int i = 0; i < s->zn_hi; i++)
        if (s->zn[i].used && s->zn[i].session == id) delete_znode(ctx, s, i, -1);
}

static void server_init(struct lock_ctx *ctx, void *state) {
    (void)ctx;
    struct zk_server *s = state;
    s->holder = -1;
}

/* A crash of a standalone server loses the sessions' expiry clocks; the
 * data tree and the sessions are restored from the snapshot and log, and
 * every session gets a fresh timeout from the restart (ZooKeeper's
 * SessionTrackerImpl is rebuilt with each session's timeout). */
static void server_restart(struct lock_ctx *ctx, void *state) {
    struct zk_server *s = state;
    s->expirer = 0;
    lock_state(ctx, ZK_ST_RESTARTED);
    for (int i = 0; i < s->sess_hi; i++)
        if (s->sess[i].id) touch(ctx, s, &s->sess[i]);
}

static void reply(struct lock_ctx *ctx, const struct lock_msg *m, int rc, int64_t b, uint64_t token) {
    struct lock_msg r = {0};
    r.type = ZK_REPLY;
    r.req = m->req;
    r.a = rc;
    r.b = b;
    r.token = token;
    r.value = m->value;
    lock_send(ctx, m->from, &r);
}

static void server_connect(struct lock_ctx *ctx, struct zk_server *s, const struct lock_msg *m) {
    int slot = free_session(s);
    if (slot < 0) {
        lock_note(ctx, "too many sessions for the model (256): connection refused", m->from, 0);
        reply(ctx, m, ZK_FULL, 0, 0);
        return;
    }
    int64_t t = m->ttl_ns / NS_PER_MS, tick = tick_ms(ctx);
    if (t < 2 * tick) t = 2 * tick;   /* minSessionTimeout */
    if (t > 20 * tick) t = 20 * tick; /* maxSessionTimeout */
    if (t * NS_PER_MS != m->ttl_ns) lock_note(ctx, "session timeout negotiated", t, m->ttl_ns / NS_PER_MS);
    struct zk_session *se = &s->sess[slot];
    *se = (struct zk_session){.id = ++s->next_session, .owner = m->from, .timeout_ms = t};
    s->zxid++; /* createSession */
    touch(ctx, s, se);
    struct lock_msg r = {0};
    r.type = ZK_REPLY;
    r.req = m->req;
    r.a = ZK_OK;
    r.value = se->id;
    r.ttl_ns = t * NS_PER_MS;
    lock_send(ctx, m->from, &r);
}

static void server_create(struct lock_ctx *ctx, struct zk_server *s, const struct lock_msg *m, struct zk_session *se) {
    int i = free_znode(s);
    if (i < 0) {
        lock_note(ctx, "too many znodes for the model (256): create refused", m->from, 0);
        reply(ctx, m, ZK_FULL, 0, 0);
        return;
    }
    if (!s->parent) { /* the client's mkdir -p of the parent, then the create */
        s->parent = 1;
        s->cversion = 0;
        s->zxid++;
        lock_note(ctx, "created the lock's parent znode", (int64_t)s->zxid, 0);
    }
    s->zxid++;
    if (s->cversion < s->fresh_seq) lock_state(ctx, ZK_ST_SEQ_REUSED);
    else s->fresh_seq = s->cversion + 1;
    s->zn[i] = (struct zk_znode){.used = 1, .seq = s->cversion, .czxid = s->zxid, .session = se->id, .owner = m->from};
    s->cversion++;
    note_holder(ctx, s);
    if (s->holder != i) lock_note_deny(ctx, m->from, s->zn[s->holder].owner);
    reply(ctx, m, ZK_OK, s->zn[i].seq, s->zn[i].czxid);
}

static void server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct zk_server *s = state;
    if (m->type == ZK_CONNECT) {
        server_connect(ctx, s, m);
        return;
    }
    if (m->type < ZK_PING || m->type > ZK_DELETE_PARENT) return;
    struct zk_session *se = session_of(s, m->value);
    if (!se) { /* expired or closed: every operation is refused */
        reply(ctx, m, ZK_SESSION_EXPIRED, 0, 0);
        return;
    }
    touch(ctx, s, se);
    int i;
    switch (m->type) {
    case ZK_PING: reply(ctx, m, ZK_OK, 0, 0); return;
    case ZK_CREATE: server_create(ctx, s, m, se); return;
    case ZK_CHILDREN: {
        if (znode_at(s, m->b) < 0) {
            reply(ctx, m, ZK_NONODE, 0, 0);
            return;
        }
        int64_t prev = -1;
        for (int k = 0; k < s->zn_hi; k++)
            if (s->zn[k].used && s->zn[k].seq < m->b && s->zn[k].seq > prev) prev = s->zn[k].seq;
        reply(ctx, m, ZK_OK, prev, 0);
        return;
    }
    case ZK_EXISTS:
        if (znode_at(s, m->b) < 0) {
            reply(ctx, m, ZK_OK, 0, 0);
            return;
        }
        if ((i = free_watch(s)) >= 0) {
            s->w[i] = (struct zk_watch){.used = 1, .client = m->from, .session = se->id, .seq = m->b};
            reply(ctx, m, ZK_OK, 1, 0);
            return;
        }
        lock_note(ctx, "too many watches for the model (256): exists refused", m->from, 0);
        reply(ctx, m, ZK_FULL, 0, 0);
        return;
    case ZK_STAT:
        i = znode_at(s, m->b);
        reply(ctx, m, i < 0 ? ZK_NONODE : ZK_OK, m->b, i < 0 ? 0 : s->zn[i].czxid);
        return;
    case ZK_DELETE:
        i = znode_at(s, m->b);
        if (i < 0) {
            reply(ctx, m, ZK_NONODE, m->b, 0);
            return;
        }
        delete_znode(ctx, s, i, m->from);
        reply(ctx, m, ZK_OK, m->b, 0);
        return;
    case ZK_DELETE_PARENT:
        if (!s->parent) {
            reply(ctx, m, ZK_NONODE, 0, 0);
            return;
        }
        for (int k = 0; k < s->zn_hi; k++)
            if (s->zn[k].used) {
                reply(ctx, m, ZK_NOTEMPTY, 0, 0);
                return;
            }
        s->parent = 0;
        s->zxid++;
        lock_state(ctx, ZK_ST_PARENT_DELETED);
        lock_note(ctx, "deleted the empty lock parent: sequence numbers start again from 0", 0, 0);
        reply(ctx, m, ZK_OK, 0, 0);
        return;
    }
}

static void server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    (void)arg;
    struct zk_server *s = state;
    if (timer != T_EXPIRER) return;
    s->expirer = 0;
    int64_t now = now_ms(ctx);
    for (int i = 0; i < s->sess_hi; i++)
        if (s->sess[i].id && s->sess[i].expire_ms <= now) expire_session(ctx, s, &s->sess[i]);
    arm_expirer(ctx, s);
}

/* ---- Client ------------------------------------------------------------------------- */

static sim_ns read_timeout(struct lock_ctx *ctx, const struct zk_client *c) {
    sim_ns t = c->timeout_ns ? c->timeout_ns : cfg(ctx)->session_timeout_ns;
    return t * 2 / 3;
}

static void cancel(struct lock_ctx *ctx, uint64_t *h) {
    if (*h) lock_cancel(ctx, *h);
    *h = 0;
}

static void client_init(struct lock_ctx *ctx, void *state) {
    struct zk_client *c = state;
    c->req = lock_incarnation(ctx) << 24;
}

static void send_req(struct lock_ctx *ctx, struct zk_client *c, int type, int step, int64_t b) {
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++c->req;
    m.value = c->session;
    m.b = b;
    if (type == ZK_CONNECT) m.ttl_ns = cfg(ctx)->session_timeout_ns;
    lock_send(ctx, lock_server(ctx, 0), &m);
    c->out = m.req;
    c->step = step;
    cancel(ctx, &c->req_timer);
    c->req_timer = lock_timer(ctx, LOCK_CLOCK_MONO, read_timeout(ctx, c), T_REQ, m.req);
}

static void arm_ping(struct lock_ctx *ctx, struct zk_client *c) {
    cancel(ctx, &c->ping_timer);
    sim_ns every = c->timeout_ns / 3;
    c->ping_timer = lock_timer(ctx, LOCK_CLOCK_MONO, every > 0 ? every : 1, T_PING, 0);
}

/* A session is needed: the one we have, or a new one (zk-ruby reopens the
 * connection with a new session once the old one has expired). */
static void need_session(struct lock_ctx *ctx, struct zk_client *c, int type, int step, int64_t b) {
    if (!c->session || c->expired) send_req(ctx, c, ZK_CONNECT, S_CONNECT, 0);
    else send_req(ctx, c, type, step, b);
}

/* ---- curator=: Apache Curator's connection states ------------------------------
 * Curator's ConnectionStateManager (curator-framework, state/
 * ConnectionStateManager.java) posts SUSPENDED when ZooKeeper's client loses
 * its connection, which it notices when nothing has come back from the
 * server for readTimeout (2/3 of the negotiated session timeout, ClientCnxn),
 * RECONNECTED when the session answers again, and LOST once the session
 * timeout has elapsed since SUSPENDED without a reconnection (Curator 3.0
 * on: checkSessionExpiration, sessionExpirationPercent 100). Curator Tech
 * Note 10 and the InterProcessMutex documentation: a lock's holder must
 * treat SUSPENDED as the lock being lost, because the server may expire the
 * session (after the session timeout, as little as 1/3 of it after
 * SUSPENDED) before the client hears of it; a recipe that waits for LOST
 * goes on working for 2/3 of a session timeout after another client could
 * have the lock. curator=suspended stops the work at SUSPENDED;
 * curator=lost only at LOST.
 *
 * Stopping the work ends the recipe's critical section, whose finally
 * calls InterProcessMutex.release(): LockInternals.releaseLock ->
 * deleteOurPath, which is client.delete().guaranteed().forPath(ourPath)
 * (curator-recipes, locks/LockInternals.java). With no connection the
 * delete fails at once (ConnectionLoss, nothing reaches the server), and a
 * guaranteed delete is remembered and retried in the background until it
 * succeeds (Curator's Guaranteeable: "if the node was ephemeral, the node
 * will not get auto-deleted as the session is still valid. This can wreak
 * havoc with lock implementations"). So if the session expires first, the
 * znode goes with it; if the connection comes back first (RECONNECTED, the
 * session alive and the znode still there), the delete goes through then,
 * and the next waiter's watch fires at once, not when the program reaches
 * its own release. */

static void conn_stop_work(struct lock_ctx *ctx, struct zk_client *c, int at) {
    if (cfg(ctx)->curator != at || !c->holding) return;
    c->holding = 0;
    if (c->have_node) {
        c->gdel = 1;
        c->gdel_seq = c->my_seq;
    }
    lock_lost(ctx);
}

/* RECONNECTED with the guaranteed delete still owed: send it now. */
static void gdel_send(struct lock_ctx *ctx, struct zk_client *c) {
    struct lock_msg m = {0};
    m.type = ZK_DELETE;
    m.req = c->gdel_req = ++c->req;
    m.value = c->session;
    m.b = c->gdel_seq;
    /* note: a = the znode's sequence number */
    lock_note(ctx, "RECONNECTED: the recipe's guaranteed delete of its lock znode is retried", c->gdel_seq, 0);
    lock_send(ctx, lock_server(ctx, 0), &m);
}

static void session_expired(struct lock_ctx *ctx, struct zk_client *c);

/* Its answer: done whether the znode was there (deleted now) or not (gone
 * with the session, or deleted by the program's own release). */
static void gdel_done(struct lock_ctx *ctx, struct zk_client *c, const struct lock_msg *m) {
    c->gdel_req = 0;
    c->gdel = 0;
    if (c->have_node && c->my_seq == c->gdel_seq && c->phase != P_RELEASE) c->have_node = 0;
    if (m->a == ZK_SESSION_EXPIRED) session_expired(ctx, c);
}

/* Something came back from S1: the connection is up (RECONNECTED after a
 * SUSPENDED), and the silence that would suspend it starts again. */
static void conn_heard(struct lock_ctx *ctx, struct zk_client *c) {
    if (cfg(ctx)->curator == ZK_CURATOR_OFF || !c->session || c->expired) return;
    if (c->conn == ZK_SUSPENDED) {
        cancel(ctx, &c->lost_timer);
        lock_note(ctx, "RECONNECTED (Curator): the session answered again before the session timeout", 0, 0);
        if (c->gdel) gdel_send(ctx, c);
    }
    c->conn = ZK_CONNECTED;
    cancel(ctx, &c->silence_timer);
    c->silence_timer = lock_timer(ctx, LOCK_CLOCK_MONO, read_timeout(ctx, c), T_SILENCE, 0);
}

static void conn_suspended(struct lock_ctx *ctx, struct zk_client *c) {
    if (c->conn != ZK_CONNECTED || c->expired) return;
    c->conn = ZK_SUSPENDED;
    /* note: a = readTimeout */
    lock_note(ctx, "SUSPENDED (Curator): nothing heard from the server for readTimeout; the lock may be gone",
              read_timeout(ctx, c), c->holding);
    c->lost_timer = lock_timer(ctx, LOCK_CLOCK_MONO, c->timeout_ns, T_LOST, 0);
    conn_stop_work(ctx, c, ZK_CURATOR_SUSPENDED);
}

static void conn_lost(struct lock_ctx *ctx, struct zk_client *c) {
    if (c->conn != ZK_SUSPENDED) return;
    c->conn = ZK_LOST;
    /* note: a = the session timeout */
    lock_note(ctx, "LOST (Curator): the session timeout elapsed while SUSPENDED; the session is taken as expired",
              c->timeout_ns, c->holding);
    conn_stop_work(ctx, c, ZK_CURATOR_LOST);
}

static void session_expired(struct lock_ctx *ctx, struct zk_client *c) {
    if (c->expired) return;
    c->expired = 1;
    cancel(ctx, &c->silence_timer);
    cancel(ctx, &c->lost_timer);
    lock_state(ctx, c->holding ? ZK_ST_EXPIRED_HOLDING : ZK_ST_CLIENT_EXPIRED);
    cancel(ctx, &c->ping_timer);
    c->ping_req = 0;
    lock_note(ctx, "SESSIONEXPIRED: the session is gone, and its ephemeral znode with it", (int64_t)c->session,
              c->holding);
    if (c->holding && cfg(ctx)->on_expired == ZK_EXPIRED_ABORT) {
        c->holding = 0;
        c->have_node = 0;
        lock_lost(ctx);
    }
}

static void client_acquire(struct lock_ctx *ctx, void *state) {
    struct zk_client *c = state;
    c->phase = P_ACQUIRE;
    c->holding = 0;
    c->have_node = 0;
    need_session(ctx, c, ZK_CREATE, S_CREATE, 0);
}

static void release_finish(struct lock_ctx *ctx, struct zk_client *c) {
    c->phase = P_IDLE;
    c->out = 0;
    c->step = S_NONE;
    cancel(ctx, &c->req_timer);
    lock_release_done(ctx);
}

/* After the znode is dealt with: zk-ruby also deletes the parent if empty. */
static void release_parent(struct lock_ctx *ctx, struct zk_client *c) {
    if (cfg(ctx)->parent_cleanup) send_req(ctx, c, ZK_DELETE_PARENT, S_PARENT, 0);
    else release_finish(ctx, c);
}

static void release_node(struct lock_ctx *ctx, struct zk_client *c) {
    if (cfg(ctx)->release == ZK_RELEASE_CZXID) send_req(ctx, c, ZK_STAT, S_STAT, c->my_seq);
    else send_req(ctx, c, ZK_DELETE, S_DELETE, c->my_seq);
}

static void client_release(struct lock_ctx *ctx, void *state) {
    struct zk_client *c = state;
    c->phase = P_RELEASE;
    c->holding = 0;
    if (!c->have_node) {
        release_finish(ctx, c);
        return;
    }
    if (!c->session || c->expired) send_req(ctx, c, ZK_CONNECT, S_CONNECT, 0);
    else release_node(ctx, c);
}

static void acquire_fail(struct lock_ctx *ctx, struct zk_client *c) {
    c->phase = P_IDLE;
    c->out = 0;
    lock_refused(ctx);
}

static void check_children(struct lock_ctx *ctx, struct zk_client *c) {
    send_req(ctx, c, ZK_CHILDREN, S_CHILDREN, c->my_seq);
}

static void on_reply(struct lock_ctx *ctx, struct zk_client *c, const struct lock_msg *m) {
    int step = c->step;
    c->out = 0;
    c->step = S_NONE;
    cancel(ctx, &c->req_timer);
    if (m->a == ZK_SESSION_EXPIRED) {
        session_expired(ctx, c);
        if (c->phase == P_RELEASE) send_req(ctx, c, ZK_CONNECT, S_CONNECT, 0); /* reopen, then delete */
        else if (c->phase == P_ACQUIRE) acquire_fail(ctx, c);
        return;
    }
    switch (step) {
    case S_CONNECT:
        if (m->a != ZK_OK) {
            if (c->phase == P_RELEASE) release_finish(ctx, c);
            else acquire_fail(ctx, c);
            return;
        }
        lock_state(ctx, c->session ? ZK_ST_SESSION_AGAIN : ZK_ST_SESSION);
        c->session = m->value;
        c->expired = 0;
        c->timeout_ns = m->ttl_ns;
        c->conn = ZK_CONNECTED;
        arm_ping(ctx, c);
        if (c->phase == P_RELEASE) release_node(ctx, c);
        else send_req(ctx, c, ZK_CREATE, S_CREATE, 0);
        return;
    case S_CREATE:
        if (m->a != ZK_OK) {
            acquire_fail(ctx, c);
            return;
        }
        lock_state(ctx, ZK_ST_CREATED);
        c->have_node = 1;
        c->my_seq = m->b;
        c->my_czxid = m->token;
        check_children(ctx, c);
        return;
    case S_CHILDREN:
        if (m->a != ZK_OK) { /* our znode is gone */
            lock_state(ctx, ZK_ST_NODE_GONE);
            c->have_node = 0;
            acquire_fail(ctx, c);
            return;
        }
        if (m->b < 0) {
            c->phase = P_IDLE;
            c->holding = 1;
            lock_state(ctx, ZK_ST_LOWEST);
            lock_granted(ctx, c->my_czxid, 0);
            return;
        }
        c->watched = m->b;
        send_req(ctx, c, ZK_EXISTS, S_EXISTS, m->b);
        return;
    case S_EXISTS:
        if (m->a != ZK_OK) acquire_fail(ctx, c); /* the model's watch table is full */
        else if (m->b == 0) { /* deleted meanwhile: look again */ lock_state(ctx, ZK_ST_PRED_GONE);
            check_children(ctx, c);
        } else {
            lock_state(ctx, ZK_ST_WATCHING);
            c->phase = P_WAIT_WATCH;
        }
        return;
    case S_STAT:
        if (m->a == ZK_OK && m->token == c->my_czxid) {
            send_req(ctx, c, ZK_DELETE, S_DELETE, c->my_seq);
            return;
        }
        lock_note(ctx, "release: the znode at our path is not ours (czxid differs or gone): not deleted",
                  (int64_t)m->token, (int64_t)c->my_czxid);
        lock_state(ctx, ZK_ST_CZXID_KEPT);
        c->have_node = 0;
        release_parent(ctx, c);
        return;
    case S_DELETE:
        c->have_node = 0;
        release_parent(ctx, c);
        return;
    case S_PARENT: release_finish(ctx, c); return;
    default: return;
    }
}

static void client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m) {
    struct zk_client *c = state;
    if ((m->type == ZK_WATCH || m->type == ZK_REPLY) && m->a != ZK_SESSION_EXPIRED) conn_heard(ctx, c);
    if (m->type == ZK_WATCH) {
        if (c->phase == P_WAIT_WATCH && m->value == c->session && m->b == c->watched) {
            c->phase = P_ACQUIRE;
            lock_state(ctx, ZK_ST_PRED_GONE);
            check_children(ctx, c);
        }
        return;
    }
    if (m->type != ZK_REPLY || m->req == 0) return;
    if (c->gdel_req && m->req == c->gdel_req) {
        gdel_done(ctx, c, m);
        return;
    }
    if (m->req == c->ping_req) {
        c->ping_req = 0;
        if (m->a == ZK_SESSION_EXPIRED && m->value == c->session) session_expired(ctx, c);
        return;
    }
    if (m->req == c->out) on_reply(ctx, c, m);
}

static void client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg) {
    struct zk_client *c = state;
    if (timer == T_PING) {
        c->ping_timer = 0;
        if (!c->session || c->expired) return;
        struct lock_msg m = {0};
        m.type = ZK_PING;
        m.req = ++c->req;
        m.value = c->session;
        c->ping_req = m.req;
        lock_send(ctx, lock_server(ctx, 0), &m);
        arm_ping(ctx, c);
        return;
    }
    if (timer == T_SILENCE) {
        c->silence_timer = 0;
        conn_suspended(ctx, c);
        return;
    }
    if (timer == T_LOST) {
        c->lost_timer = 0;
        conn_lost(ctx, c);
        return;
    }
    if (timer != T_REQ || (uint32_t)arg != c->out) return;
    c->req_timer = 0;
    lock_note(ctx, "request timed out (readTimeout): connection loss", (int64_t)arg, 0);
    lock_state(ctx, ZK_ST_TIMED_OUT);
    c->out = 0;
    if (c->phase == P_RELEASE) release_finish(ctx, c);
    else if (c->phase == P_ACQUIRE) acquire_fail(ctx, c);
}

/* ---- zookeeper-multi: the write is a multi-op on the ensemble --------------------
 * multi(check(lock znode), setData(data)): applied only if the writer's lock
 * znode (czxid = the token it attached) still exists, owned by the writer, in
 * a live session; otherwise the whole transaction fails and nothing is
 * written. An expired session's multi is refused whatever its timing. */
static int multi_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    (void)state;
    const struct zk_server *s = lock_server_state(ctx, 0);
    if (!s) {
        lock_note(ctx, "multi failed: the ZooKeeper server is not serving", 0, 0);
        lock_state(ctx, ZK_ST_MULTI_FAILED);
        return LOCK_WRITE_REJECTED_STALE;
    }
    if (w->token == 0) {
        lock_note(ctx, "multi failed: the writer holds no lock znode to check", 0, 0);
        lock_state(ctx, ZK_ST_MULTI_FAILED);
        return LOCK_WRITE_REJECTED_NOTOKEN;
    }
    for (int i = 0; i < s->zn_hi; i++)
        if (s->zn[i].used && s->zn[i].czxid == w->token && s->zn[i].owner == w->client) {
            for (int k = 0; k < s->sess_hi; k++)
                if (s->sess[k].id && s->sess[k].id == s->zn[i].session) {
                    lock_state(ctx, ZK_ST_MULTI_OK);
                    return LOCK_WRITE_ACCEPTED;
                }
        }
    lock_state(ctx, ZK_ST_MULTI_FAILED);
    lock_note(ctx, "multi failed: the writer's lock znode is gone (session expired or deleted)", (int64_t)w->token, 0);
    return LOCK_WRITE_REJECTED_STALE;
}

#define ZK_CALLBACKS \
    .default_servers = 1, .max_servers = 1, .config_size = sizeof(struct zk_config), \
    .client_size = sizeof(struct zk_client), .server_size = sizeof(struct zk_server), \
    .server_zero_size = offsetof(struct zk_server, sess), .config_default = defaults, .option = option, \
    .client_init = client_init, .client_acquire = client_acquire, .client_release = client_release, \
    .client_recv = client_recv, .client_timer = client_timer, .server_init = server_init, .server_recv = server_recv, \
    .server_timer = server_timer, .server_restart = server_restart

const struct lock_algo algo_zookeeper = {
        .abi = LOCK_ABI_VERSION,
        .name = "zookeeper",
        .summary = "ZooKeeper lock recipe: ephemeral sequential znodes, watch on the predecessor, sessions expired in "
                   "tickTime buckets; token = czxid",
        ZK_CALLBACKS,
        .state_names = state_names,
        .nstates = ZK_ST_COUNT_PLAIN,
};

const struct lock_algo algo_zookeeper_multi = {
        .abi = LOCK_ABI_VERSION,
        .name = "zookeeper-multi",
        .summary = "the zookeeper recipe with each write a multi-op (check the lock znode, set the data) on the same "
                   "server",
        ZK_CALLBACKS,
        .resource_write = multi_write,
        .state_names = state_names,
        .nstates = ZK_ST_COUNT,
};
