/* libFuzzer target: the shard file reader of `locksim merge`
 * (shard_read_stream, cli/shard.c) on arbitrary bytes. A shard file comes
 * from another host or another person: whatever it holds, the reader either
 * accepts it or refuses it with exit status 65 (malformed), 66 or 70 (out
 * of memory), never crashes, and what it accepts is consistent: the records
 * are exactly the slice its header states, each with a failure text. */
#define _GNU_SOURCE /* fmemopen */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    FUZZ_REQUIRE(in != NULL);
    struct shard s;
    int st = shard_read_stream(in, "fuzz.jsonl", &s);
    fclose(in);
    FUZZ_REQUIRE(st == 0 || st == 65 || st == 66 || st == 70);
    if (st == 0) {
        FUZZ_REQUIRE(s.first <= s.end && s.end <= s.runs && s.nsums == s.end - s.first);
        FUZZ_REQUIRE(s.nfiles > 0 && s.nalgos == s.nalgo_names);
        /* A sweep's axes stay within the command line's limits. */
        FUZZ_REQUIRE(s.naxes >= 0 && s.naxes <= FANOUT_MAX_AXES);
        FUZZ_REQUIRE(s.naxes == 0 || fanout_axes_cells(s.axes, s.naxes) > 0);
        for (size_t i = 0; i < s.nsums; i++) FUZZ_REQUIRE(s.sums[i].failures != NULL);
    }
    shard_free(&s);
    return 0;
}
