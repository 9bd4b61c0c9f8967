/* The protected resource: a stock with a version, read and written by
 * messages; a write is decided by the algorithm's rule or the scenario's. */
#include "engine_int.h"

void eng_resource_recv(struct engine *e, const struct slot *s) {
    int client = s->u.m.from;
    struct lock_msg r = {0};
    r.req = s->u.m.req;
    if (s->u.m.type == RES_READ) {
        emit(e, TRACE_READ, e->resource, client, 0, s->grant, e->stock, e->version, NULL);
        r.type = RES_READ_REPLY;
        r.a = e->stock;
        r.b = e->version;
        r.token = e->max_token; /* the highest token it has accepted */
    } else if (s->u.m.type == RES_WRITE) {
        struct lock_write w = {.client = client, .token = s->u.m.token, .value = s->u.m.a,
                               .read_version = s->u.m.b, .version = e->version, .stock = e->stock};
        int result = algo_resource_write(e, &w);
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
        emit(e, TRACE_WRITE, e->resource, client, s->u.m.token, s->grant, s->u.m.a, result, NULL);
        r.type = RES_WRITE_REPLY;
        r.a = result;
    } else {
        return;
    }
    eng_net_send(e, e->resource, client, CHAN_RES, &r, 0);
}
