/* The network: message slots, latency and loss (global or per link), and
 * partitions, between sending a message and its EV_DELIVER. */
#include <stdlib.h>

#include "engine_int.h"

static struct slot *slot_new(struct engine *e, uint32_t *idx_out) {
    uint32_t idx;
    if (e->free_slot) {
        idx = e->free_slot - 1;
        e->free_slot = e->slots[idx].u.next_free;
    } else {
        if (e->nslots == e->capslots) {
            struct slot *n = eng_pool_grow(e, e->slots, &e->capslots, sizeof *n);
            if (!n) return NULL;
            e->slots = n;
        }
        idx = e->nslots++;
    }
    *idx_out = idx;
    return &e->slots[idx];
}

static const struct link_state *link_for(const struct engine *e, int from, int to) {
    const struct link_state *best = NULL;
    for (int i = 0; i < e->nlinks; i++) { /* later lines override earlier ones */
        const struct link_state *l = &e->links[i];
        if ((l->from == -1 || l->from == from) && (l->to == -1 || l->to == to)) best = l;
    }
    return best;
}

void eng_net_send(struct engine *e, int from, int to, int chan, const struct lock_msg *m, uint32_t grant) {
    uint32_t id = ++e->next_msg_id;
    emit(e, TRACE_MSG_SEND, from, to, 0, 0, id, m->type, NULL);
    struct scn_latency lat = e->s.latency;
    uint32_t loss = e->s.loss_ppm;
    if (e->nlinks) {
        const struct link_state *l = link_for(e, from, to);
        if (l) {
            lat = l->lat;
            loss = l->loss_ppm;
        }
    }
    if (eng_cut_off(e, from, to)) {
        emit(e, TRACE_MSG_DROP, to, from, 0, 0, id, TRACE_DROP_PARTITION, NULL);
        return;
    }
    if (loss && rng_chance_ppm(&e->rng, loss)) {
        emit(e, TRACE_MSG_DROP, to, from, 0, 0, id, TRACE_DROP_LOSS, NULL);
        return;
    }
    sim_ns delay = lat.min_ns == lat.max_ns ? lat.min_ns : rng_range(&e->rng, lat.min_ns, lat.max_ns);
    uint32_t idx;
    struct slot *s = slot_new(e, &idx);
    if (!s) return;
    /* Field by field: the sender has just written *m so, and a wide copy
     * would wait for those narrow stores to reach the cache. */
    s->u.m.from = from;
    s->u.m.to = to;
    s->u.m.type = m->type;
    s->u.m.req = m->req;
    s->u.m.value = m->value;
    s->u.m.token = m->token;
    s->u.m.ttl_ns = m->ttl_ns;
    s->u.m.a = m->a;
    s->u.m.b = m->b;
    s->id = id;
    s->grant = grant;
    s->to_epoch = nd(e, to)->epoch;
    push(e, e->now + delay, chan == CHAN_RES ? EV_DELIVER_RES : EV_DELIVER, to, idx);
}

int eng_set_link(struct engine *e, int from, int to, const struct scn_link *l) {
    /* A link line may give only one of latency and loss (the parser marks
     * the other negative / above 10^6): that one keeps its current value. */
    const struct link_state *cur = link_for(e, from, to);
    struct scn_latency lat = cur ? cur->lat : e->s.latency;
    uint32_t loss = cur ? cur->loss_ppm : e->s.loss_ppm;
    struct link_state *n = realloc(e->links, (size_t)(e->nlinks + 1) * sizeof *n);
    if (!n) {
        e->tr.oom = 1;
        return -1;
    }
    e->links = n;
    struct link_state *s = &e->links[e->nlinks++];
    s->from = from;
    s->to = to;
    s->lat = l->lat.min_ns < 0 ? lat : l->lat;
    s->loss_ppm = l->loss_ppm > 1000000 ? loss : l->loss_ppm;
    return 0;
}
