/* The protected resource: a stock with a version, read and written by
 * messages; a write is decided by the algorithm's rule or the scenario's. */
#include "engine_int.h"

/* resource check=reads+writes (with fencing on): the resource checks the
 * token of every operation, as Chubby's servers check a sequencer (Burrows,
 * "The Chubby lock service", OSDI 2006, section 2.4). A read carrying no
 * token, or a token lower than the highest seen, is refused; one at or above
 * it is served and raises the highest seen, so a stale holder is caught at
 * its read, and its write is refused even before the new holder's first
 * write has landed. Returns 0 (the operation may go on) or the refusal. */
static int fence_op(struct engine *e, uint64_t token) {
    if (!e->s.check_reads || !e->s.fencing) return 0;
    if (token == 0) return TRACE_WRITE_REJECTED_NOTOKEN;
    if (token < e->max_token) return TRACE_WRITE_REJECTED_STALE;
    return 0;
}

/* resource guard=owner: the resource lives in the lock service, and a write
 * is a transaction that checks the lock first, as etcd's
 * Txn(If(CreateRevision(lock) == mine)).Then(Put(...)) does, or an UPDATE in
 * the transaction that holds the row lock (the seed: "database row locks,
 * where the lock and the data share a transaction and cannot diverge").
 * Applied only while the lock service records the writer as the holder,
 * under the writer's token when the service issues tokens. */
static int guard_op(const struct engine *e, int client, uint64_t token) {
    if (!e->s.guard_owner) return 0;
    if (e->svc_holder != client + 1 || (e->svc_token && token != e->svc_token)) return TRACE_WRITE_REJECTED_NOT_OWNER;
    return 0;
}

void eng_resource_recv(struct engine *e, const struct slot *s) {
    int client = s->u.m.from;
    struct lock_msg r = {0};
    r.req = s->u.m.req;
    if (s->u.m.type == RES_READ) {
        int refused = fence_op(e, s->u.m.token);
        r.type = RES_READ_REPLY;
        r.token = e->max_token; /* the highest token it has accepted (or seen on a read) */
        if (refused) {
            emit(e, TRACE_SRV_NOTE, client, e->resource, s->u.m.token, s->grant, (int64_t)s->u.m.token,
                 (int64_t)e->max_token,
                 refused == TRACE_WRITE_REJECTED_NOTOKEN
                         ? "read refused by the resource: it carries no fencing token"
                         : "read refused by the resource: its token is lower than one already seen");
            r.value = (uint64_t)refused;
        } else {
            if (e->s.check_reads && e->s.fencing && s->u.m.token > e->max_token) e->max_token = s->u.m.token;
            emit(e, TRACE_READ, e->resource, client, 0, s->grant, e->stock, e->version, NULL);
            r.a = e->stock;
            r.b = e->version;
        }
    } else if (s->u.m.type == RES_WRITE) {
        struct lock_write w = {.client = client,
                               .token = s->u.m.token,
                               .value = s->u.m.a,
                               .read_version = s->u.m.b,
                               .version = e->version,
                               .stock = e->stock};
        /* With reads checked, a token below one seen on a read is stale
         * whatever else decides; then the algorithm's rule, or the scenario's. */
        int result = guard_op(e, client, s->u.m.token);
        if (!result) result = fence_op(e, s->u.m.token);
        if (!result) result = algo_resource_write(e, &w);
        if (result < 0) { /* no rule of the algorithm's own: the scenario's */
            result = TRACE_WRITE_ACCEPTED;
            if (e->s.fencing && s->u.m.token == 0) result = TRACE_WRITE_REJECTED_NOTOKEN;
            else if (e->s.fencing && s->u.m.token < e->max_token) result = TRACE_WRITE_REJECTED_STALE;
        }
        if (result == TRACE_WRITE_ACCEPTED) {
            e->stock = s->u.m.a;
            e->version++;
            if (s->u.m.token > e->max_token) e->max_token = s->u.m.token;
        }
        /* An absolute write (`write set=V`) is marked "set" in the trace: the
         * checker counts it apart from the read-modify-writes that sell a unit. */
        emit(e, TRACE_WRITE, e->resource, client, s->u.m.token, s->grant, s->u.m.a, result,
             s->u.m.value == 1 ? TRACE_WRITE_SET_TEXT : NULL);
        r.type = RES_WRITE_REPLY;
        r.a = result;
    } else {
        return;
    }
    eng_net_send(e, e->resource, client, CHAN_RES, &r, 0);
}
