/* `locksim real`: a scenario played against a real Redis, etcd or ZooKeeper (real/real.h) and
 * judged by the same checker; the real and simulated verdicts side by side,
 * who took the lock when in each, and a line per difference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cli.h"
#include "fmt.h"
#include "real.h"
#include "etcd_srv.h"
#include "redis_nodes.h"
#include "run.h"
#include "scenario_file.h"
#include "trace_jsonl.h"

const char cli_usage_real[] = "Usage: locksim real FILE [--store redis|etcd|redlock|redis-replicated|\n"
                              "                         zookeeper]\n"
                              "                         [--scale S] [--repeat N] [--trace OUT.jsonl] [--row]\n"
                              "                         [--picture OUT.png|OUT.svg]\n"
                              "\n"
                              "Plays the scenario against a real lock service that locksim starts itself on\n"
                              "127.0.0.1 and stops by PID on every exit, Ctrl-C and SIGTERM included; each\n"
                              "client is a process of its own; a pause is SIGSTOP/SIGCONT of that process, a\n"
                              "crash SIGKILL. The store follows the scenario's lock unless --store says:\n"
                              "redis (Debian package redis-server) on 16379 (or the next free port up to\n"
                              "16394), persistence off, its files in a temporary folder, clients speaking\n"
                              "RESP. Algorithms: lease (SET NX PX), fenced-lease (a Lua SET NX PX + INCR; the\n"
                              "resource's fenced write is a Lua script), setnx, setnx-expire (SETNX, then\n"
                              "PEXPIRE), lease-renew (SET NX PX and a heartbeat in the same process: a Lua\n"
                              "compare-and-PEXPIRE every ttl/3). The resource is a key in the same Redis.\n"
                              "etcd (Debian packages etcd-server, etcd-client; etcd 3.4) for consensus: a\n"
                              "cluster of as many members as the scenario's servers (3 unless servers=, 5 at\n"
                              "most), S1 on 22379 and each on the next free client+peer port pair up to\n"
                              "22418, data dirs on tmpfs, the first-candidate leading at each run's start;\n"
                              "clients speaking HTTP/JSON to a member's gateway (bind='s member, or S1 and\n"
                              "the next when one refuses): a lease kept alive every ttl/3, a txn try-lock\n"
                              "(or with queue=on v3lock's Lock, which waits in line), the lock key's\n"
                              "create_revision as the token; a fenced write is a txn comparing a fence key,\n"
                              "guard=owner's a txn on the lock key's create_revision. A server's pause is\n"
                              "SIGSTOP/SIGCONT of its member, a crash SIGKILL, a restart the member started\n"
                              "again on its data dir; a pause or crash of the simulated leader goes to the\n"
                              "member that leads for real.\n"
                              "redlock: a redis-server per lock server (from port 16401) and one for the\n"
                              "resource; each client runs Redlock (SET NX PX on all at once, a majority within\n"
                              "the request timeout, validity = TTL - elapsed - drift, unlock everywhere); a\n"
                              "server's crash is SIGKILL, its restart a fresh empty redis-server (persistence\n"
                              "off; delayed-restart= keeps it down that long), a pause SIGSTOP; a link from a\n"
                              "client to a server with loss=100% is a request never sent; a server's clock\n"
                              "fault and the proxy as redis's below, a link per client and server.\n"
                              "redis-replicated (lease or fenced-lease with servers=N): S1 a primary, the\n"
                              "others its replicas; a client asks the next server when its own is down or a\n"
                              "replica; promote is REPLICAOF NO ONE; wait=N a WAIT on the same connection;\n"
                              "kill-replicas stops the replicas and CLIENT KILL TYPE replica; repl-lag only\n"
                              "when the simulated replicas receive nothing, as that cut from the start until\n"
                              "the primary's crash.\n"
                              "zookeeper (Debian package zookeeper, 3.8, with a JRE) for zookeeper and\n"
                              "zookeeper-multi: one server (java ... ZooKeeperServerMain) on 32181 (or the\n"
                              "next free port up to 32196), its dataDir on tmpfs, tickTime the scenario's at\n"
                              "S; clients speak ZooKeeper's protocol: a session pinged every timeout/3, an\n"
                              "ephemeral sequential znode, the lowest holds, a watch on the next lower, the\n"
                              "znode's czxid as the token; the run starts on a tick of the server's clock, so\n"
                              "sessions expire in the simulated tick buckets. The resource is the znode\n"
                              "/stock (fenced: a multi-op on a /fence znode; zookeeper-multi: check the lock\n"
                              "znode and set the data in one multi-op, in the lock's session).\n"
                              "The scenario's timeline runs at scale S (real seconds per scenario second;\n"
                              "default: redis, the whole duration in 2.5 s real, 10 s through the proxy\n"
                              "below; redlock, in 10 s, and its\n"
                              "request timeout at least 25 ms real (S = 0.5 for 50 ms), as a restart takes up\n"
                              "to 130 ms and a reply over 8 ms on a loaded machine; etcd, the lease TTL in\n"
                              "1 s real, as etcd grants whole seconds only; zookeeper, tickTime in 100 ms\n"
                              "real, ZooKeeper taking whole ms). The run is recorded as a locksim\n"
                              "trace in scenario time (real time / S), judged by the checker check-trace uses,\n"
                              "and printed beside the simulated run: verdicts, each acquisition's time (a\n"
                              "takeover more than 15 ms of real time from the simulated one is a difference)\n"
                              "and a line per difference. As root, the driver, the clients and the servers\n"
                              "(but etcd's) run at SCHED_RR 10 while a run plays, so other work on the machine\n"
                              "does not make a fault or a request late (LOCKSIM_REAL_RT=0: normal priority).\n"
                              "A constant network latency is held by each client on every request and reply.\n"
                              "redis, redlock: latency that varies, loss, links and partitions go through a\n"
                              "loopback proxy per link (client -> each server, client -> resource): each\n"
                              "message gets the simulated run's delay for its link, scaled; what the\n"
                              "simulation dropped, or a partition in force cuts, is dropped; a request not\n"
                              "answered within the request timeout (redis 1 s, redlock 50 ms;\n"
                              "request-timeout=) fails. A clock step, drift or slew of a server is made by a\n"
                              "clock shim preloaded into locksim's redis-servers only\n"
                              "(build/real/locksim-clockshim.so): its CLOCK_REALTIME, gettimeofday and time\n"
                              "shifted by an offset and a rate the driver writes while it runs; the\n"
                              "machine's clock is never touched.\n"
                              "etcd: a partition goes through the same proxy (a link to each member, and to\n"
                              "the resource through each; an HTTP request and its answer are one message\n"
                              "each) and, between members, through a peer proxy on their peer URLs that\n"
                              "holds a cut pair's connections (who dialed is looked up in /proc).\n"
                              "redis also plays release=get-then-del, takeover=on, renew-expired=on,\n"
                              "uncertainty=, check=client, compare=, write set=V, and the resource's\n"
                              "check=reads+writes and guard=owner (Lua scripts where the model is atomic).\n"
                              "Refused, saying why (exit 69): every other algorithm, a client's clock, resource\n"
                              "timeouts, read checks but in redis; redis: several servers, failover, restarts,\n"
                              "a pause or crash of the server, a partition at a client's point, deadline=;\n"
                              "etcd: bug=, over 5 servers, a server fault at a client's point, latency that\n"
                              "varies, loss, links, a partition at a client's point or leaving the resource\n"
                              "with no lock server, clock faults, a TTL that is not whole seconds of real time\n"
                              "at S, and a run over 30 s of real time; redlock: a client's crash, a partition\n"
                              "at a client's point, expiry-clock=monotonic with a clock fault (Redis 7.0\n"
                              "expires keys by its wall clock); redis-replicated: min-replicas, restarts,\n"
                              "partitions, links, clock faults, a repl-lag the replicas see; zookeeper:\n"
                              "curator= (a cut link and Curator's Java listener), partitions, links, clock\n"
                              "faults, a tickTime or session timeout that is not whole ms at S, a run over\n"
                              "30 s of real time.\n"
                              "  --store NAME      redis, etcd, redlock, redis-replicated or zookeeper (default:\n"
                              "                    etcd for consensus, redlock for redlock, redis-replicated for\n"
                              "                    lease and fenced-lease with servers=N, zookeeper for\n"
                              "                    zookeeper and zookeeper-multi, else redis)\n"
                              "  --scale S         e.g. 0.01: a 30 s TTL lasts 300 ms\n"
                              "  --repeat N        N runs (real runs are not deterministic: each is reported)\n"
                              "  --trace OUT.jsonl the recorded trace (with --repeat, OUT-K.jsonl for run K)\n"
                              "  --picture OUT.png the simulated run and, under it on the same time axis, each\n"
                              "                    real run (with --repeat N, N panels, at most 7: the runs side\n"
                              "                    by side show how much they vary), each with its verdict; as\n"
                              "                    render --trace draws it; written whole when the runs are done\n"
                              "  --row             one Markdown table row instead of the report (make reality):\n"
                              "                    scenario, backend, simulated verdict, real verdicts, runs\n"
                              "                    whose verdict differs, runs with any difference, scale,\n"
                              "                    takeover times; a refused scenario: scenario, algorithm, why\n"
                              "Exit 0 when every run's real verdict is the simulated one (other differences,\n"
                              "such as takeover times, are findings, reported, not failures), 1 when a real\n"
                              "verdict differs, 69 refused, no server installed, or a server or client that\n"
                              "did not answer within 2 s, 65/66 a bad or missing file, 130 interrupted.\n";

struct take {
    int node;
    sim_ns t;
};

/* A time for the report, to 10 ms of scenario time. */
static void show_t(char *buf, size_t n, sim_ns t) {
    sim_ns q = 10 * SIM_NS_PER_MS;
    format_time_ns(buf, n, (t + q / 2) / q * q);
}

/* The acquisitions of a trace, in order (at most max). */
static int takes(const struct trace *tr, struct take *v, int max) {
    int n = 0;
    for (size_t i = 0; i < tr->len && n < max; i++)
        if (tr->ev[i].kind == TRACE_ACQUIRED) v[n++] = (struct take){tr->ev[i].node, tr->ev[i].t};
    return n;
}

/* The differences of one real run from the simulated one, a line each
 * (printed when out is not NULL); their number. */
static int differences(FILE *out, const struct checker_report *sim, const struct checker_report *real,
                       const struct trace *st, const struct trace *rt, double scale) {
    int d = 0;
    if (sim->verdict != real->verdict) {
        d++;
        if (out)
            fprintf(out, "    differs: verdict: simulated %s, real %s\n", scn_verdict_name(sim->verdict),
                    scn_verdict_name(real->verdict));
    }
    static const char *const names[] = {"double entries", "stale writes accepted", "stale writes rejected",
                                        "lost updates",   "wrong releases",        "stuck clients",
                                        "acquisitions",   "failed acquisitions",   "writes accepted"};
    const int64_t sv[] = {sim->double_entries, sim->stale_accepted,  sim->stale_rejected,
                          sim->lost_updates,   sim->wrong_releases,  sim->stuck,
                          sim->acquires,       sim->failed_acquires, sim->writes_accepted};
    const int64_t rv[] = {real->double_entries, real->stale_accepted,  real->stale_rejected,
                          real->lost_updates,   real->wrong_releases,  real->stuck,
                          real->acquires,       real->failed_acquires, real->writes_accepted};
    for (int k = 0; k < 9; k++)
        if (sv[k] != rv[k]) {
            d++;
            if (out)
                fprintf(out, "    differs: %s: simulated %lld, real %lld\n", names[k], (long long)sv[k],
                        (long long)rv[k]);
        }
    struct take a[64], b[64];
    int na = takes(st, a, 64), nb = takes(rt, b, 64);
    for (int i = 0; i < na && i < nb; i++) {
        double ms = (double)(b[i].t - a[i].t) * scale / 1e6;
        if (a[i].node != b[i].node || ms > REAL_TOLERANCE_MS || ms < -REAL_TOLERANCE_MS) {
            d++;
            char t1[32], t2[32];
            show_t(t1, sizeof t1, a[i].t);
            show_t(t2, sizeof t2, b[i].t);
            if (out)
                fprintf(out, "    differs: acquisition %d: simulated %s at %s, real %s at %s (%+.1f ms real)\n", i + 1,
                        st->nodes[a[i].node].name, t1, rt->nodes[b[i].node].name, t2, ms);
        }
    }
    return d;
}

/* The file run k's trace goes to: OUT itself, or OUT-K.jsonl with --repeat. */
static void trace_name(char *name, size_t n, const char *path, int k, int repeat) {
    if (repeat > 1) {
        const char *dot = strrchr(path, '.');
        if (!dot || strchr(dot, '/')) dot = path + strlen(path);
        snprintf(name, n, "%.*s-%d%s", (int)(dot - path), path, k, dot);
    } else {
        snprintf(name, n, "%s", path);
    }
}

/* Run k's recorded trace, through the output rules (run/output.h): written
 * whole or not at all, never over the scenario. With write = 0 only opened
 * and given up, so a path that cannot be written is refused before any
 * server starts. 0, or the exit status. */
static int write_trace(const char *scn, const char *path, int k, int repeat, const struct trace *tr, int write) {
    char name[1100], err[1400];
    trace_name(name, sizeof name, path, k, repeat);
    struct out_file out;
    const char *inputs[] = {scn};
    int rc = out_open(&out, name, inputs, 1, err, sizeof err);
    if (rc) return cli_fail(rc, err);
    if (!write) {
        out_abort(&out);
        return 0;
    }
    (void)trace_write_jsonl(out.f, tr); /* a write error stays on the stream: out_commit reports it */
    rc = out_commit(&out, err, sizeof err);
    return rc ? cli_fail(rc, err) : 0;
}

struct real_cmd {
    const char *file, *trace_out, *store, *picture;
    int svg;                                    /* --picture's format */
    struct cli_recorded recs[CLI_MAX_RECORDED]; /* --picture: each run, drawn under the simulated one */
    double scale;
    long repeat;
    int row;
    /* what the run made, closed by real_close */
    struct run_result sim; /* the simulated run: its verdict, nodes, resource rule */
    int have_sim;
    struct scenario scn; /* the scenario with its client list (the engine's copy has none) */
    const struct real_ops *ops;
    const char *name;   /* the file's name, for --row */
    struct take sa[64]; /* the simulated acquisitions */
    int nsa;
    int counts[3], differ; /* real verdicts, and runs with any difference */
    char takes_cell[2000]; /* --row: the takeover times of the first run and each that differs */
    size_t tl;
};

enum { OPT_STORE = CLI_OPT_OWN, OPT_SCALE, OPT_REPEAT, OPT_TRACE, OPT_ROW, OPT_PICTURE };
static const struct option real_options[] = {
        {"store", required_argument, NULL, OPT_STORE},
        {"scale", required_argument, NULL, OPT_SCALE},
        {"repeat", required_argument, NULL, OPT_REPEAT},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"row", no_argument, NULL, OPT_ROW},
        {"picture", required_argument, NULL, OPT_PICTURE},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_real[] = {real_options, NULL};

/* One option of real, or its file: 0, or the exit status. */
static int take_real_option(struct real_cmd *o, int c, const char *v) {
    char *end;
    switch (c) {
    case OPT_STORE: o->store = v; return 0;
    case OPT_SCALE:
        o->scale = strtod(v, &end);
        if (*end || !(o->scale > 0 && o->scale <= 10))
            return cli_usage("--scale %s: expected a number above 0 and at most 10 (0.01: 30 s last 300 ms)", v);
        return 0;
    case OPT_REPEAT:
        if (cli_parse_int(v, 1, 100, &o->repeat) != 0)
            return cli_usage("--repeat %s: expected a whole number from 1 to 100", v);
        return 0;
    case OPT_TRACE: o->trace_out = v; return 0;
    case OPT_ROW: o->row = 1; return 0;
    case OPT_PICTURE: o->picture = v; return cli_picture_format(v, NULL, &o->svg);
    default: /* CLI_OPT_ARG */
        if (o->file) return cli_usage("real takes one scenario FILE; %s is a second", v);
        o->file = v;
        return 0;
    }
}

/* real's arguments: 0, -1 after --help, or the exit status. */
static int parse_real_args(struct real_cmd *o, int argc, char **argv) {
    struct cli_getopt g;
    o->store = NULL; /* chosen by the scenario's lock */
    o->repeat = 1;
    int st = cli_getopt_init_tables(&g, "real", cli_usage_real, NULL, cli_tables_real, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;)
        st = c == CLI_OPT_STOP ? g.status : take_real_option(o, c, g.arg);
    cli_getopt_close(&g);
    return st;
}

static void real_close(struct real_cmd *o) {
    for (int i = 0; i < CLI_MAX_RECORDED; i++) cli_recorded_close(&o->recs[i]);
    scenario_close(&o->scn);
    if (o->have_sim) run_result_close(&o->sim);
}

/* The simulated run, the scenario, the store and whether it can play it:
 * 0, or the exit status (a refusal said as a row or on stderr). */
static int real_prepare(struct real_cmd *o) {
    if (!o->file) return cli_usage("real needs a scenario FILE");
    if (o->picture && o->repeat > CLI_MAX_RECORDED)
        return cli_usage("--picture draws at most %d real runs under the simulated one; --repeat %ld is more",
                         CLI_MAX_RECORDED, o->repeat);
    for (long k = 1; o->trace_out && k <= o->repeat; k++) { /* the same for each --trace file */
        int st = write_trace(o->file, o->trace_out, (int)k, (int)o->repeat, NULL, 0);
        if (st) return st;
    }
    if (o->picture) { /* refused now (the scenario as the output, a folder that takes no file), not after the runs */
        struct out_file out;
        const char *inputs[] = {o->file};
        int st = cli_picture_open(&out, o->picture, inputs, 1);
        if (st) return st;
        out_abort(&out);
    }
    char names[200];
    real_store_names(names, sizeof names);
    if (o->store && !real_store(o->store)) return cli_usage("--store %s: %s are built", o->store, names);
    /* From here on, a stop signal cleans up what real/ started and exits 130. */
    redis_srv_guard_on();
    struct run_spec spec = {.file = o->file, .keep_trace = 1};
    int rc = run_scenario(&spec, &o->sim);
    o->have_sim = 1;
    if (rc) return cli_fail(rc, o->sim.error);
    struct scn_error se;
    if (scenario_load(&o->scn, o->file, &se) != 0) return cli_fail(LSIM_EPARSE, "the scenario could not be read again");
    const struct scenario *s = &o->scn;
    const struct trace *st = engine_trace(o->sim.engine);
    o->name = strrchr(o->file, '/') ? strrchr(o->file, '/') + 1 : o->file;
    if (!o->store) o->store = real_store_for(s);
    o->ops = real_store(o->store);
    char why[600];
    if ((rc = real_supported(o->ops, s, st, o->scale, why, sizeof why)) != 0) {
        if (o->row) printf("| %s | %s | %s |\n", o->name, s->algo, why);
        else fprintf(stderr, "locksim: %s: cannot be run for real: %s\n", o->file, why);
        return cli_exit(rc);
    }
    if (o->scale == 0) o->scale = real_default_scale(o->ops, s);
    o->nsa = takes(st, o->sa, 64);
    return 0;
}

/* The report's head: the scenario, the backend, the scale. */
static void real_header(const struct real_cmd *o, const struct redis_srv *srv) {
    const struct scenario *s = &o->scn;
    printf("Reality check: %s\n  \"%s\", algorithm %s\n", o->file, s->title, s->algo);
    if (strcmp(o->store, "etcd") == 0) {
        int n = etcd_srv_members();
        printf("  backend etcd: %d etcd member%s on 127.0.0.1:", n, n == 1 ? "" : "s");
        for (int k = 0; k < n; k++) printf("%s%d", k ? "," : "", etcd_srv_port(k));
        printf(" (S1..; data on tmpfs; all answering after %ld ms),\n"
               "  one process per client speaking HTTP/JSON to its member's gateway;\n",
               etcd_srv_start_ms());
    } else if (strcmp(o->store, "zookeeper") == 0)
        printf("  backend zookeeper: one ZooKeeper server on 127.0.0.1:%d (data on tmpfs), one process per\n"
               "  client speaking ZooKeeper's protocol, its session pinged every timeout/3;\n",
               srv->port);
    else if (srv->nodes) /* redlock: a redis-server per lock server, and one for the resource */
        printf("  backend %s: a redis-server per lock server%s and one for the resource,\n"
               "  on 127.0.0.1 from port %d (persistence off), one process per client;\n",
               o->store, strcmp(o->store, "redlock") == 0 ? "" : " (S1 the primary, the others its replicas)",
               REDIS_NODES_PORT);
    else
        printf("  backend redis: redis-server on 127.0.0.1:%d (persistence off), one process per client;\n", srv->port);
    printf("  scale %g: the scenario's %gs last %.0f ms of real time, 1 s of it is %.1f ms\n"
           "  (a run ends sooner once every client has ended and no fault is due)\n",
           o->scale, (double)s->duration_ns / 1e9, (double)s->duration_ns * o->scale / 1e6, 1e3 * o->scale);
}

/* Run k judged: its verdict beside the simulated one, each acquisition's
 * time in both, and a line per difference. */
static void real_report_run(const struct real_cmd *o, long k, const struct checker_report *rep, const struct trace *dst,
                            const struct take *ra, int nra, int d) {
    const struct trace *st = engine_trace(o->sim.engine);
    printf("\n  run %ld: simulated %s, real %s%s\n", k, scn_verdict_name(o->sim.report->verdict),
           scn_verdict_name(rep->verdict), d ? "" : " (no difference)");
    printf("    real: %s\n", rep->headline);
    for (int i = 0; i < o->nsa || i < nra; i++) {
        char t1[32] = "-", t2[32] = "-";
        if (i < o->nsa) show_t(t1, sizeof t1, o->sa[i].t);
        if (i < nra) show_t(t2, sizeof t2, ra[i].t);
        printf("    acquisition %d: simulated %-3s at %-9s real %-3s at %-9s (%.1f ms real)\n", i + 1,
               i < o->nsa ? st->nodes[o->sa[i].node].name : "-", t1, i < nra ? dst->nodes[ra[i].node].name : "-", t2,
               i < nra ? (double)ra[i].t * o->scale / 1e6 : 0.0);
    }
    differences(stdout, o->sim.report, rep, st, dst, o->scale);
}

/* One real run, k of --repeat, judged and counted: 0, an LSIM_E* code
 * (err says why), or the exit status of a trace that could not be written. */
static int real_one(struct real_cmd *o, long k, struct redis_srv *srv, char *err, size_t errlen) {
    const struct scenario *s = &o->scn;
    const struct trace *st = engine_trace(o->sim.engine);
    struct trace rec, dst;
    struct checker_report rep;
    int rc = real_play(o->ops, s, st, srv, o->scale, &rec, err, errlen);
    if (rc == 0 && (rc = run_recheck(&rec, s->purpose, s->stuck_after_ns, s, &dst, &rep)) == 0) {
        o->counts[rep.verdict]++;
        int d = differences(NULL, o->sim.report, &rep, st, &dst, o->scale);
        if (d) o->differ++;
        struct take ra[64];
        int nra = takes(&dst, ra, 64);
        if (!o->row) real_report_run(o, k, &rep, &dst, ra, nra, d);
        if (k == 1 || d) { /* the takeover times of the first run, and of each that differs */
            size_t n = sizeof o->takes_cell;
            o->tl += (size_t)snprintf(o->takes_cell + o->tl, n - o->tl, "%srun %ld:", k == 1 ? "" : "; ", k);
            for (int i = 0; i < nra && o->tl < n - 64; i++) {
                char t1[32], t2[32] = "-";
                show_t(t1, sizeof t1, ra[i].t);
                if (i < o->nsa) show_t(t2, sizeof t2, o->sa[i].t);
                o->tl += (size_t)snprintf(o->takes_cell + o->tl, n - o->tl, " %s %s (sim %s)",
                                          dst.nodes[ra[i].node].name, t1, t2);
            }
        }
        if (o->trace_out) rc = write_trace(o->file, o->trace_out, (int)k, (int)o->repeat, &dst, 1);
        trace_close(&dst);
        if (o->picture && rc == 0) { /* kept for the picture: rec moves into it */
            struct cli_recorded *p = &o->recs[k - 1];
            p->src = rec, p->loaded = 1;
            char what[64];
            snprintf(what, sizeof what, "run %ld of %ld", k, o->repeat);
            return cli_recorded_judge(p, s, what);
        }
    }
    trace_close(&rec);
    return rc;
}

/* --picture: the simulated run, and each real run as a panel under it on
 * its time axis, through the output rules: 0 or the exit status. */
static int real_picture(struct real_cmd *o) {
    const struct trace *trs[CLI_MAX_RECORDED + 1];
    struct scene_banner bs[CLI_MAX_RECORDED + 1];
    struct cli_banner cb;
    struct report_ctx c = {.file = o->file};
    if (cli_banner_fill(&cb, &o->sim, &c) != 0) return cli_fail(LSIM_ENOMEM, "out of memory writing the replay line");
    trs[0] = engine_trace(o->sim.engine);
    bs[0] = cb.b;
    size_t n = 1;
    for (long k = 0; k < o->repeat; k++) {
        trs[n] = &o->recs[k].dst;
        bs[n++] = o->recs[k].b;
    }
    struct scene_view v;
    scene_view_pixels(&v, 1280, 0);
    return cli_write_picture(o->picture, o->svg, o->file, trs, n, bs, &v);
}

/* The real verdicts over every run, as a row or a sentence. */
static void real_summary(const struct real_cmd *o) {
    char verdicts[120] = "";
    size_t vl = 0;
    for (int v = 0; v < 3; v++)
        if (o->counts[v])
            vl += (size_t)snprintf(verdicts + vl, sizeof verdicts - vl, "%s%s x%d", vl ? ", " : "",
                                   scn_verdict_name((enum scn_verdict)v), o->counts[v]);
    const char *simv = scn_verdict_name(o->sim.report->verdict);
    if (o->row)
        printf("| %s | %s | %s | %s | %d | %d | %g | %s |\n", o->name, o->store, simv, verdicts,
               (int)o->repeat - o->counts[o->sim.report->verdict], o->differ, o->scale, o->takes_cell);
    else
        printf("\n  real verdicts over %ld run%s: %s (simulated %s); %d run%s differ%s\n", o->repeat,
               o->repeat == 1 ? "" : "s", verdicts, simv, o->differ, o->differ == 1 ? "" : "s",
               o->differ == 1 ? "s" : "");
}

int cmd_real(int argc, char **argv) {
    struct real_cmd o;
    memset(&o, 0, sizeof o);
    scenario_init(&o.scn);
    int st = parse_real_args(&o, argc, argv);
    if (st == 0) st = real_prepare(&o);
    if (st) {
        real_close(&o);
        return st < 0 ? 0 : st;
    }
    struct redis_srv srv;
    char err[600];
    int rc = real_store_start(o.ops, &o.scn, o.scale, &srv, err, sizeof err);
    if (rc) {
        real_close(&o);
        return cli_fail(rc, err);
    }
    if (!o.row) real_header(&o, &srv);
    for (long k = 1; k <= o.repeat && rc == 0; k++) rc = real_one(&o, k, &srv, err, sizeof err);
    real_store_stop(o.ops, &srv);
    if (rc == 0) real_summary(&o);
    if (rc == 0 && o.picture && (rc = real_picture(&o)) != 0) {
        real_close(&o);
        return rc;
    }
    /* Exit 1 (LSIM_EXIT_MAP) when a real verdict is not the simulated one:
     * a script or CI can tell a disagreement from a run that agrees. */
    int verdict_differs = o.counts[o.sim.report->verdict] < (int)o.repeat;
    real_close(&o);
    if (rc) return rc < 0 ? cli_fail(rc, err) : rc;
    return verdict_differs ? 1 : 0;
}
