/* The services lock algorithms call (lock.h): their node's view of clocks,
 * network, timers and the PRNG, their outcomes, and the server notes. */
#include "engine_int.h"

_Static_assert(LOCK_MAX_SERVERS == SCN_MAX_SERVERS, "lock.h's server limit is the scenario's");
_Static_assert(LOCK_OPT_MAX == SCN_OPT_MAX, "lock.h's option length is the scenario's");

const void *lock_config(struct lock_ctx *x) { return x->e->config; }
int lock_self(struct lock_ctx *x) { return x->node; }
int lock_nservers(struct lock_ctx *x) { return x->e->nservers; }
int lock_server(struct lock_ctx *x, int i) { return i >= 0 && i < x->e->nservers ? x->e->nclients + i : -1; }
int lock_server_index(struct lock_ctx *x, int node) {
    int i = node - x->e->nclients;
    return i >= 0 && i < x->e->nservers ? i : -1;
}
sim_ns lock_now(struct lock_ctx *x, enum lock_clock clock) {
    return local_now(x->e, x->node, clock == LOCK_CLOCK_WALL ? LOCK_CLOCK_WALL : LOCK_CLOCK_MONO);
}
void lock_send(struct lock_ctx *x, int to, const struct lock_msg *m) {
    if (to < 0 || to >= x->e->nnodes || to == x->e->resource) return;
    eng_net_send(x->e, x->node, to, CHAN_LOCK, m, 0);
}
uint64_t lock_timer(struct lock_ctx *x, enum lock_clock clock, sim_ns delay_ns, int timer, uint64_t arg) {
    return eng_timer_add(x->e, x->node, clock == LOCK_CLOCK_WALL ? LOCK_CLOCK_WALL : LOCK_CLOCK_MONO, delay_ns,
                         TIMER_ALGO, timer, arg);
}
uint64_t lock_timer_rearm(struct lock_ctx *x, uint64_t handle, enum lock_clock clock, sim_ns delay_ns, int timer,
                          uint64_t arg) {
    return eng_timer_rearm(x->e, handle, x->node, clock == LOCK_CLOCK_WALL ? LOCK_CLOCK_WALL : LOCK_CLOCK_MONO,
                           delay_ns, TIMER_ALGO, timer, arg);
}
void lock_cancel(struct lock_ctx *x, uint64_t handle) {
    struct timer *t = eng_timer_from_handle(x->e, handle);
    if (t && t->node == x->node) eng_timer_free(x->e, t);
}
uint64_t lock_random(struct lock_ctx *x) { return rng_next(&x->e->rng); }
uint32_t lock_incarnation(struct lock_ctx *x) { return nd(x->e, x->node)->epoch / 2; } /* crash and restart: +2 */
/* The client program of node i, or NULL when i is not a client. */
static struct node *client_of(struct engine *e, int i) {
    struct node *n = nd(e, i);
    return n->kind == TRACE_NODE_CLIENT ? n : NULL;
}

const void *lock_server_state(struct lock_ctx *x, int i) {
    struct engine *e = x->e;
    if (x->node != e->resource || i < 0 || i >= e->nservers) return NULL;
    int node = e->nclients + i;
    if (nd(e, node)->proc != PROC_RUNNING) return NULL;
    return state_of(e, node);
}

int lock_fencing_stated(struct lock_ctx *x) { return x->e->fencing_stated; }

uint64_t lock_read_token(struct lock_ctx *x) {
    const struct node *c = client_of(x->e, x->node);
    return c && c->has_read ? x->e->rw[x->node].read_token : 0;
}

/* Client outcomes: for a client, handed to its program. */
void lock_granted(struct lock_ctx *x, uint64_t token, sim_ns validity_ns) {
    if (client_of(x->e, x->node)) eng_program_granted(x->e, x->node, token, validity_ns);
}
void lock_refused(struct lock_ctx *x) {
    if (client_of(x->e, x->node)) eng_program_refused(x->e, x->node);
}
void lock_release_done(struct lock_ctx *x) {
    if (client_of(x->e, x->node)) eng_program_release_done(x->e, x->node);
}
void lock_lost(struct lock_ctx *x) {
    if (client_of(x->e, x->node)) eng_program_lost(x->e, x->node);
}

void lock_state(struct lock_ctx *x, int state) {
    if (state >= 0 && state < x->e->algo->nstates) x->e->states_reached |= 1ull << state;
}

void lock_note_grant(struct lock_ctx *x, int owner, uint64_t token, sim_ns ttl_ns, sim_ns expires_local) {
    x->e->svc_holder = owner + 1;
    x->e->svc_token = token;
    emit(x->e, TRACE_SRV_GRANT, x->node, owner, token, 0, ttl_ns, expires_local, NULL);
}
void lock_note_deny(struct lock_ctx *x, int requester, int owner) {
    emit(x->e, TRACE_SRV_DENY, x->node, requester, 0, 0, owner, 0, NULL);
}
void lock_note_renew(struct lock_ctx *x, int owner, sim_ns ttl_ns) {
    emit(x->e, TRACE_SRV_RENEW, x->node, owner, 0, 0, ttl_ns, 0, NULL);
}
void lock_note_expire(struct lock_ctx *x, int owner) {
    if (x->e->svc_holder == owner + 1) x->e->svc_holder = 0;
    emit(x->e, TRACE_SRV_EXPIRE, x->node, owner, 0, 0, 0, 0, NULL);
}
void lock_note_delete(struct lock_ctx *x, int requester, int owner) {
    if (x->e->svc_holder == owner + 1) x->e->svc_holder = 0;
    emit(x->e, TRACE_SRV_DELETE, x->node, requester, 0, 0, owner, owner != requester, NULL);
}
void lock_note_keep(struct lock_ctx *x, int requester, int owner) {
    emit(x->e, TRACE_SRV_KEEP, x->node, requester, 0, 0, owner, 0, NULL);
}
void lock_note(struct lock_ctx *x, const char *text, int64_t a, int64_t b) {
    emit(x->e, TRACE_SRV_NOTE, x->node, TRACE_NO_NODE, 0, 0, a, b, text);
}

/* Option values: the scenario parser's own rules (sim/lang/parse.c). */
int lock_parse_duration(const char *text, sim_ns *out) {
    return scn_parse_duration(text, out) == 0 ? 0 : LSIM_EBAD_VALUE;
}
int lock_parse_int(const char *text, int64_t *out) { return scn_parse_int(text, out) == 0 ? 0 : LSIM_EBAD_VALUE; }
int lock_parse_bool(const char *text, int *out) { return scn_parse_bool(text, out) == 0 ? 0 : LSIM_EBAD_VALUE; }
