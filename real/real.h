/* `locksim real`: a scenario played against a real lock service. Each
 * client is a real process talking RESP to locksim's own redis-server on
 * 127.0.0.1; a pause is SIGSTOP/SIGCONT of that process, a crash SIGKILL;
 * the scenario's timeline runs scaled into real time. The run is recorded
 * as a locksim trace (docs/trace-format.md) that the same checker judges.
 * What cannot be made real is refused with the reason, never approximated. */
#ifndef LOCKSIM_REAL_H
#define LOCKSIM_REAL_H

#include <stddef.h>

#include "redis_srv.h"
#include "scenario.h"
#include "trace.h"

/* Real milliseconds that the whole scenario (its duration) takes when no
 * --scale is given: scale = REAL_DEFAULT_SPAN_MS ms / duration. */
#define REAL_DEFAULT_SPAN_MS 2500
/* The same for the redlock backend, whose servers restart during a run. */
#define REAL_REDLOCK_SPAN_MS 10000
/* ... unless its request timeout would last less real time than this. */
#define REAL_REDLOCK_TIMEOUT_MS 25
/* The same through the loopback proxy (real/proxy.c), whose replayed
 * delays race the request timeout: at 2.5 s a run a seeded round trip came
 * within 5 ms of real time of the 1 s timeout (41.7 ms real), less than
 * what two more processes per message cost on a loaded 2-core machine. */
#define REAL_PROXY_SPAN_MS 10000
/* Takeover times (an acquisition, real vs simulated) agree within this much
 * real time; further apart is a difference. */
#define REAL_TOLERANCE_MS 15

/* 0 when the store ops can run s as it is at scale (0 = the default),
 * else LSIM_ENOTREAL with one sentence in why saying what it cannot make
 * real and why. sim is the simulated run's trace (borrowed): its nodes and
 * resource rule are the recording's. */
struct real_ops;

/* The store named name (one of real_store_names), or NULL. */
const struct real_ops *real_store(const char *name);
/* The stores' names, "redis, etcd, ... and zookeeper", into buf (n bytes). */
void real_store_names(char *buf, size_t n);
/* The store a scenario's lock runs on when --store is not given: etcd for
 * consensus, zookeeper for zookeeper and zookeeper-multi, else redis. */
const char *real_store_for(const struct scenario *s);
/* Start and stop the store's server (redis_srv_start, etcd_srv_start;
 * zookeeper's takes its tickTime from s at scale). */
int real_store_start(const struct real_ops *ops, const struct scenario *s, double scale, struct redis_srv *srv,
                     char *err, size_t n);
void real_store_stop(const struct real_ops *ops, struct redis_srv *srv);

int real_supported(const struct real_ops *ops, const struct scenario *s, const struct trace *sim, double scale,
                   char *why, size_t n);

/* The scale (real seconds per scenario second) when none is given: redis,
 * the whole duration in REAL_DEFAULT_SPAN_MS (REAL_PROXY_SPAN_MS through
 * the proxy); etcd, the lease TTL in 1 s
 * (etcd grants whole seconds, 1 s at least). */
double real_default_scale(const struct real_ops *ops, const struct scenario *s);

/* Play s once against the server srv (flushed first) at scale, and record
 * the run into out (trace_init'd here with keep = 1, the sim's nodes;
 * closed by the caller with trace_close), without checker findings: judge
 * it with run_recheck. Times in out are real elapsed times divided by
 * scale (scenario time); a srv-note at t = 0 says so. 0, or an LSIM code
 * with a sentence in err. */
int real_play(const struct real_ops *ops, const struct scenario *s, const struct trace *sim,
              const struct redis_srv *srv, double scale, struct trace *out, char *err, size_t n);

#endif
