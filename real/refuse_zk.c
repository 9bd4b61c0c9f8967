/* What the zookeeper backend can make real (real/real_int.h): the options
 * of the zookeeper and zookeeper-multi locks (sim/algo/algo_zookeeper.c)
 * read into a real_cfg, and what one real ZooKeeper server and client
 * processes cannot play, refused with one sentence saying why. */
#include "real_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

/* tickTime in real ms at the default scale: the scenario's tickTime (2 s
 * by default) becomes this much real time. */
#define REAL_ZK_TICK_MS 100
/* The longest real run the zookeeper backend plays. */
#define REAL_ZK_MAX_RUN_S 30

static int refuse(char *why, size_t n, const char *fmt, const char *a, const char *b) {
    snprintf(why, n, fmt, a, b);
    return LSIM_ENOTREAL;
}

int real_zk_parse_cfg(const struct scenario *s, struct real_cfg *c, char *why, size_t n) {
    c->algo = strcmp(s->algo, "zookeeper-multi") == 0 ? RA_ZK_MULTI : RA_ZOOKEEPER;
    if (strcmp(s->algo, "zookeeper") != 0 && c->algo != RA_ZK_MULTI)
        return refuse(why, n, "algorithm %s is not built in the zookeeper backend%s", s->algo, "");
    c->ttl_ns = 0;
    c->tokens = 1;                        /* the znode's czxid */
    c->zk_session_ns = 10 * SIM_NS_PER_S; /* the model's default (kazoo's) */
    c->zk_tick_ns = 2 * SIM_NS_PER_S;     /* ZooKeeper's default tickTime */
    for (int i = 0; i < s->nopts; i++) {
        const char *k = s->opts[i].key, *v = s->opts[i].val;
        if (strcmp(k, "session-timeout") == 0 || strcmp(k, "tick-time") == 0) {
            sim_ns d;
            if (scn_parse_duration(v, &d) != 0 || d <= 0)
                return refuse(why, n, "lock option %s=%s is not a duration the zookeeper backend can set", k, v);
            if (k[0] == 's') c->zk_session_ns = d;
            else c->zk_tick_ns = d;
        } else if (strcmp(k, "release-by") == 0) {
            c->zk_release_czxid = strcmp(v, "czxid") == 0;
        } else if (strcmp(k, "parent-cleanup") == 0) {
            c->zk_parent_cleanup = strcmp(v, "on") == 0;
        } else if (strcmp(k, "on-expired") == 0) {
            c->zk_abort = strcmp(v, "abort") == 0;
        } else if (strcmp(k, "curator") == 0 && strcmp(v, "off") != 0) {
            return refuse(why, n,
                          "lock option curator=%s: Curator's connection states (SUSPENDED after readTimeout of "
                          "silence, LOST a session timeout later) come from a client cut off from a live server, "
                          "which needs a per-link loopback proxy, and from the Java recipe's listener, which the "
                          "backend's own client does not run%s; not built",
                          v, "");
        } else if (strcmp(k, "curator") != 0) {
            return refuse(why, n, "lock option %s=%s is not built in the zookeeper backend", k, v);
        }
    }
    return 0;
}

double real_zk_default_scale(const struct scenario *s) {
    struct real_cfg c;
    char why[300];
    memset(&c, 0, sizeof c);
    if (real_zk_parse_cfg(s, &c, why, sizeof why) != 0 || c.zk_tick_ns <= 0) return 0.05;
    return REAL_ZK_TICK_MS * 1e6 / (double)c.zk_tick_ns;
}

/* 1 when d at scale is a whole number of real ms, 1 at least. */
static int whole_ms(sim_ns d, double scale) {
    double ms = (double)d * scale / 1e6;
    return ms >= 1 - 1e-9 && fabs(ms - floor(ms + 0.5)) < 1e-6;
}

int real_zk_supported(const struct scenario *s, const struct trace *sim, const struct real_cfg *c, double scale,
                      char *why, size_t n) {
    char a[64], b[96];
    if (!whole_ms(c->zk_tick_ns, scale) || !whole_ms(c->zk_session_ns, scale)) {
        snprintf(a, sizeof a, "%g s and %g s", (double)c->zk_tick_ns / 1e9, (double)c->zk_session_ns / 1e9);
        snprintf(b, sizeof b, "%g ms and %g ms of real time at scale %g", (double)c->zk_tick_ns * scale / 1e6,
                 (double)c->zk_session_ns * scale / 1e6, scale);
        return refuse(why, n,
                      "tickTime and the session timeout (%s) would last %s: ZooKeeper takes whole milliseconds "
                      "(--scale must make them so)",
                      a, b);
    }
    double run_s = (double)s->duration_ns * scale / 1e9;
    if (run_s > REAL_ZK_MAX_RUN_S) {
        snprintf(a, sizeof a, "%g s", (double)s->duration_ns / 1e9);
        snprintf(b, sizeof b, "%g s of real time per run (over %d s)", run_s, REAL_ZK_MAX_RUN_S);
        return refuse(why, n, "the scenario's %s would last %s at this scale", a, b);
    }
    if (s->latency.min_ns != s->latency.max_ns || s->loss_ppm || s->nlinks)
        return refuse(why, n,
                      "network latency that varies, loss, or a link of its own needs a delaying, dropping "
                      "loopback proxy, not built%s%s",
                      "", "");
    if (s->nclocks)
        return refuse(why, n,
                      "clock offsets and drifts (clock %s) would have to act inside ZooKeeper's session expirer, "
                      "which runs on the JVM's monotonic clock, never touched%s",
                      s->clocks[0].node, "");
    if (s->resource_timeout_ns || s->check_reads || s->guard_owner)
        return refuse(why, n, "the resource's %s is not built in the zookeeper backend%s",
                      s->guard_owner   ? "guard=owner"
                      : s->check_reads ? "check=reads+writes"
                                       : "timeout=",
                      "");
    if (s->nclients > REDIS_SRV_MAX_CHILDREN)
        return refuse(why, n, "more clients than the %s processes the zookeeper backend runs%s", "64", "");
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        char line[16];
        snprintf(line, sizeof line, "%d", f->pos.line);
        switch (f->kind) {
        case SCN_FAULT_PAUSE:
        case SCN_FAULT_RESUME:
        case SCN_FAULT_CRASH: break;
        case SCN_FAULT_PARTITION:
        case SCN_FAULT_HEAL:
        case SCN_FAULT_LINK:
            return refuse(why, n, "line %s: a partition or a link change needs a per-link loopback proxy, %s", line,
                          "not built");
        case SCN_FAULT_CLOCK_STEP:
        case SCN_FAULT_CLOCK_DRIFT:
        case SCN_FAULT_CLOCK_SLEW:
            return refuse(why, n,
                          "line %s: a clock fault inside ZooKeeper (its session expirer runs on the JVM's "
                          "monotonic clock, which is never touched): %s",
                          line, "not built");
        default:
            return refuse(why, n, "line %s: a restart, a failover or a replication fault is %s", line,
                          "not built in the zookeeper backend");
        }
        int refused = real_client_fault_refused(
                s, f, line,
                "line %s: a pause or crash of %s, the ZooKeeper server: a stopped JVM also stops its expirer, "
                "and a restart would replay its log; not built",
                why, n);
        if (refused) return refused;
    }
    if (real_writes_refused(s, "zookeeper", why, n)) return LSIM_ENOTREAL;
    int servers = 0;
    for (int i = 0; i < sim->nnodes; i++) servers += sim->nodes[i].kind == TRACE_NODE_SERVER;
    if (servers != 1)
        return refuse(why, n, "the simulated run has %s lock servers, the zookeeper backend one%s", "several", "");
    int64_t rule = real_sim_rule(sim);
    int ok = c->algo == RA_ZK_MULTI ? rule == TRACE_RULE_ALGORITHM
                                    : rule == TRACE_RULE_PLAIN || rule == TRACE_RULE_TOKENS;
    if (!ok)
        return refuse(why, n,
                      "the resource's rule is '%s': the zookeeper backend builds a plain resource, one that checks "
                      "tokens (fencing=on), and zookeeper-multi's own multi-op%s",
                      trace_rule_word(rule), "");
    return 0;
}
