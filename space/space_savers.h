/*
 * space_savers.h - the memory savers a layout may use (savers.c):
 * Megatron-Core's precision-aware optimizer dtypes, fine-grained
 * activation offloading modules, the savers' tag and the interleaved
 * schedule's micro-batch group. Included by space.h: include that one.
 */
#ifndef TP_SPACE_SAVERS_H
#define TP_SPACE_SAVERS_H

#include <stdint.h>
#include "space_layout.h"

/* The dtypes Megatron-Core's precision-aware optimizer keeps a state in
 * (megatron/training/arguments.py, dtype_map; Transformer Engine's
 * FusedAdam: fp8 is its torch.uint8, an e4m3 Float8Tensor with one scale
 * per tensor). */
typedef enum space_opt_dtype {
    SPACE_OPT_FP32,
    SPACE_OPT_BF16,
    SPACE_OPT_FP16,
    SPACE_OPT_FP8,
    SPACE_OPT_DTYPE_COUNT
} space_opt_dtype;
extern const char *const space_opt_dtype_names[SPACE_OPT_DTYPE_COUNT];
/* Bytes an element of d takes (4, 2, 2, 1). */
double space_opt_dtype_bytes(int d);
/* The name of d, the first for a value out of range. */
const char *space_opt_dtype_name(int d);

/* Megatron-Core's fine-grained activation offloading modules
 * (TransformerConfig.offload_modules, NVIDIA/Megatron-LM@d98e8a64ddf3
 * megatron/core/transformer/transformer_config.py): each offloads the
 * tensors its module saves for the backward. */
enum {
    SPACE_OFF_ATTN_NORM = 1u << 0,  /* the attention's input norm, where
                                       it is a module of its own */
    SPACE_OFF_QKV_LINEAR = 1u << 1, /* the QKV projection (with the norm
                                       Transformer Engine fuses into it) */
    SPACE_OFF_CORE_ATTN = 1u << 2,  /* the attention core */
    SPACE_OFF_ATTN_PROJ = 1u << 3,  /* the output projection (needs
                                       core_attn) */
    SPACE_OFF_MLP_NORM = 1u << 4,   /* the pre-MLP norm, where it is a
                                       module of its own */
    SPACE_OFF_EXPERT_FC1 = 1u << 5, /* the routed experts' FC1 */
    SPACE_OFF_MOE_ACT = 1u << 6,    /* the routed experts' activation and
                                       FC2 */
    SPACE_OFF_COUNT = 7
};
extern const char *const space_off_module_names[SPACE_OFF_COUNT];
/* Reads a list of module names (commas or blanks, optionally in [ ]) into
 * *mask. Returns 0, or 1 + the offset in s of the first word that is not
 * one (1 for an empty list). */
size_t space_off_modules_parse(const char *s, unsigned *mask);
/* mask's names in bit order joined by sep into buf[cap] ("" for none). */
void space_off_modules_str(unsigned mask, const char *sep, char *buf,
                           size_t cap);

/* The savers l uses, as a short tag for layout lines and search output
 * ("" for none), joined by '_': "pa" (precision-aware optimizer;
 * "pa-bf16": its moments in bf16, "pa-bf16-fp8": the first and second
 * moment apart), "oo" (optimizer offload; "oo50": half of it), "ao{N}" (N layers'
 * activations offloaded), "fo" (fine-grained offloading), "g{N}"
 * (micro-batch groups of N, interleaved layouts only). space_layout_tag
 * appends it. Returns buf. */
char *space_savers_tag(const space_layout *l, char *buf, size_t cap);

/* Whether l uses any memory saver (not counting mb_group). */
int space_layout_has_saver(const space_layout *l);

/* The interleaved schedule's micro-batch group of l: mb_group, or PP
 * where 0. */
int64_t space_mb_group(const space_layout *l);

#endif
