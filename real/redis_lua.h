/* The Lua scripts of the lock that the Redis backends of `locksim real`
 * share (store_redis.c, store_redlock.c, store_repl.c): each runs
 * atomically in redis-server, as the research's demos ran them
 * (../shared/research/real-services.md, section 3). */
#ifndef LOCKSIM_REDIS_LUA_H
#define LOCKSIM_REDIS_LUA_H

/* fenced-lease's acquire: SET NX PX and, when it took, the next token. */
#define LUA_FENCED_ACQUIRE \
    "if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return redis.call('INCR',KEYS[2]) " \
    "else return false end"
/* compare-and-delete: remove the key only while it holds this value. */
#define LUA_CAD "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('DEL',KEYS[1]) else return 0 end"
/* A plain DEL that also says whose entry it removed (the same effect as DEL). */
#define LUA_DEL "local v = redis.call('GET',KEYS[1]) redis.call('DEL',KEYS[1]) return v"

#endif
