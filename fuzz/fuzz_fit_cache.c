/*
 * fuzz_fit_cache.c - fuzz target of the fit cache's payload readers
 * (est_models_from_payload, est_comm_from_payload; estimator/cache.c
 * checks a file's header and checksum before them, so what is fuzzed
 * here is a payload that got past a good seal). The input edits a good
 * payload rather than being one, so the fuzzer starts inside the format:
 *
 *   byte 0: bit 0 picks the entry (0: the MI300X's operator fits, 1: the
 *           DGX B200's collective tables, both small), bit 1 truncates
 *           the payload to the length in bytes 1-4 (mod its size + 1);
 *   then:   5-byte edits, a little-endian 32-bit offset (mod the size)
 *           and a byte xor-ed in there.
 *
 * The good payload (no edits) must load; any edited one must load or be
 * refused with a reason, never crash or read out of bounds; what loads
 * is then asked for times, as the estimator would ask.
 */
#include "fuzz.h"
#include "est_int.h"

#include <stdlib.h>
#include <string.h>

static void payloads(est_wbuf *ops, est_wbuf *comm, const hw_gpu **g,
                     const hw_system **y)
{
    tp_err e = {0};
    est_cache_enable(0); /* fitted here, not read from a cache */
    *g = hw_find_gpu(fuzz_builtin_db(), "mi300x", &e);
    *y = hw_find_system(fuzz_builtin_db(), "dgx-b200", &e);
    fuzz_check(*g && *y);
    est_models *m = est_models_open(*g, 0, &e);
    est_comm *c = est_comm_open(*y, &e);
    fuzz_check(m && c);
    est_models_payload(m, ops);
    est_comm_payload(c, comm);
    est_models_free(m);
    est_comm_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static est_wbuf good[2];
    static const hw_gpu *g;
    static const hw_system *y;
    if (!g) payloads(&good[0], &good[1], &g, &y);
    if (size < 1) return 0;
    int which = data[0] & 1;
    size_t n = good[which].n, at = 1;
    if (data[0] & 2 && size >= 5) {
        uint32_t cut;
        memcpy(&cut, data + 1, 4);
        n = cut % (n + 1);
        at = 5;
    }
    unsigned char *p = malloc(n ? n : 1); /* exactly n: ASan sees overruns */
    fuzz_check(p != NULL);
    memcpy(p, good[which].p, n);
    int edited = n != good[which].n;
    for (; at + 5 <= size && n > 0; at += 5) {
        uint32_t off;
        memcpy(&off, data + at, 4);
        p[off % n] ^= data[at + 4];
        edited |= data[at + 4] != 0;
    }
    char why[200] = "";
    if (which == 0) {
        est_models *m = est_models_from_payload(g, p, n, why, sizeof why);
        fuzz_check(m || (why[0] && edited));
        static const est_op_kind kinds[] = {EST_OP_GEMM, EST_OP_FLASH_ATTN,
                                            EST_OP_LAYERNORM, EST_OP_GELU,
                                            EST_OP_ADAM};
        for (size_t k = 0; m && k < sizeof kinds / sizeof kinds[0]; k++)
            for (int64_t s = 128; s <= 16384; s *= 4) {
                est_op op;
                memset(&op, 0, sizeof op);
                op.kind = kinds[k];
                op.dtype = HW_BF16;
                op.b = 1, op.m = s, op.n = s, op.k = s;
                op.heads = op.kv_heads = 16, op.sq = op.sk = s;
                op.head_dim = 128, op.causal = 1;
                op.rows = s, op.cols = s;
                est_time t;
                est_models_time(m, &op, &t);
            }
        est_models_free(m);
    } else {
        est_comm *c = est_comm_from_payload(y, p, n, why, sizeof why);
        fuzz_check(c || (why[0] && edited));
        for (int i = 0; c && i < est_comm_table_count(c); i++) {
            const est_coll_table *t = est_comm_table_at(c, i);
            int64_t ranks = (int64_t)t->nodes * t->per_node;
            if (ranks > 1 << 20) continue; /* no system is that large */
            est_group grp = {(int)ranks, t->per_node, t->nodes, 0};
            char w[256];
            if (est_group_check(y, &grp, w, sizeof w)) continue;
            for (double b = 1; b < 1e12; b *= 97)
                est_coll_time(c, y, t->kind, b, &grp);
        }
        est_comm_free(c);
    }
    free(p);
    return 0;
}
