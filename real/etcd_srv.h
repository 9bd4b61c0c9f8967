/* An etcd of locksim's own for `locksim real --store etcd`: a cluster of
 * one to five members (as many as the scenario's lock servers), started
 * from the Debian package's binary (etcd-server, etcd 3.4), each on its own
 * free loopback client+peer port pair, their data dirs in one temporary
 * folder on tmpfs (etcd 3.4 has no --unsafe-no-fsync; in $LOCKSIM_REAL_TMP
 * when set, else /dev/shm, else /tmp), a 50 ms heartbeat and a 500 ms
 * election timeout so that a lease of 1 s is granted as asked (etcd's
 * minimum lease TTL is 1.5 election timeouts, rounded up to whole seconds:
 * 2 s with the defaults). Every member is stopped by PID, and the folder
 * removed, on every exit path, as redis_srv.h's server is (its signal guard
 * covers these too). A member can be paused (SIGSTOP), resumed, crashed
 * (SIGKILL) and restarted (the same data dir, --initial-cluster-state
 * existing): the scenario's server faults, made real.
 * The cluster is the one of this process (a client process forked by the
 * driver inherits its ports): etcd_srv.c keeps it, as redis_srv.c keeps
 * its guard. */
#ifndef LOCKSIM_ETCD_SRV_H
#define LOCKSIM_ETCD_SRV_H

#include <stddef.h>

#include "redis_srv.h"

#define ETCD_SRV_PORT 22379 /* client port; peer port + 1; the next free pairs up to + 40 */
#define ETCD_SRV_PORTS 40
#define ETCD_SRV_BIN "etcd"
#define ETCD_SRV_HEARTBEAT_MS 50
#define ETCD_SRV_ELECTION_MS 500
#define ETCD_SRV_MAX_MEMBERS 5
/* How long members may take to answer with one leader: 3 members took 1 to 3 s
 * here, and more than 10 s once, beside make test's own load (load average 21). */
#define ETCD_SRV_READY_MS 30000

/* 1 when etcd is on PATH. */
int etcd_srv_available(void);
/* Start a cluster of members (1 to ETCD_SRV_MAX_MEMBERS) and wait until
 * every member answers and names one leader (at most ETCD_SRV_READY_MS). s gets member
 * 0's pid and port and the folder. 0, or an LSIM code with a sentence in
 * err; nothing is left running or on disk after a failure. */
int etcd_srv_start(struct redis_srv *s, int members, char *err, size_t errlen);
/* As etcd_srv_start; with peer_proxy the members advertise the peer proxy's
 * ports (etcd_peer.c), so that etcd_srv_cut can separate them. */
int etcd_srv_start_cut(struct redis_srv *s, int members, int peer_proxy, char *err, size_t errlen);
/* Members a and b (from 0) cut from each other (cut = 1) or joined again
 * (0), from now on; nothing without the peer proxy. */
void etcd_srv_cut(int a, int b, int cut);
/* Stop every member (SIGCONT, SIGTERM, then SIGKILL after 2 s), reap them,
 * remove the folder. */
void etcd_srv_stop(struct redis_srv *s);

/* The cluster's size, and member k's client port (k from 0: S1 is 0). */
int etcd_srv_members(void);
int etcd_srv_port(int k);
/* Milliseconds the last etcd_srv_start took until every member answered. */
long etcd_srv_start_ms(void);

/* Server faults on member k: 0 done, -1 not (k is not running, or is
 * already in that state). pause = SIGSTOP (confirmed), resume = SIGCONT,
 * crash = SIGKILL (reaped), restart = the member started again on its data
 * dir with --initial-cluster-state existing (not waited for). */
int etcd_srv_pause(int k);
int etcd_srv_resume(int k);
int etcd_srv_crash(int k);
int etcd_srv_restart(int k);
/* The member that leads now, by asking the running, unpaused members'
 * /v3/maintenance/status; -1 when none answers with a leader. */
int etcd_srv_leader(void);
/* Every member running and answering with one leader, member lead (-1 =
 * any) leading it (a MoveLeader when another leads): the state every run
 * starts from. 0, or -1 with a sentence in err. */
int etcd_srv_heal(int lead, char *err, size_t errlen);

/* etcd_peer.c: the peer proxy, a child of this process listening on a
 * port per member (into port) that forwards to real_port; a connection
 * between two members cut (etcd_peer_cut) is held until they are joined
 * again. Which member dialed is looked up in /proc. 0, or -1 with a
 * sentence in err (nothing left running). The member's process is told
 * with etcd_peer_member after each start. */
int etcd_peer_start(int n, const int *real_port, int *port, char *err, size_t errlen);
int etcd_peer_running(void);
void etcd_peer_member(int k, pid_t pid);
void etcd_peer_cut(int a, int b, int cut);
void etcd_peer_stop(void);

#endif
