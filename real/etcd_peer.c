/* The etcd cluster's peer proxy (real/etcd_srv.h): a child process on
 * every member's advertised peer URL that forwards the members' Raft
 * traffic (and their lease forwarding) to the member's real peer port, and
 * holds it between two members a partition separates. etcd dials a peer
 * from an ephemeral loopback port and has no option for its source address,
 * so the proxy learns which member a connection comes from by looking its
 * socket up: the dialer's end in /proc/net/tcp (local port = the accepted
 * connection's peer port), then that socket's inode among the members'
 * open files (/proc/PID/fd); one not traced to a member is refused
 * (closed), so a cut never leaks. A cut connection is not read and not written
 * (its bytes wait in the kernel's buffers, as a real partition's wait in
 * TCP's retransmissions) until the heal. */
#include "etcd_srv.h"
#include "real_int.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the driver tells the proxy through its control pipe. */
struct peer_ctl {
    int32_t kind; /* PEER_PID: member a's process is v; PEER_CUT: a and b cut (v = 1) or joined (0) */
    int32_t a, b, v;
};
enum { PEER_PID, PEER_CUT };

/* One direction of a forwarded connection: what is read from one fd and
 * not yet written to the other. */
struct pdir {
    char buf[16384];
    size_t len;
};

/* A connection from member src to member dst's peer port. */
struct pconn {
    int fd[2];        /* 0: the dialer's side (accepted), 1: the member's (connected) */
    int src;          /* the dialing member */
    int dst;          /* the member dialed */
    struct pdir d[2]; /* d[k]: read from fd[k], written to fd[1 - k] */
    int open;
};

static struct {
    int n;
    int lfd[ETCD_SRV_MAX_MEMBERS];       /* listening on the advertised peer ports */
    int port[ETCD_SRV_MAX_MEMBERS];      /* those ports */
    int real_port[ETCD_SRV_MAX_MEMBERS]; /* each member's own peer port */
    pid_t member[ETCD_SRV_MAX_MEMBERS];  /* each member's process, 0 = none */
    char cut[ETCD_SRV_MAX_MEMBERS][ETCD_SRV_MAX_MEMBERS];
    struct pconn *c;
    int nc, cap;
    /* the driver's side */
    pid_t pid; /* the proxy, 0 = none */
    int ctl;   /* the control pipe's write end, -1 = none */
} P = {.ctl = -1};

/* The member whose process holds the dialing end of accepted connection
 * fd (to our port), or -1. */
static int source_member(int fd, int port) {
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    if (getpeername(fd, (struct sockaddr *)&a, &al) != 0) return -1;
    unsigned sport = ntohs(a.sin_port);
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f) return -1;
    char line[512];
    unsigned long inode = 0;
    while (!inode && fgets(line, sizeof line, f)) {
        unsigned la, lp, ra, rp;
        unsigned long ino;
        if (sscanf(line, " %*d: %x:%x %x:%x %*x %*x:%*x %*x:%*x %*x %*u %*u %lu", &la, &lp, &ra, &rp, &ino) == 5 &&
            lp == sport && rp == (unsigned)port)
            inode = ino;
    }
    fclose(f);
    if (!inode) return -1;
    char want[64];
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    for (int m = 0; m < P.n; m++) {
        if (!P.member[m]) continue;
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%ld/fd", (long)P.member[m]);
        DIR *d = opendir(dir);
        struct dirent *e;
        int found = 0;
        while (d && !found && (e = readdir(d)) != NULL) {
            char link[64];
            ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
            if (k <= 0) continue;
            link[k] = 0;
            found = strcmp(link, want) == 0;
        }
        if (d) closedir(d);
        if (found) return m;
    }
    return -1;
}

static void drain_ctl(int ctl) {
    struct peer_ctl m;
    while (read(ctl, &m, sizeof m) == (ssize_t)sizeof m) {
        if (m.a < 0 || m.a >= P.n) continue;
        if (m.kind == PEER_PID) P.member[m.a] = (pid_t)m.v;
        else if (m.kind == PEER_CUT && m.b >= 0 && m.b < P.n) P.cut[m.a][m.b] = P.cut[m.b][m.a] = (char)m.v;
    }
}

static int held(const struct pconn *c) { return P.cut[c->src][c->dst]; }

static void close_conn(struct pconn *c) {
    close(c->fd[0]);
    close(c->fd[1]);
    c->open = 0;
}

static void peer_main(int ctl) {
    struct pollfd *pf = NULL;
    int pcap = 0;
    for (;;) {
        int need = 1 + P.n + 2 * P.nc;
        if (need > pcap) {
            struct pollfd *w = realloc(pf, (size_t)need * 2 * sizeof *w);
            if (!w) _exit(5);
            pf = w;
            pcap = need * 2;
        }
        int np = 0;
        pf[np++] = (struct pollfd){ctl, POLLIN, 0};
        for (int k = 0; k < P.n; k++) pf[np++] = (struct pollfd){P.lfd[k], POLLIN, 0};
        int polled = P.nc;
        for (int i = 0; i < polled; i++) {
            struct pconn *c = &P.c[i];
            for (int k = 0; k < 2; k++) {
                short ev = 0;
                if (c->open && !held(c)) ev = c->d[k].len ? 0 : POLLIN;    /* read when drained */
                if (c->open && !held(c) && c->d[1 - k].len) ev |= POLLOUT; /* the other way's bytes */
                pf[np++] = (struct pollfd){c->open ? c->fd[k] : -1, ev, 0};
            }
        }
        int r = poll(pf, (nfds_t)np, 100);
        if (r < 0 && errno != EINTR) _exit(5);
        if (r <= 0) continue;
        if (pf[0].revents & (POLLIN | POLLHUP)) {
            if ((pf[0].revents & POLLHUP) && !(pf[0].revents & POLLIN)) _exit(0); /* the driver is gone */
            drain_ctl(ctl);
        }
        for (int i = 0; i < polled; i++) {
            struct pconn *c = &P.c[i];
            for (int k = 0; k < 2 && c->open; k++) {
                short re = pf[1 + P.n + 2 * i + k].revents;
                if (held(c)) break;
                if ((re & POLLOUT) && c->d[1 - k].len) { /* fd[k] takes what came from fd[1 - k] */
                    struct pdir *d = &c->d[1 - k];
                    ssize_t w = write(c->fd[k], d->buf, d->len);
                    if (w < 0 && errno != EAGAIN && errno != EINTR) {
                        close_conn(c);
                        break;
                    }
                    if (w > 0) {
                        memmove(d->buf, d->buf + w, d->len - (size_t)w);
                        d->len -= (size_t)w;
                    }
                }
                if ((re & (POLLIN | POLLHUP | POLLERR)) && c->d[k].len == 0) {
                    ssize_t got = read(c->fd[k], c->d[k].buf, sizeof c->d[k].buf);
                    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
                        close_conn(c);
                        break;
                    }
                    if (got > 0) c->d[k].len = (size_t)got;
                }
            }
        }
        for (int k = 0; k < P.n; k++) {
            if (!(pf[1 + k].revents & POLLIN)) continue;
            int cfd = accept(P.lfd[k], NULL, NULL);
            if (cfd < 0) continue;
            int sfd = real_connect_loopback(P.real_port[k]);
            if (sfd < 0) { /* the member is down: as a refused connection */
                close(cfd);
                continue;
            }
            drain_ctl(ctl); /* a member started since: its pid first */
            int src = source_member(cfd, P.port[k]);
            /* Not found at once: 5 of 144 connections in two runs; 1 still
             * not after 5 tries of 1 ms (presumably closed by its dialer
             * already: /proc/net/tcp shows a closed socket with inode 0),
             * which is refused. */
            for (int tries = 0; src < 0 && tries < 5; tries++) {
                struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL);
                drain_ctl(ctl);
                src = source_member(cfd, P.port[k]);
            }
            if (src < 0) { /* not known to come from a member: refused, as a cut must never leak */
                close(cfd);
                close(sfd);
                continue;
            }
            int slot = -1;
            for (int i = 0; i < P.nc && slot < 0; i++)
                if (!P.c[i].open) slot = i;
            if (slot < 0) {
                if (P.nc == P.cap) {
                    int cap = P.cap ? P.cap * 2 : 32;
                    struct pconn *w = realloc(P.c, (size_t)cap * sizeof *w);
                    if (!w) _exit(5);
                    P.c = w;
                    P.cap = cap;
                }
                slot = P.nc++;
            }
            struct pconn *c = &P.c[slot];
            int one = 1;
            setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fcntl(cfd, F_SETFL, O_NONBLOCK);
            fcntl(sfd, F_SETFL, O_NONBLOCK);
            c->fd[0] = cfd;
            c->fd[1] = sfd;
            c->src = src;
            c->dst = k;
            c->d[0].len = c->d[1].len = 0;
            c->open = 1;
        }
    }
}

int etcd_peer_start(int n, const int *real_port, int *port, char *err, size_t errlen) {
    memset(P.cut, 0, sizeof P.cut);
    memset(P.member, 0, sizeof P.member);
    P.n = n;
    for (int k = 0; k < n; k++) P.lfd[k] = -1;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        P.real_port[k] = real_port[k];
        P.lfd[k] = real_listen_loopback(&P.port[k]);
        port[k] = P.port[k];
        if (P.lfd[k] < 0) {
            snprintf(err, errlen, "the etcd peer proxy could not listen on 127.0.0.1: %s", strerror(errno));
            rc = -1;
        }
    }
    int ctl[2] = {-1, -1};
    if (rc == 0 && pipe(ctl) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        rc = -1;
    }
    if (rc == 0) {
        sigset_t old;
        redis_srv_block_signals(&old);
        pid_t pid = fork();
        if (pid == 0) {
            real_child_init(&old);
            signal(SIGPIPE, SIG_IGN); /* a killed member's socket: the write fails, the proxy goes on */
            close(ctl[1]);
            fcntl(ctl[0], F_SETFL, O_NONBLOCK);
            peer_main(ctl[0]);
            _exit(0);
        }
        if (pid > 0) redis_srv_guard_child(pid);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
            snprintf(err, errlen, "fork: %s", strerror(errno));
            rc = -1;
        }
        P.pid = pid > 0 ? pid : 0;
        close(ctl[0]);
        P.ctl = ctl[1];
    }
    for (int k = 0; k < n; k++) /* the proxy's now */
        if (P.lfd[k] >= 0) close(P.lfd[k]);
    if (rc) etcd_peer_stop();
    return rc;
}

static void send_ctl(int32_t kind, int32_t a, int32_t b, int32_t v) {
    if (P.ctl < 0) return;
    struct peer_ctl m = {kind, a, b, v};
    ssize_t w;
    do w = write(P.ctl, &m, sizeof m);
    while (w < 0 && errno == EINTR);
}

int etcd_peer_running(void) { return P.pid > 0; }
void etcd_peer_member(int k, pid_t pid) { send_ctl(PEER_PID, k, 0, (int32_t)pid); }
void etcd_peer_cut(int a, int b, int cut) { send_ctl(PEER_CUT, a, b, cut); }

void etcd_peer_stop(void) {
    if (P.pid > 0) {
        kill(P.pid, SIGKILL);
        waitpid(P.pid, NULL, 0);
        redis_srv_guard_forget(P.pid);
    }
    if (P.ctl >= 0) close(P.ctl);
    P.pid = 0;
    P.ctl = -1;
}
